/* check_load.c -- the load generator and the histogram it reports from.
 *
 * The load generator is the judge of every model, so it is tested against
 * servers that misbehave on purpose: one that flips a byte, one that swaps
 * two lines, one that never answers, and an address where nobody listens.
 */
#include <check.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "load/results.h"
#include "load/sweep.h"
#include "load/load.h"
#include "net/net.h"
#include "probe/histogram.h"
#include "model_suite.h"
#include "testnet.h"

/* ---- histogram -------------------------------------------------------- */

START_TEST(hist_buckets_cover_every_value_once)
{
    for (unsigned b = 1; b < HIST_BUCKETS; b++)
        ck_assert_uint_eq(hist_bucket_low(b), hist_bucket_high(b - 1) + 1);
    ck_assert_uint_eq(hist_bucket_high(HIST_BUCKETS - 1), UINT64_MAX);
    uint64_t probes[] = { 0, 1, 15, 16, 17, 31, 32, 33, 1000, 123456789,
                          UINT64_MAX / 3, UINT64_MAX };
    for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
        unsigned b = hist_bucket_of(probes[i]);
        ck_assert_uint_le(hist_bucket_low(b), probes[i]);
        ck_assert_uint_ge(hist_bucket_high(b), probes[i]);
    }
}
END_TEST

START_TEST(hist_percentiles_within_one_sixteenth)
{
    static struct hist h;
    hist_init(&h);
    for (uint64_t v = 1; v <= 100000; v++)
        hist_record(&h, v * 1000);           /* 1 us .. 100 ms, uniform */
    double pcts[] = { 50, 90, 99, 99.9 };
    for (int i = 0; i < 4; i++) {
        double exact = pcts[i] / 100 * 100000 * 1000;
        double got = (double)hist_percentile(&h, pcts[i]);
        ck_assert_msg(got >= exact && got <= exact * 1.0625,
                      "p%g: %g, exact %g", pcts[i], got, exact);
    }
    ck_assert_uint_eq(hist_percentile(&h, 100), 100000000);
    ck_assert_uint_eq(atomic_load(&h.max), 100000000);
}
END_TEST

/* ---- lines ------------------------------------------------------------ */

START_TEST(hist_record_n_counts_a_batch_as_n_values)
{
    static struct hist batch, one_by_one;
    hist_init(&batch);
    hist_init(&one_by_one);
    uint64_t values[] = { 3, 1000, 123456789 }, counts[] = { 16, 0, 5 };
    for (int i = 0; i < 3; i++) {
        hist_record_n(&batch, values[i], counts[i]);
        for (uint64_t k = 0; k < counts[i]; k++)
            hist_record(&one_by_one, values[i]);
    }
    for (unsigned b = 0; b < HIST_BUCKETS; b++)
        ck_assert_uint_eq(atomic_load(&batch.counts[b]), atomic_load(&one_by_one.counts[b]));
    ck_assert_uint_eq(atomic_load(&batch.counts[hist_bucket_of(3)]), 16);
    /* A batch of none is no value: it must not raise the max either. */
    ck_assert_uint_eq(atomic_load(&batch.max), 123456789);
    hist_record_n(&batch, 999999999999, 0);
    ck_assert_uint_eq(atomic_load(&batch.max), 123456789);
}
END_TEST

START_TEST(lines_are_reproducible_and_well_formed)
{
    struct load_opts o;
    load_opts_init(&o);
    o.line_bytes = 300;
    char a[300], b[300], c[300];
    for (uint64_t seq = 0; seq < 2000; seq++) {
        ck_assert_uint_eq(load_make_line(&o, 7, seq, a), 300);
        load_make_line(&o, 7, seq, b);
        ck_assert(memcmp(a, b, 300) == 0);
        ck_assert(a[299] == '\n');
        ck_assert_ptr_null(memchr(a, '\n', 299));
        ck_assert(a[0] != '!');
        load_make_line(&o, 7, seq + 1, c);
        ck_assert(memcmp(a, c, 300) != 0);   /* a swap would be seen */
    }
    o.line_bytes = 1;
    ck_assert_uint_eq(load_make_line(&o, 0, 0, a), 1);
    ck_assert(a[0] == '\n');
}
END_TEST

START_TEST(mix_makes_commands_in_proportion)
{
    struct load_opts o;
    char buf[64];
    int cpu = 0, sleep_ = 0, task = 0;
    load_opts_init(&o);
    o.cpu_pct = 10;
    o.cpu_us = 200;
    o.sleep_pct = 1;
    o.sleep_ms = 50;
    o.task_pct = 50;
    o.task_us = 300;
    for (uint64_t seq = 0; seq < 100000; seq++) {
        size_t n = load_make_line(&o, 3, seq, buf);
        cpu += n == 9 && memcmp(buf, "!cpu 200\n", 9) == 0;
        sleep_ += n == 10 && memcmp(buf, "!sleep 50\n", 10) == 0;
        task += n == 10 && memcmp(buf, "!task 300\n", 10) == 0;
    }
    ck_assert_int_ge(task, 49000);
    ck_assert_int_le(task, 51000);
    ck_assert_int_ge(cpu, 9500);
    ck_assert_int_le(cpu, 10500);
    ck_assert_int_ge(sleep_, 850);
    ck_assert_int_le(sleep_, 1150);
}
END_TEST

/* ---- misbehaving servers ---------------------------------------------- */

enum fault { FAULT_FLIP_BYTE, FAULT_SWAP_LINES, FAULT_SILENT };

struct fake_server {
    int listen_fd;
    uint16_t port;
    enum fault fault;
    pthread_t thread;
};

/* Serve one connection: echo whole lines, spoiling them as asked. */
static void *fake_main(void *arg)
{
    struct fake_server *f = arg;
    int fd = accept(f->listen_fd, NULL, NULL);
    char buf[4096], held[256];
    size_t len = 0, held_len = 0;
    int lines = 0;
    if (fd < 0)
        return NULL;
    for (;;) {
        ssize_t n = read(fd, buf + len, sizeof(buf) - len);
        if (n <= 0)
            break;
        len += (size_t)n;
        if (f->fault == FAULT_SILENT) {
            len = 0;
            continue;
        }
        char *nl;
        while ((nl = memchr(buf, '\n', len))) {
            size_t line = (size_t)(nl - buf) + 1;
            lines++;
            if (f->fault == FAULT_FLIP_BYTE && lines == 5)
                buf[0] ^= 1;
            if (f->fault == FAULT_SWAP_LINES && lines == 3) {
                memcpy(held, buf, line);     /* hold line 3, send it after 4 */
                held_len = line;
            } else {
                (void)!write(fd, buf, line);
                if (held_len) {
                    (void)!write(fd, held, held_len);
                    held_len = 0;
                }
            }
            memmove(buf, buf + line, len - line);
            len -= line;
        }
    }
    close(fd);
    return NULL;
}

static void fake_start(struct fake_server *f, enum fault fault)
{
    struct net_acceptor a;
    struct net_listen_opts lo = { .bind = "127.0.0.1" };
    ck_assert_int_eq(net_acceptor_open(&a, &lo, false), 0);
    close(a.spare_fd);
    f->listen_fd = a.listen_fd;
    f->port = net_acceptor_port(&a);
    f->fault = fault;
    pthread_create(&f->thread, NULL, fake_main, f);
}

static void run_against(uint16_t port, double timeout_s, struct load_report *r)
{
    struct load_opts o;
    char target[32], err[64];
    load_opts_init(&o);
    snprintf(target, sizeof(target), "127.0.0.1:%u", port);
    ck_assert_int_eq(net_parse_hostport(target, &o.addr, &o.addr_len, err,
                                        sizeof(err)), 0);
    o.target = target;
    o.line_bytes = 32;
    o.depth = 4;           /* a swap needs two lines in flight */
    o.total_lines = 20;
    o.duration_s = 0;
    o.timeout_s = timeout_s;
    ck_assert_int_eq(load_run(&o, r), 0);
}

/* Run 20 lines against a fake server with `fault`; the report goes to r. */
static void run_fault(enum fault fault, double timeout_s, struct load_report *r)
{
    struct fake_server f;
    fake_start(&f, fault);
    run_against(f.port, timeout_s, r);
    pthread_join(f.thread, NULL);
    close(f.listen_fd);
}

START_TEST(a_flipped_byte_is_a_mismatch)
{
    struct load_report *r = malloc(sizeof(*r));
    run_fault(FAULT_FLIP_BYTE, 5, r);
    ck_assert_uint_eq(r->errors[LOAD_ERR_MISMATCH], 1);
    ck_assert_uint_eq(r->lines_ok, 4);
    free(r);
}
END_TEST

START_TEST(swapped_lines_are_a_mismatch)
{
    struct load_report *r = malloc(sizeof(*r));
    run_fault(FAULT_SWAP_LINES, 5, r);
    ck_assert_uint_eq(r->errors[LOAD_ERR_MISMATCH], 1);
    ck_assert_uint_eq(r->lines_ok, 2);
    free(r);
}
END_TEST

START_TEST(a_silent_server_ends_at_the_timeout)
{
    struct load_report *r = malloc(sizeof(*r));
    uint64_t start = now_ms();
    run_fault(FAULT_SILENT, 0.5, r);
    uint64_t took = now_ms() - start;
    ck_assert_uint_eq(r->errors[LOAD_ERR_TIMEOUT], 1);
    ck_assert_uint_eq(r->lines_ok, 0);
    ck_assert_msg(took >= 500 && took < 5000, "took %llu ms",
                  (unsigned long long)took);
    free(r);
}
END_TEST

START_TEST(nobody_listening_is_a_connect_error)
{
    struct fake_server f;
    struct load_report *r = malloc(sizeof(*r));
    fake_start(&f, FAULT_SILENT);
    uint16_t port = f.port;
    shutdown(f.listen_fd, SHUT_RDWR);     /* wakes the fake's accept */
    pthread_join(f.thread, NULL);
    close(f.listen_fd);
    run_against(port, 1, r);
    ck_assert_uint_eq(r->errors[LOAD_ERR_CONNECT], 1);
    ck_assert_uint_eq(r->conns_opened, 0);
    free(r);
}
END_TEST

/* The result a sweep reads from the load's report r (through its JSON),
 * for a server whose fate was "ok". */
static struct result result_of(const struct load_opts *o, const struct load_report *r)
{
    char *json = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&json, &len);
    load_report_json(o, r, f);
    fclose(f);
    struct result res = { .model = "multireactor", .fate = "ok" };
    ck_assert(result_parse_load_json(json, &res));
    free(json);
    return res;
}

/* A point of a sweep that answered no line and counted no error (the
 * 10,000-connection multireactor on a loaded machine) says why in the
 * table: the load's report, through the JSON the sweep reads, to the row. */
START_TEST(a_sweep_row_of_zeros_says_why)
{
    struct load_opts o = { .target = "127.0.0.1:1", .conns = 10000, .depth = 1,
                           .line_bytes = 64 };
    struct load_report *r = calloc(1, sizeof(*r));
    r->conns_opened = 2300;
    r->elapsed_s = 5.0;
    struct result res = result_of(&o, r);
    struct sweep_row row;
    sweep_row_from_result(&res, 10000, &row);
    char *table = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&table, &len);
    sweep_print_table(f, SWEEP_CONNS, &row, 1);
    fclose(f);
    ck_assert_msg(strstr(table, "  ok; no line answered: 2300 of 10000 conns opened in 5.0 s\n"),
                  "%s", table);
    r->conns_opened = 10000;                       /* all open, nothing sent */
    ck_assert_str_eq(result_of(&o, r).fate, "ok; no line sent in 5.0 s");
    r->elapsed_s = 0;                              /* no reply: no time to give */
    ck_assert_str_eq(result_of(&o, r).fate, "ok; no line sent");
    r->elapsed_s = 5.0;
    r->lines_sent = 64;                            /* sent, none answered */
    ck_assert_str_eq(result_of(&o, r).fate, "ok; 64 lines sent, none answered in 5.0 s");
    r->errors_total = 1;                           /* an error is its own reason */
    ck_assert_str_eq(result_of(&o, r).fate, "ok");
    free(table);
    free(r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("load");
    TCase *h = tcase_create("histogram");
    tcase_add_test(h, hist_buckets_cover_every_value_once);
    tcase_add_test(h, hist_percentiles_within_one_sixteenth);
    tcase_add_test(h, hist_record_n_counts_a_batch_as_n_values);
    suite_add_tcase(s, h);
    TCase *l = tcase_create("lines");
    tcase_add_test(l, lines_are_reproducible_and_well_formed);
    tcase_add_test(l, mix_makes_commands_in_proportion);
    tcase_add_test(l, a_sweep_row_of_zeros_says_why);
    suite_add_tcase(s, l);
    TCase *f = tcase_create("faults");
    tcase_set_timeout(f, 20);
    tcase_add_test(f, a_flipped_byte_is_a_mismatch);
    tcase_add_test(f, swapped_lines_are_a_mismatch);
    tcase_add_test(f, a_silent_server_ends_at_the_timeout);
    tcase_add_test(f, nobody_listening_is_a_connect_error);
    suite_add_tcase(s, f);

    return ts_run(s);
}
