/* check_echo.c -- the decoder and the session logic, without threads or
 * sockets: every split point, limits, binary bytes, every command. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "echo/decoder.h"
#include "echo/session.h"
#include "net/clock.h"
#include "model_suite.h"

/* Feed `len` bytes of `in` to a decoder in two pieces cut at `cut`, and
 * collect every line it returns, concatenated, into out. */
static size_t decode_in_two(const char *in, size_t len, size_t cut,
                            size_t max_line, char *out, int *lines,
                            enum echo_decode_result *last)
{
    struct echo_decoder d;
    size_t out_len = 0;
    ck_assert_int_eq(echo_decoder_init(&d, max_line), 0);
    *lines = 0;
    size_t pieces[2][2] = { { 0, cut }, { cut, len } };
    for (int p = 0; p < 2; p++) {
        size_t from = pieces[p][0], to = pieces[p][1];
        while (from < to) {
            size_t room;
            char *space = echo_decoder_space(&d, &room);
            if (!room)
                break;
            size_t n = to - from < room ? to - from : room;
            memcpy(space, in + from, n);
            echo_decoder_commit(&d, n);
            from += n;
            const char *line;
            size_t line_len;
            while ((*last = echo_decoder_next(&d, &line, &line_len)) ==
                   ECHO_DECODE_LINE) {
                memcpy(out + out_len, line, line_len);
                out_len += line_len;
                (*lines)++;
            }
            if (*last == ECHO_DECODE_TOO_LONG)
                goto done;
        }
    }
done:
    echo_decoder_free(&d);
    return out_len;
}

START_TEST(every_split_point_of_many_lines)
{
    /* Empty lines, CRLF, NUL, high bytes, a trailing partial line. */
    static const char in[] = "one\n\ntwo\r\nth\0ree\n\xff\xfe\x80\nfour\npartial";
    size_t len = sizeof(in) - 1;
    size_t complete = (size_t)(strrchr(in + 20, '\n') - in) + 1;
    char out[128];
    int lines;
    enum echo_decode_result last;

    for (size_t cut = 0; cut <= len; cut++) {
        size_t n = decode_in_two(in, len, cut, 0, out, &lines, &last);
        ck_assert_msg(n == complete, "cut at %zu: %zu bytes out", cut, n);
        ck_assert_msg(memcmp(out, in, complete) == 0, "cut at %zu: bytes differ", cut);
        ck_assert_int_eq(lines, 6);
        ck_assert_int_eq(last, ECHO_DECODE_NEED_MORE);
    }
}
END_TEST

START_TEST(line_of_exactly_max_passes_max_plus_one_fails)
{
    enum { MAX = 10000 };         /* beyond the first buffer: it must grow */
    char *in = malloc(MAX + 3), *out = malloc(MAX + 3);
    int lines;
    enum echo_decode_result last;

    memset(in, 'a', MAX);
    in[MAX] = '\n';
    for (size_t cut = 0; cut <= MAX + 1; cut += 997) {
        size_t n = decode_in_two(in, MAX + 1, cut, MAX, out, &lines, &last);
        ck_assert_uint_eq(n, MAX + 1);
        ck_assert_int_eq(lines, 1);
    }
    memset(in, 'b', MAX + 1);
    in[MAX + 1] = '\n';
    decode_in_two(in, MAX + 2, 5000, MAX, out, &lines, &last);
    ck_assert_int_eq(lines, 0);
    ck_assert_int_eq(last, ECHO_DECODE_TOO_LONG);

    /* Too long even before the '\n' arrives: no need to wait for it. */
    decode_in_two(in, MAX + 1, 3, MAX, out, &lines, &last);
    ck_assert_int_eq(last, ECHO_DECODE_TOO_LONG);
    free(in);
    free(out);
}
END_TEST

START_TEST(lines_before_a_long_one_are_still_returned)
{
    char in[64];
    char out[64];
    int lines;
    enum echo_decode_result last;
    strcpy(in, "ok\nalso ok\nthis one is far too long\n");
    size_t n = decode_in_two(in, strlen(in), 7, 10, out, &lines, &last);
    ck_assert_int_eq(lines, 2);
    ck_assert_uint_eq(n, 11);
    ck_assert_int_eq(last, ECHO_DECODE_TOO_LONG);
}
END_TEST

START_TEST(partial_line_moves_to_front_once)
{
    struct echo_decoder d;
    const char *line;
    size_t len, room;
    ck_assert_int_eq(echo_decoder_init(&d, 100), 0);
    /* Fill the 101-byte buffer with 90 bytes of lines and a 11-byte partial. */
    char *p = echo_decoder_space(&d, &room);
    ck_assert_uint_eq(room, 101);
    memset(p, 'x', 101);
    for (int i = 0; i < 9; i++)
        p[i * 10 + 9] = '\n';
    echo_decoder_commit(&d, 101);
    for (int i = 0; i < 9; i++)
        ck_assert_int_eq(echo_decoder_next(&d, &line, &len), ECHO_DECODE_LINE);
    ck_assert_int_eq(echo_decoder_next(&d, &line, &len), ECHO_DECODE_NEED_MORE);
    ck_assert_uint_eq(echo_decoder_pending(&d), 11);
    p = echo_decoder_space(&d, &room);
    ck_assert_uint_eq(room, 90);             /* the partial line moved */
    p[0] = '\n';
    echo_decoder_commit(&d, 1);
    ck_assert_int_eq(echo_decoder_next(&d, &line, &len), ECHO_DECODE_LINE);
    ck_assert_uint_eq(len, 12);
    ck_assert(line[11] == '\n' && line[0] == 'x');
    echo_decoder_free(&d);
}
END_TEST

/* ---- commands ---------------------------------------------------------- */

static struct echo_reply decide(const char *s)
{
    struct echo_reply r;
    echo_decide(s, strlen(s), &r);
    return r;
}

START_TEST(plain_lines_echo_themselves)
{
    const char *cases[] = { "\n", "hello\n", "!\n", "!cpux 5\n", "!whois\n",
                            "!unknown command\n", " !cpu 5\n", "a\r\n" };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct echo_reply r = decide(cases[i]);
        ck_assert_msg(r.data == cases[i] && r.len == strlen(cases[i]),
                      "'%s' was not echoed", cases[i]);
        ck_assert_int_eq(r.work, ECHO_WORK_NONE);
        ck_assert(!r.close_after);
        ck_assert_int_eq(r.error, ECHO_ERROR_NONE);
    }
}
END_TEST

START_TEST(cpu_and_sleep_directives)
{
    struct echo_reply r = decide("!cpu 1500\n");
    ck_assert_int_eq(r.work, ECHO_WORK_CPU);
    ck_assert_uint_eq(r.work_amount, 1500);
    ck_assert_uint_eq(r.len, 10);            /* then echoed */

    r = decide("!cpu 10000000\n");
    ck_assert_int_eq(r.work, ECHO_WORK_CPU);
    ck_assert_uint_eq(r.work_amount, 10000000);

    r = decide("!sleep 60000\r\n");          /* CRLF accepted, CR echoed */
    ck_assert_int_eq(r.work, ECHO_WORK_SLEEP);
    ck_assert_uint_eq(r.work_amount, 60000);
    ck_assert_uint_eq(r.len, 14);

    r = decide("!sleep 0\n");
    ck_assert_int_eq(r.work, ECHO_WORK_SLEEP);
    ck_assert_uint_eq(r.work_amount, 0);
}
END_TEST

/* !task is decoded as !cpu is, bounded by the same maximum, and echoed. */
START_TEST(task_directive)
{
    struct echo_reply r = decide("!task 200\n");
    ck_assert_int_eq(r.work, ECHO_WORK_TASK);
    ck_assert_uint_eq(r.work_amount, 200);
    ck_assert_uint_eq(r.len, 10);
    ck_assert(memcmp(r.data, "!task 200\n", 10) == 0);

    r = decide("!task 10000000\r\n");
    ck_assert_int_eq(r.work, ECHO_WORK_TASK);
    ck_assert_uint_eq(r.work_amount, ECHO_CPU_MAX_US);

    r = decide("!taskx 5\n");              /* another word: echoed */
    ck_assert_int_eq(r.work, ECHO_WORK_NONE);
    ck_assert_int_eq(r.error, ECHO_ERROR_NONE);
}
END_TEST

START_TEST(bad_arguments)
{
    const char *cases[] = { "!cpu\n", "!cpu \n", "!cpu -1\n", "!cpu 1x\n",
                            "!cpu 10000001\n", "!cpu 99999999999999999999\n",
                            "!sleep 60001\n", "!sleep\n", "!sleep 1 2\n",
                            "!sleep  5\n", "!who me\n", "!quit now\n",
                            "!task\n", "!task 10000001\n", "!task -5\n", "!task 5 5\n" };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct echo_reply r = decide(cases[i]);
        ck_assert_msg(r.error == ECHO_ERROR_BAD_ARGUMENT, "'%s' accepted", cases[i]);
        ck_assert_str_eq(r.data, ECHO_ERR_BAD_ARGUMENT);
        ck_assert_int_eq(r.work, ECHO_WORK_NONE);
        ck_assert(!r.close_after);            /* the connection stays open */
    }
}
END_TEST

/* Echoed lines in a row come back as one reply, the input's own bytes; a
 * run stops before a line that may be a command, an incomplete line, a
 * line too long, and at the caller's limit. */
static void feed(struct echo_session *s, const char *in)
{
    for (size_t left = strlen(in), n; left > 0; left -= n, in += n) {
        size_t room;
        char *p = echo_session_space(s, &room);
        ck_assert(p && room > 0);
        n = left < room ? left : room;
        memcpy(p, in, n);
        echo_session_commit(s, n);
    }
}

static void expect_reply(struct echo_session *s, size_t max_lines, const char *data,
                         size_t lines)
{
    struct echo_reply r;
    ck_assert_msg(echo_session_next(s, "t", max_lines, &r), "no reply, wanted '%s'", data);
    ck_assert_uint_eq(r.lines, lines);
    ck_assert_uint_eq(r.len, strlen(data));
    ck_assert_msg(memcmp(r.data, data, r.len) == 0, "reply '%.*s', wanted '%s'",
                  (int)r.len, r.data, data);
    if (r.error == ECHO_ERROR_NONE && r.data != s->who)   /* an echo: its request */
        ck_assert_uint_eq(r.request_len, r.len);
}

START_TEST(plain_lines_in_a_row_are_one_reply)
{
    struct echo_session s;
    struct echo_reply r;
    ck_assert_int_eq(echo_session_init(&s, "bio", 7, 40), 0);
    feed(&s, "a\nbb\nccc\n!who\nd\n!x\ne\nf");
    expect_reply(&s, SIZE_MAX, "a\nbb\nccc\n", 3);  /* stops before "!who" */
    expect_reply(&s, SIZE_MAX, "!who model=bio thread=t conn=7\n", 1);
    expect_reply(&s, SIZE_MAX, "d\n", 1);           /* "!x" may be a command */
    expect_reply(&s, SIZE_MAX, "!x\n", 1);          /* decided alone: an echo */
    expect_reply(&s, SIZE_MAX, "e\n", 1);           /* "f" is incomplete */
    ck_assert(!echo_session_next(&s, "t", SIZE_MAX, &r));
    feed(&s, "\ng\nh\ni\n");
    expect_reply(&s, 2, "f\ng\n", 2);               /* the caller's limit */
    expect_reply(&s, 0, "h\n", 1);                  /* 0 counts as 1 */
    feed(&s, "j\n0123456789012345678901234567890123");  /* 34 bytes, no end yet */
    expect_reply(&s, SIZE_MAX, "i\nj\n", 2);
    ck_assert(!echo_session_next(&s, "t", SIZE_MAX, &r));
    feed(&s, "4567890");                             /* now 41: over 40 */
    expect_reply(&s, SIZE_MAX, ECHO_ERR_LINE_TOO_LONG, 1);
    ck_assert(!echo_session_next(&s, "t", SIZE_MAX, &r));
    echo_session_free(&s);
}
END_TEST

START_TEST(session_who_quit_and_too_long)
{
    struct echo_session s;
    struct echo_reply r;
    size_t room;
    ck_assert_int_eq(echo_session_init(&s, "bio", 42, 20), 0);

    const char *in = "!who\n!quit\nnever\n";
    char *p = echo_session_space(&s, &room);
    memcpy(p, in, strlen(in));
    echo_session_commit(&s, strlen(in));
    ck_assert(echo_session_next(&s, "conn-42", SIZE_MAX, &r));
    ck_assert_uint_eq(r.len, strlen("!who model=bio thread=conn-42 conn=42\n"));
    ck_assert(memcmp(r.data, "!who model=bio thread=conn-42 conn=42\n", r.len) == 0);
    ck_assert(echo_session_next(&s, "conn-42", SIZE_MAX, &r));
    ck_assert(r.close_after);
    ck_assert(memcmp(r.data, "!quit\n", 6) == 0);
    ck_assert(!echo_session_next(&s, "conn-42", SIZE_MAX, &r));   /* nothing after quit */
    echo_session_free(&s);

    ck_assert_int_eq(echo_session_init(&s, "bio", 1, 20), 0);
    p = echo_session_space(&s, &room);
    memset(p, 'z', 21);
    echo_session_commit(&s, 21);
    ck_assert(echo_session_next(&s, "t", SIZE_MAX, &r));
    ck_assert_int_eq(r.error, ECHO_ERROR_LINE_TOO_LONG);
    ck_assert(r.close_after);
    ck_assert_str_eq(r.data, ECHO_ERR_LINE_TOO_LONG);
    ck_assert(!echo_session_next(&s, "t", SIZE_MAX, &r));
    echo_session_free(&s);
}
END_TEST

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

START_TEST(cpu_burn_uses_cpu_time)
{
    uint64_t before = thread_cpu_ns();
    echo_burn_cpu_us(20000);
    uint64_t used = thread_cpu_ns() - before;
    ck_assert_msg(used >= 20000000u, "burned only %llu ns", (unsigned long long)used);
}
END_TEST

/* echo_do_work skips a reply without work inline: the replies that have
 * work must still get it. A lower bound on CPU the code burns, not a speed
 * test. */
START_TEST(do_work_runs_cpu_and_sleep_work)
{
    struct echo_reply r = decide("!cpu 20000\n");
    uint64_t before = thread_cpu_ns();
    echo_do_work(&r);
    uint64_t used = thread_cpu_ns() - before;
    ck_assert_msg(used >= 20000000u, "!cpu 20000 burned only %llu ns", (unsigned long long)used);
    r = decide("!sleep 200\n");
    uint64_t t0_ns = now_ns();
    echo_do_work(&r);
    double slept_ms = (double)(now_ns() - t0_ns) / 1e6;
    ck_assert_msg(slept_ms >= 200.0, "!sleep 200 slept %.1f ms", slept_ms);
    r = decide("!task 20000\n");          /* a thread without a loop burns it */
    before = thread_cpu_ns();
    echo_do_work(&r);
    used = thread_cpu_ns() - before;
    ck_assert_msg(used >= 20000000u, "!task 20000 burned only %llu ns", (unsigned long long)used);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("echo");
    TCase *dec = tcase_create("decoder");
    tcase_add_test(dec, every_split_point_of_many_lines);
    tcase_add_test(dec, line_of_exactly_max_passes_max_plus_one_fails);
    tcase_add_test(dec, lines_before_a_long_one_are_still_returned);
    tcase_add_test(dec, partial_line_moves_to_front_once);
    suite_add_tcase(s, dec);
    TCase *cmd = tcase_create("commands");
    tcase_add_test(cmd, plain_lines_echo_themselves);
    tcase_add_test(cmd, cpu_and_sleep_directives);
    tcase_add_test(cmd, bad_arguments);
    tcase_add_test(cmd, session_who_quit_and_too_long);
    tcase_add_test(cmd, plain_lines_in_a_row_are_one_reply);
    tcase_add_test(cmd, task_directive);
    tcase_add_test(cmd, cpu_burn_uses_cpu_time);
    tcase_add_test(cmd, do_work_runs_cpu_and_sleep_work);
    suite_add_tcase(s, cmd);

    return ts_run(s);
}
