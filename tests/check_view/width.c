/* width.c -- display width (CJK takes two columns), the message table
 * in both languages, and a Chinese screen. */
#include "check_view.h"

/* ---- display width: CJK takes two columns ---------------------------------- */

START_TEST(wide_characters_take_two_columns_and_stay_whole)
{
    ck_assert_ptr_nonnull(setlocale(LC_CTYPE, "C.UTF-8"));
    struct screen scr;
    char row[256];
    screen_init(&scr, 20, 4);
    ck_assert_int_eq(screen_put(&scr, 0, 0, -1, ST_NORMAL, "值守线程ab"), 10);
    screen_row_text(&scr, 0, row, sizeof(row));
    ck_assert_str_eq(row, "值守线程ab");
    ck_assert_uint_eq(screen_at(&scr, 0, 0)->ch, (uint32_t)L'值');
    ck_assert_uint_eq(screen_at(&scr, 1, 0)->ch, SCREEN_WIDE_RIGHT);
    ck_assert_int_eq(screen_text_width("任务队列 q"), 10);
    /* A wide character that does not fit whole is left out. */
    ck_assert_int_eq(screen_put(&scr, 0, 1, 3, ST_NORMAL, "值守"), 2);
    screen_row_text(&scr, 1, row, sizeof(row));
    ck_assert_str_eq(row, "值");
    /* Overwriting half of one blanks its other half. */
    screen_put(&scr, 1, 1, -1, ST_NORMAL, "ab");
    screen_row_text(&scr, 1, row, sizeof(row));
    ck_assert_str_eq(row, " ab");
    /* Columns padded by width, not bytes. */
    screen_put_col(&scr, 0, 2, 10, ST_NORMAL, "任务队列", false);
    screen_put(&scr, 10, 2, -1, ST_NORMAL, "|");
    screen_put_col(&scr, 11, 2, 6, ST_NORMAL, "阻塞", true);
    screen_row_text(&scr, 2, row, sizeof(row));
    ck_assert_str_eq(row, "任务队列  |  阻塞");
    /* Not a character, a control: '?'. The last column takes no wide half. */
    screen_put(&scr, 0, 3, -1, ST_NORMAL, "\xff\x1b[2J");
    screen_put(&scr, 15, 3, -1, ST_NORMAL, "abcd值");
    screen_row_text(&scr, 3, row, sizeof(row));
    ck_assert_str_eq(row, "??[2J          abcd");
    screen_free(&scr);
}
END_TEST

START_TEST(cjk_wraps_between_characters)
{
    ck_assert_ptr_nonnull(setlocale(LC_CTYPE, "C.UTF-8"));
    const char *text = "阻塞线程检查器发现事件循环阻塞";   /* 15 characters, 30 columns */
    ck_assert_int_eq(screen_put_wrapped(NULL, 0, 0, 10, 9, 0, ST_NORMAL, text), 3);
    struct screen scr;
    char row[256];
    screen_init(&scr, 10, 3);
    ck_assert_int_eq(screen_put_wrapped(&scr, 0, 0, 10, 2, 0, ST_NORMAL, text), 3);
    screen_row_text(&scr, 0, row, sizeof(row));
    ck_assert_str_eq(row, "阻塞线程检");
    screen_row_text(&scr, 1, row, sizeof(row));
    ck_assert_str_eq(row, "查器发...");     /* cut: within its 10 columns */
    /* Between two wide characters, not back at the last space. */
    screen_clear(&scr);
    screen_put_wrapped(&scr, 0, 0, 10, 3, 0, ST_NORMAL, "ab 阻塞线程检查器");
    screen_row_text(&scr, 0, row, sizeof(row));
    ck_assert_str_eq(row, "ab 阻塞线");
    screen_free(&scr);
}
END_TEST


/* ---- the message table, and a Chinese screen ------------------------------- */

/* The printf conversions of a format, in order ("%s%llu" -> "sllu"). */
void conversions(const char *fmt, char *out, size_t len)
{
    size_t n = 0;
    for (const char *p = fmt; *p && n + 4 < len; p++) {
        if (*p != '%')
            continue;
        p++;
        if (*p == '%')
            continue;
        while (*p && strchr("-+ #0123456789.*", *p))
            p++;
        while (*p && strchr("hlLqjzt", *p))
            out[n++] = *p++;
        if (*p)
            out[n++] = *p;
    }
    out[n] = '\0';
}

START_TEST(every_message_has_both_languages_with_the_same_conversions)
{
    for (int id = 0; id < MSG_COUNT; id++) {
        char en[64], zh[64];
        ck_assert_int_eq(msg_set_lang("en"), 0);
        const char *e = msg((enum msg_id)id);
        ck_assert_int_eq(msg_set_lang("zh"), 0);
        const char *z = msg((enum msg_id)id);
        ck_assert_msg(e && z, "message %d is missing a language", id);
        ck_assert_msg(*e == '\0' || strcmp(e, z) || id == M_COL_CPU || id == M_PHASE_IO,
                      "message %d ('%s') is not translated", id, e);
        if (msg_is_text((enum msg_id)id))
            continue;          /* drawn as text, never a format: '%' is itself */
        conversions(e, en, sizeof(en));
        conversions(z, zh, sizeof(zh));
        ck_assert_msg(!strcmp(en, zh), "message %d: '%s' has %%%s, '%s' has %%%s", id, e, en,
                      z, zh);
    }
    ck_assert_int_eq(msg_set_lang("fr"), -EINVAL);
}
END_TEST

START_TEST(the_language_comes_from_the_environment_unless_chosen)
{
    /* (each test is its own process: the choice starts unmade) */
    setenv("LANG", "zh_CN.UTF-8", 1);
    unsetenv("LC_ALL");
    setenv("LC_MESSAGES", "en_US.UTF-8", 1);
    ck_assert_int_eq(msg_lang(), LANG_EN);          /* LC_MESSAGES before LANG */
    ck_assert_int_eq(msg_set_lang("zh"), 0);
    ck_assert_int_eq(msg_lang(), LANG_ZH);
    ck_assert_str_eq(msg_state(STATE_BLOCKED_IO), "阻塞于读写");
    ck_assert_int_eq(msg_set_lang("en"), 0);
    ck_assert_str_eq(msg_state(STATE_BLOCKED_IO), "blocked-io");
}
END_TEST

START_TEST(a_chinese_screen_is_laid_out_by_display_width)
{
    ck_assert_int_eq(msg_set_lang("zh"), 0);
    unsetenv("LC_ALL");
    setenv("LANG", "C", 1);
    msg_setup_locale();                    /* no UTF-8 locale: C.UTF-8 */
    struct board_snapshot *s = make_snapshot("reactor", 7, 10);
    add_thread(s, ROLE_WORKER_LOOP, "reactor", STATE_BLOCKED_SLEEP, 0);
    add_thread(s, ROLE_CHECKER, "checker", STATE_WAITING, 0);
    s->nloops = 1;
    snprintf(s->loops[0].name, sizeof(s->loops[0].name), "reactor");
    s->loops[0].channels = 64;
    s->loops[0].phase = 2;
    s->loops[0].blocked_since_ns = s->taken_mono_ns - SEC / 5;
    s->counters[CTR_ACTIVE] = 64;
    s->nevents = 1;
    s->events[0] = (struct board_event_snap){ 1, s->start_mono_ns + SEC / 2, EV_BLOCKED,
                                              "reactor blocked 0.2 s" };
    struct view v;
    struct screen scr;
    char row[512];
    one_pane(&v, s, NULL);
    screen_init(&scr, 59, 40);             /* one pane of a 2x2 grid at 120 */
    view_render(&v, &scr);
    ck_assert_int_ge(screen_find(&scr, "连接 64 拒绝 0 错误 0"), 0);
    ck_assert_int_ge(screen_find(&scr, "线程         状态              持续  CPU%  连接    行数"), 0);
    ck_assert_int_ge(screen_find(&scr, "reactor      S 阻塞于sleep     1.0s     -     -       0"), 0);
    int y = screen_find(&scr, "事件循环    通道 任务队列      IO/任务 阶段");
    ck_assert_int_ge(y, 0);
    /* The row under the heading: each figure under its heading's columns. */
    screen_row_text(&scr, y + 1, row, sizeof(row));
    ck_assert_str_eq(row, " reactor       64 [......]    0   0/0   IO    阻塞 0.2s");
    /* The event's kind padded to the prefix's 7 columns, not 7 bytes. */
    ck_assert_int_ge(screen_find(&scr, "   +0.500s 阻塞    reactor blocked 0.2 s"), 0);
    screen_row_text(&scr, scr.h - 1, row, sizeof(row));
    ck_assert_msg(strstr(row, "q 退出  ? 帮助  500ms"), "legend: %s", row);
    /* The help box and the detail, in Chinese. */
    view_key(&v, '?');
    view_render(&v, &scr);
    ck_assert_int_ge(screen_find(&scr, "threadlab top：按键"), 0);
    view_key(&v, 'x');
    v.layout = LAYOUT_LIST;
    view_key(&v, TERM_KEY_ENTER);
    screen_free(&scr);
    screen_init(&scr, 120, 40);
    view_render(&v, &scr);
    ck_assert_int_ge(screen_find(&scr, "reactor  （worker 事件循环，无内核线程）"), 0);
    ck_assert_int_ge(screen_find(&scr, "状态         阻塞于sleep，已持续 1.0s"), 0);
    ck_assert_int_ge(screen_find(&scr, "所属事件循环 64 个通道，任务队列 0，定时器 0"), 0);
    screen_free(&scr);
    free(s);
}
END_TEST

void add_width_tests(TCase *tc)
{
    tcase_add_test(tc, wide_characters_take_two_columns_and_stay_whole);
    tcase_add_test(tc, cjk_wraps_between_characters);
    tcase_add_test(tc, every_message_has_both_languages_with_the_same_conversions);
    tcase_add_test(tc, the_language_comes_from_the_environment_unless_chosen);
    tcase_add_test(tc, a_chinese_screen_is_laid_out_by_display_width);
}
