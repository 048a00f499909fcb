/* load.c -- the load generator against the model: a matrix of
 * connections, depths and line sizes, without an error. */
#include "internal.h"

/* ---- the load generator against the model -------------------------------- */


static const struct load_case {
    int conns, depth;
    size_t size;
} load_cases[] = {
    { 1, 1, 1 },     { 1, 1, 64 },     { 1, 8, 64 },    { 1, 8, 65536 },
    { 64, 1, 64 },   { 64, 8, 1 },     { 64, 8, 4096 }, { 64, 1, 65536 },
    { 512, 1, 64 },  { 512, 8, 64 },   { 512, 8, 1000 },{ 512, 1, 65536 },
};

/* THREADLAB_SUITE_LOAD_BYTES: the most payload a load case moves, for the
 * runs under a fault shim (tests/faults/run.sh), where every few bytes
 * cost a system call: a case then keeps its line size and depth, and has
 * as many lines (and at most as many connections) as fit. Unset or 0: no
 * cap. A value that is not a number is refused, not taken for 0. */
static uint64_t load_bytes_cap(void)
{
    const char *v = getenv("THREADLAB_SUITE_LOAD_BYTES");
    if (!v || !*v)
        return 0;
    char *end;
    errno = 0;
    unsigned long long cap = strtoull(v, &end, 10);
    ck_assert_msg(errno == 0 && *end == '\0' && v[0] != '-',
                  "THREADLAB_SUITE_LOAD_BYTES=%s: not a number of bytes", v);
    return (uint64_t)cap;
}

START_TEST(load_matrix_no_errors)
{
    const struct load_case *lc = &load_cases[_i];
    struct test_server t;
    struct load_opts o;
    struct load_report *r = malloc(sizeof(*r));
    char target[32];

    start_default(&t);
    load_opts_init(&o);
    snprintf(target, sizeof(target), "127.0.0.1:%u", t.port);
    char err[128];
    ck_assert_int_eq(net_parse_hostport(target, &o.addr, &o.addr_len, err,
                                        sizeof(err)), 0);
    o.target = target;
    o.conns = lc->conns;
    o.depth = lc->depth;
    o.line_bytes = lc->size;
    o.duration_s = 0;
    o.total_lines = (uint64_t)lc->conns * (uint64_t)lc->depth * 4;
    /* 64 KiB lines: 2048 of them (128 MiB each way) at most; under the
     * sanitizers, which run for correctness and copy every byte many times
     * slower, one per connection. */
    uint64_t big_lines = SANITIZED ? (uint64_t)lc->conns : 2048;
    if (lc->size >= 65536 && o.total_lines > big_lines)
        o.total_lines = big_lines;
    uint64_t cap = load_bytes_cap();
    if (cap > 0 && o.total_lines * lc->size > cap) {
        o.total_lines = cap / lc->size > 0 ? cap / lc->size : 1;
        if ((uint64_t)o.conns > o.total_lines)
            o.conns = (int)o.total_lines;
    }
    o.threads = o.conns > 1 ? 2 : 1;
    /* A line's timeout guards against a hang, not a slow machine: the pool
     * queues connections past its threads, and a queued one waits its
     * turn however long the others take. */
    o.timeout_s = LOAD_LINE_TIMEOUT_S;
    ck_assert_int_eq(load_run(&o, r), 0);
    ck_assert_msg(r->errors_total == 0,
                  "%d conns depth %d size %zu: %llu errors (connect %llu reset "
                  "%llu closed %llu mismatch %llu busy %llu timeout %llu)",
                  o.conns, lc->depth, lc->size,
                  (unsigned long long)r->errors_total,
                  (unsigned long long)r->errors[LOAD_ERR_CONNECT],
                  (unsigned long long)r->errors[LOAD_ERR_RESET],
                  (unsigned long long)r->errors[LOAD_ERR_CLOSED],
                  (unsigned long long)r->errors[LOAD_ERR_MISMATCH],
                  (unsigned long long)r->errors[LOAD_ERR_BUSY],
                  (unsigned long long)r->errors[LOAD_ERR_TIMEOUT]);
    ck_assert_uint_eq(r->lines_ok, o.total_lines);
    ck_assert_uint_eq(r->conns_opened, (uint64_t)o.conns);
    ck_assert_uint_eq(r->bytes_received, o.total_lines * lc->size);
    free(r);
    ts_stop(&t);
}
END_TEST

void ms_add_load_tests(TCase *load)
{
    tcase_add_loop_test(load, load_matrix_no_errors, 0,
                        (int)(sizeof(load_cases) / sizeof(load_cases[0])));
}
