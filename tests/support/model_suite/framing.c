/* framing.c -- byte-exact echo of random binary lines in random chunks,
 * and endless junk then a run too long. */
#include "internal.h"

/* ---- byte-exact echo under random framing ---------------------------------- */

struct chunk_sender {
    int fd;
    const char *data;
    size_t len;
    unsigned seed;
};

/* Sends data in chunks of random size, so lines arrive split anywhere. */
static void *send_in_random_chunks(void *arg)
{
    struct chunk_sender *c = arg;
    size_t off = 0;
    while (off < c->len) {
        size_t n = 1 + (size_t)rand_r(&c->seed) % 8192;
        if (n > c->len - off)
            n = c->len - off;
        ssize_t w = send(c->fd, c->data + off, n, MSG_NOSIGNAL);
        if (w <= 0 && errno != EINTR)
            break;                          /* closed: the reader will say */
        if (w > 0)
            off += (size_t)w;
    }
    return NULL;
}

/* Random binary lines (every byte value but '\n'), written and read in
 * random chunk sizes by two threads: every byte comes back, in order. */
START_TEST(random_binary_lines_in_random_chunks)
{
    enum { LINES = 3000, LONGEST = 3000 };
    struct test_server t;
    start_default(&t);
    char *data = malloc((size_t)LINES * (LONGEST + 1));
    unsigned seed = 42;
    size_t len = 0;
    for (int i = 0; i < LINES; i++) {
        int n = rand_r(&seed) % LONGEST;
        for (int k = 0; k < n; k++) {
            char b = (char)rand_r(&seed);
            data[len++] = b == '\n' ? '\r' : b;
        }
        data[len++] = '\n';
    }
    int fd = tn_connect(t.port);
    struct chunk_sender cs = { fd, data, len, 7 };
    pthread_t writer;
    pthread_create(&writer, NULL, send_in_random_chunks, &cs);
    char *got = malloc(len);
    size_t have = 0;
    unsigned rseed = 9;
    while (have < len) {
        size_t want = 1 + (size_t)rand_r(&rseed) % 8192;
        if (want > len - have)
            want = len - have;
        ssize_t n = recv(fd, got + have, want, 0);
        if (n < 0 && errno == EINTR)
            continue;
        ck_assert_msg(n > 0, "the echo ended after %zu of %zu bytes (%s)", have, len,
                      n == 0 ? "EOF" : strerror(errno));
        have += (size_t)n;
    }
    pthread_join(writer, NULL);
    /* One assertion, not one per byte: each ck_assert reports to Check's
     * parent through a pipe, and 4.4 million of them took longer than the
     * case's timeout on a loaded machine. */
    size_t first_diff = 0;
    while (first_diff < len && got[first_diff] == data[first_diff])
        first_diff++;
    ck_assert_msg(first_diff == len, "byte %zu of %zu differs", first_diff, len);
    free(got);
    free(data);
    close(fd);
    ts_stop(&t);
}
END_TEST

/* ---- junk ---------------------------------------------------------------------- */

struct junk_reader {
    int fd;
    char *got;
    size_t cap, have;
    ssize_t last;          /* 0: EOF; < 0: -errno */
};

static void *read_until_end(void *arg)
{
    struct junk_reader *r = arg;
    for (;;) {
        ssize_t n = recv(r->fd, r->got + r->have, r->cap - r->have, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0 || r->have + (size_t)n == r->cap) {
            r->last = n < 0 ? -errno : n == 0 ? 0 : 1;
            if (n > 0)
                r->have += (size_t)n;
            return NULL;
        }
        r->have += (size_t)n;
    }
}

/* Eight megabytes of random bytes (a '\n' now and then, as junk has), then
 * a run longer than --max-line: every junk line is echoed exactly, then
 * "!err line-too-long" and EOF; another client never notices; memory stays
 * bounded. */
START_TEST(endless_junk_then_a_run_too_long)
{
    enum { JUNK = 8 << 20, MAX = 4096 };
    struct test_server t;
    struct server_opts o;
    char line[64];
    ts_opts(&o);
    o.max_line = MAX;
    ts_start(&t, model_under_test, &o);
    size_t len = JUNK + 2 * MAX;
    char *data = malloc(len);
    unsigned seed = 3;
    size_t last_newline = 0, run = 0;
    for (size_t i = 0; i < JUNK; i++) {
        data[i] = (char)rand_r(&seed);
        if (++run == MAX)                    /* junk, but no line too long */
            data[i] = '\n';
        if (data[i] == '\n') {
            last_newline = i + 1;
            run = 0;
        }
    }
    memset(data + JUNK, 'z', 2 * MAX);
    struct junk_reader r = { .cap = len + 64 };
    r.got = malloc(r.cap);
    long rss_before = tn_rss_kb();

    int other = tn_connect(t.port);
    r.fd = tn_connect(t.port);
    pthread_t reader, writer;
    struct chunk_sender cs = { r.fd, data, len, 11 };
    pthread_create(&reader, NULL, read_until_end, &r);
    pthread_create(&writer, NULL, send_in_random_chunks, &cs);
    pthread_join(writer, NULL);
    pthread_join(reader, NULL);

    size_t echoed = last_newline;              /* the complete lines */
    size_t err_len = strlen(ECHO_ERR_LINE_TOO_LONG);
    ck_assert_msg(r.last == 0, "the junk connection ended with %s, not EOF",
                  r.last < 0 ? strerror((int)-r.last) : "more data");
    ck_assert_msg(r.have == echoed + err_len, "got %zu bytes, wanted %zu + the error",
                  r.have, echoed);
    ck_assert_msg(memcmp(r.got, data, echoed) == 0, "the junk lines came back changed");
    ck_assert(memcmp(r.got + echoed, ECHO_ERR_LINE_TOO_LONG, err_len) == 0);
    tn_send_str(other, "unaffected\n");
    ck_assert_int_eq(tn_read_line(other, line, sizeof(line)), 11);
    ck_assert(SANITIZED || tn_rss_kb() - rss_before < 16 * 1024);
    close(r.fd);
    close(other);
    free(r.got);
    free(data);
    ts_stop(&t);
}
END_TEST

void ms_add_framing_tests(TCase *proto, TCase *faults)
{
    tcase_add_test(proto, random_binary_lines_in_random_chunks);
    tcase_add_test(faults, endless_junk_then_a_run_too_long);
}
