/* check_fuzz.c -- replay the fuzz corpus (tests/fuzz/corpus/) and a
 * stream of generated inputs through the decoder and session invariants.
 * `make fuzz` runs the same target under libFuzzer for longer. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_session.h"
#include "model_suite.h"

START_TEST(corpus_replays_clean)
{
    const char *dir = "tests/fuzz/corpus";
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "no corpus at %s (run from the repository root)", dir);
    int files = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char path[512];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        ck_assert_ptr_nonnull(f);
        uint8_t buf[65536];
        size_t n = fread(buf, 1, sizeof(buf), f);
        fclose(f);
        fuzz_session_one(buf, n);       /* aborts on a broken invariant */
        files++;
    }
    closedir(d);
    ck_assert_int_ge(files, 8);
}
END_TEST

START_TEST(generated_inputs_hold_the_invariants)
{
    /* Lines, commands, CRLF, NUL and junk, mixed by a fixed seed. */
    static const char *const pieces[] = {
        "hello\n", "!cpu 5\n", "!sleep 0\n", "!who\n", "!quit\n", "!cpu x\n",
        "\r\n", "\n", "!sleep 60001\n", "abc", "\0\0", "!who extra\n",
        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    };
    unsigned seed = 99;
    uint8_t buf[4096];
    for (int round = 0; round < 20000; round++) {
        size_t n = 3;
        buf[0] = (uint8_t)rand_r(&seed);
        buf[1] = (uint8_t)rand_r(&seed);
        buf[2] = (uint8_t)rand_r(&seed);
        int count = rand_r(&seed) % 40;
        for (int k = 0; k < count; k++) {
            const char *p = pieces[rand_r(&seed) % (sizeof(pieces) / sizeof(pieces[0]))];
            size_t len = p[0] == '\0' ? 2 : strlen(p);
            if (n + len > sizeof(buf))
                break;
            memcpy(buf + n, p, len);
            n += len;
        }
        fuzz_session_one(buf, n);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fuzz");
    TCase *tc = tcase_create("fuzz");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, corpus_replays_clean);
    tcase_add_test(tc, generated_inputs_hold_the_invariants);
    suite_add_tcase(s, tc);
    return ts_run(s);
}
