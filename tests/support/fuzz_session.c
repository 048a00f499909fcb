/* fuzz_session.c -- see fuzz_session.h. */
#include "fuzz_session.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "echo/session.h"

#define CHECK(cond)                                                          \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "fuzz invariant failed: %s (%s:%d)\n", #cond,    \
                    __FILE__, __LINE__);                                     \
            abort();                                                         \
        }                                                                    \
    } while (0)

/* One reply, against the request lines it answers (they start at line):
 * their bytes rebuild the input; each one ends in its only '\n', within
 * max_line, and a run's lines after the first are plain echoes. The reply
 * is the echo, the !who answer asked for, or the bad-argument error. */
static void check_reply(const struct echo_reply *r, const uint8_t *line, size_t max_line)
{
    size_t at = 0;
    for (size_t i = 0; i < r->lines; i++) {
        const uint8_t *nl = memchr(line + at, '\n', r->request_len - at);
        CHECK(nl != NULL);
        size_t one = (size_t)(nl - (line + at)) + 1;
        CHECK(one - 1 <= max_line);
        CHECK(i == 0 || line[at] != '!');
        at += one;
    }
    CHECK(at == r->request_len);
    CHECK(r->lines == 1 || (r->len == r->request_len && r->work == ECHO_WORK_NONE));
    static const char who[] = "!who model=fuzz thread=fuzz-thread conn=1\n";
    if (r->error == ECHO_ERROR_BAD_ARGUMENT)
        CHECK(r->len == strlen(ECHO_ERR_BAD_ARGUMENT) &&
              memcmp(r->data, ECHO_ERR_BAD_ARGUMENT, r->len) == 0);
    else if (r->len == sizeof(who) - 1 && memcmp(r->data, who, r->len) == 0)
        CHECK(memcmp(line, "!who", 4) == 0);    /* asked for */
    else                                        /* an echo */
        CHECK(r->len == r->request_len && memcmp(r->data, line, r->len) == 0);
    if (r->work == ECHO_WORK_CPU)
        CHECK(r->work_amount <= ECHO_CPU_MAX_US);
    if (r->work == ECHO_WORK_SLEEP)
        CHECK(r->work_amount <= ECHO_SLEEP_MAX_MS);
}

int fuzz_session_one(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    size_t max_line = 1 + data[0];
    uint32_t chunk_seed = (uint32_t)data[1] << 8 | data[2];
    const uint8_t *in = data + 3;
    size_t len = size - 3;

    struct echo_session s;
    if (echo_session_init(&s, "fuzz", 1, max_line) < 0)
        return 0;
    size_t rebuilt_len = 0, fed = 0;   /* input bytes accounted for by lines */
    bool stopped = false;

    while (fed < len && !stopped) {
        /* The chunk sizes come from the input too: 1..16 bytes, or all. */
        chunk_seed = chunk_seed * 1103515245u + 12345u;
        size_t want = (chunk_seed >> 16) % 17;
        want = want == 0 ? len - fed : want;
        size_t room;
        char *space = echo_session_space(&s, &room);
        CHECK(space != NULL);
        /* A live decoder always has room: a full buffer must already have
         * been reported as a line too long (which stops this loop). */
        CHECK(room > 0);
        size_t n = want < room ? want : room;
        if (n > len - fed)
            n = len - fed;
        memcpy(space, in + fed, n);
        echo_session_commit(&s, n);
        fed += n;

        struct echo_reply r;
        /* The run limit from the chunk seed too: 1 (a reply per line), or
         * up to 7 lines, or no limit. */
        size_t max_lines = (chunk_seed >> 8) % 3 == 0 ? 1
                         : (chunk_seed >> 8) % 3 == 1 ? 7 : SIZE_MAX;
        while (echo_session_next(&s, "fuzz-thread", max_lines, &r)) {
            CHECK(r.data != NULL && r.len > 0);
            CHECK(r.lines >= 1 && r.lines <= max_lines);
            if (r.error == ECHO_ERROR_LINE_TOO_LONG) {
                CHECK(r.close_after && r.lines == 1);
                stopped = true;
                break;
            }
            CHECK(rebuilt_len + r.request_len <= len);
            check_reply(&r, in + rebuilt_len, max_line);
            rebuilt_len += r.request_len;
            if (r.close_after) {        /* !quit: nothing after it */
                stopped = true;
                break;
            }
        }
    }
    if (!stopped) {
        /* Everything up to the last '\n' fed came out as lines. */
        size_t last_nl = 0;
        for (size_t i = 0; i < fed; i++)
            if (in[i] == '\n')
                last_nl = i + 1;
        CHECK(rebuilt_len == last_nl);
    }
    echo_session_free(&s);
    return 0;
}
