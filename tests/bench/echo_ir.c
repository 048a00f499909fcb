/* echo_ir.c -- the echo module alone, for counting its instructions per
 * line under callgrind (docs/performance.md). Built by `make peers`.
 *
 *   valgrind --tool=callgrind build/peers/echo_ir READS
 *
 * Feeds READS reads of 16 64-byte lines each through the session, as a
 * server at depth 16 does, and answers every line. Two runs (1000 and
 * 11000 reads) and the difference of their totals over 160 000 lines give
 * the cost per line without start-up; it includes a 1 KiB memcpy per read,
 * standing in for the kernel's copy into the decoder's buffer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "echo/session.h"

enum { LINES_PER_READ = 16, LINE_BYTES = 64 };

int main(int argc, char **argv)
{
    long reads = argc > 1 ? atol(argv[1]) : 10000;
    if (reads < 1 || reads > 100000000) {
        fprintf(stderr, "usage: echo_ir READS (1..100000000)\n");
        return 2;
    }
    struct echo_session s;
    if (echo_session_init(&s, "bench", 1, 0) < 0)
        return 1;
    char batch[LINES_PER_READ * LINE_BYTES];
    for (int i = 0; i < LINES_PER_READ; i++) {
        memset(batch + i * LINE_BYTES, 'a' + i, LINE_BYTES - 1);
        batch[i * LINE_BYTES + LINE_BYTES - 1] = '\n';
    }
    size_t answered = 0;
    for (long b = 0; b < reads; b++) {
        size_t room;
        char *p = echo_session_space(&s, &room);
        if (!p || room < sizeof(batch))
            return 1;
        memcpy(p, batch, sizeof(batch));
        echo_session_commit(&s, sizeof(batch));
        struct echo_reply r;
        while (echo_session_next(&s, "bench", SIZE_MAX, &r)) {
            echo_do_work(&r);
            answered += r.len;
        }
    }
    echo_session_free(&s);
    /* Printed, so that the compiler cannot drop the work. */
    printf("%zu bytes answered\n", answered);
    return answered == (size_t)reads * sizeof(batch) ? 0 : 1;
}
