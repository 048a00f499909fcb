/* words.c -- the demo's words: its table and its narrator, in both
 * languages. */
#include "check_view.h"

/* ---- the demo's words: its table and its narrator, in both languages ------ */

/* The display column where the last column (the server's fate) begins on
 * a table row: after the last run of two spaces. */
static int fate_column(const char *row)
{
    const char *last = NULL;
    for (const char *p = strstr(row, "  "); p; p = strstr(p + 1, "  "))
        last = p;
    ck_assert_msg(last, "no two spaces before the last column: '%s'", row);
    while (*last == ' ')
        last++;
    char head[512];
    snprintf(head, sizeof(head), "%.*s", (int)(last - row), row);
    return msg_width(head);
}

/* The rows of a table printed into memory, in lang. */
static int table_rows(const char *lang, bool wide, char rows[][512], int max)
{
    struct result r[2] = {
        { .model = "multireactor", .have_load = true, .lines_per_s = 123456, .p50_us = 51,
          .p99_us = 1000, .p999_us = 2500, .peak_threads = 12, .peak_rss_kb = 4096,
          .cpu_s = 1.5, .errors = 0, .fate = "ok" },
        { .model = "bio", .have_load = false, .peak_threads = 3, .fate = "crashed: SIGKILL" },
    };
    ck_assert_int_eq(msg_set_lang(lang), 0);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    (wide ? results_print_wide_table : results_print_table)(out, r, 2);
    ck_assert_int_eq(fclose(out), 0);
    int n = 0;
    for (char *save = NULL, *line = strtok_r(text, "\n", &save); line && n < max;
         line = strtok_r(NULL, "\n", &save))
        snprintf(rows[n++], 512, "%s", line);
    free(text);
    return n;
}

START_TEST(the_table_is_laid_out_by_display_width_in_both_languages)
{
    unsetenv("LC_ALL");
    setenv("LANG", "C", 1);
    ck_assert_int_eq(msg_set_lang("zh"), 0);
    msg_setup_locale();                    /* C.UTF-8, as the demo has it */
    for (int wide = 0; wide <= 1; wide++) {
        char en[4][512], zh[4][512];
        ck_assert_int_eq(table_rows("en", wide, en, 4), 4);
        ck_assert_int_eq(table_rows("zh", wide, zh, 4), 4);
        ck_assert_msg(strstr(zh[1], "模型") && strstr(zh[1], "行/秒") &&
                      strstr(zh[1], "线程") && strstr(zh[1], "服务器") &&
                      strstr(zh[0], "往返时间") && strstr(zh[3], "无报告"),
                      "not in Chinese: '%s' / '%s' / '%s'", zh[0], zh[1], zh[3]);
        /* The round-trip heading over the same columns; each heading row
         * as wide as the English one; the last heading over the fates,
         * the row without a report (无报告) too. */
        ck_assert_int_eq(msg_width(zh[0]), msg_width(en[0]));
        ck_assert_int_eq(msg_width(zh[1]), msg_width(en[1]));
        for (int i = 1; i < 4; i++) {
            ck_assert_msg(fate_column(zh[i]) == fate_column(en[1]),
                          "%s table, row %d: its last column at %d, not %d: '%s'",
                          wide ? "wide" : "80", i, fate_column(zh[i]), fate_column(en[1]),
                          zh[i]);
            /* (a long fate may pass 80, in either language) */
            ck_assert_msg(wide || i == 3 || msg_width(zh[i]) <= 80, "wider than 80: '%s'",
                          zh[i]);
        }
    }
    ck_assert_int_eq(msg_set_lang("en"), 0);
}
END_TEST

START_TEST(every_narrator_fits_the_screen_and_the_recording_in_both_languages)
{
    unsetenv("LC_ALL");
    setenv("LANG", "C", 1);
    ck_assert_int_eq(msg_set_lang("zh"), 0);
    msg_setup_locale();
    for (size_t i = 0; i < nscenarios; i++) {   /* a recording's caption holds both */
        int both = 0;
        for (int lang = 0; lang < LANG_COUNT; lang++)
            both += snprintf(NULL, 0, "[%s] %s", scenarios[i].name,
                             msg_in((enum msg_lang)lang, scenarios[i].narrator)) + 1;
        ck_assert_msg(both <= RECORD_CAPTION_MAX, "%s: %d bytes in both languages",
                      scenarios[i].name, both);
    }
    for (int lang = 0; lang < LANG_COUNT; lang++)
        for (size_t i = 0; i < nscenarios; i++) {
            char footer[sizeof(((struct view *)0)->footer)];
            snprintf(footer, sizeof(footer), "[%s] %s", scenarios[i].name,
                     msg_in((enum msg_lang)lang, scenarios[i].narrator));
            /* In three rows at 120 and at 80 columns (the view gives the
             * narrator three). */
            ck_assert_msg(screen_put_wrapped(NULL, 0, 0, 120, 3, 2, ST_TITLE, footer) <= 3 &&
                          screen_put_wrapped(NULL, 0, 0, 80, 3, 2, ST_TITLE, footer) <= 3,
                          "more than three rows: %s", footer);
            ck_assert_msg(msg_width(msg_in((enum msg_lang)lang, scenarios[i].summary)) <= 60,
                          "a summary too long for the table's first row: %s",
                          msg_in((enum msg_lang)lang, scenarios[i].summary));
        }
    ck_assert_int_eq(msg_set_lang("en"), 0);
}
END_TEST

void add_word_tests(TCase *tc)
{
    tcase_add_test(tc, the_table_is_laid_out_by_display_width_in_both_languages);
    tcase_add_test(tc, every_narrator_fits_the_screen_and_the_recording_in_both_languages);
}
