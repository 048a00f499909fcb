/* reasons.c -- event reasons: every text the servers write on the board
 * is translated, with its conversions, numbers and names kept. */
#include "check_view.h"

/* ---- event reasons: the servers' English, the viewer's Chinese --------------- */

/* The calls whose string literals become an event's text on the board:
 * the events themselves, and the reasons handed to them (a `why`). A
 * snprintf into `why` counts only in a file that makes such calls (not in
 * board_read.c, whose `why` is an error message). */
static const char *const event_calls[] = {
    "board_event(", "board_event_at(", "simviz_event(",
};
static const char *const reason_calls[] = {
    "acceptor_refuse(", "sim__refuse(",
};
static const char *const why_buffer[] = { "snprintf(why," };
/* sim --viz's status line says what the next event is (sim.c, describe). */
static const char *const describe_buffer[] = { "snprintf(out, len," };

/* One text found in the sources, and where. */
struct source_text {
    char text[256];
    char where[128];                    /* FILE:LINE */
};

/* Blank the comments of C source in place (a comment opener inside a
 * string literal stays). */
static void blank_comments(char *src)
{
    char quote = 0;
    for (char *p = src; *p; p++) {
        if (quote) {
            if (*p == '\\' && p[1])
                p++;
            else if (*p == quote)
                quote = 0;
        } else if (*p == '"' || *p == '\'') {
            quote = *p;
        } else if (p[0] == '/' && p[1] == '*') {
            char *end = strstr(p + 2, "*/");
            char *stop = end ? end + 2 : p + strlen(p);
            for (; p < stop; p++)
                if (*p != '\n')
                    *p = ' ';
            p--;
        } else if (p[0] == '/' && p[1] == '/') {
            for (; *p && *p != '\n'; p++)
                *p = ' ';
            p--;
        }
    }
}

/* The string literal at p (its opening quote) appended to out, escapes
 * read; returns the byte after its closing quote. */
static const char *read_literal(const char *p, char *out, size_t len)
{
    size_t n = strlen(out);
    for (p++; *p && *p != '"'; p++) {
        char c = *p;
        if (c == '\\' && p[1]) {
            c = *++p;
            c = c == 'n' ? '\n' : c == 't' ? '\t' : c;
        }
        if (n + 1 < len)
            out[n++] = c;
    }
    out[n] = '\0';
    return *p ? p + 1 : p;
}

/* The literals of the call whose '(' is at open, each run of adjacent
 * ones joined ("a " "b" is "a b"), appended to texts. */
static int call_literals(const char *src, const char *open, const char *file,
                         struct source_text *texts, int n, int max)
{
    int line = 1, depth = 0;
    for (const char *q = src; q < open; q++)
        line += *q == '\n';
    for (const char *p = open; *p; p++) {
        if (*p == '(')
            depth++;
        else if (*p == ')' && --depth == 0)
            break;
        else if (*p == '\'')
            p += p[1] == '\\' ? 3 : 2;
        else if (*p == '"' && n < max) {
            struct source_text *t = &texts[n++];
            t->text[0] = '\0';
            snprintf(t->where, sizeof(t->where), "%s:%d", file, line);
            do {
                p = read_literal(p, t->text, sizeof(t->text));
                while (isspace((unsigned char)*p))
                    line += *p++ == '\n';
            } while (*p == '"');
            p--;
        }
        line += *p == '\n';
    }
    return n;
}

/* Where src calls one of names[] (not a longer name ending so), from p. */
static const char *next_call(const char *src, const char *p, const char *name)
{
    for (p = strstr(p, name); p; p = strstr(p + 1, name))
        if (p == src || !(isalnum((unsigned char)p[-1]) || p[-1] == '_'))
            return p;
    return NULL;
}

static bool has_call(const char *src, const char *const *names, int nnames)
{
    for (int c = 0; c < nnames; c++)
        if (next_call(src, src, names[c]))
            return true;
    return false;
}

/* Every call of one of names[] in src: its literals. */
static int scan_calls(const char *src, const char *file, const char *const *names,
                      int nnames, struct source_text *texts, int n, int max)
{
    for (int c = 0; c < nnames; c++)
        for (const char *p = next_call(src, src, names[c]); p;
             p = next_call(src, p + 1, names[c]))
            n = call_literals(src, strchr(p, '('), file, texts, n, max);
    return n;
}

/* The texts every event call and reason call in models/ and sim/
 * hands the board. Returns how many; *nevents: how many were formats of
 * event calls. */
static int source_texts(struct source_text *texts, int max, int *nevents)
{
    glob_t g;
    int n = 0;
    *nevents = 0;
    ck_assert_int_eq(glob("models/*.c", 0, NULL, &g), 0);
    ck_assert_int_eq(glob("models/*/*.c", GLOB_APPEND, NULL, &g), 0);
    ck_assert_int_eq(glob("sim/*.c", GLOB_APPEND, NULL, &g), 0);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        FILE *f = fopen(g.gl_pathv[i], "r");
        ck_assert_msg(f, "%s: %s", g.gl_pathv[i], strerror(errno));
        static char src[1 << 20];
        size_t len = fread(src, 1, sizeof(src) - 1, f);
        fclose(f);
        src[len] = '\0';
        blank_comments(src);
        int before = n;
        n = scan_calls(src, g.gl_pathv[i], event_calls, 3, texts, n, max);
        *nevents += n - before;
        n = scan_calls(src, g.gl_pathv[i], reason_calls, 2, texts, n, max);
        if (has_call(src, event_calls, 3) || has_call(src, reason_calls, 2))
            n = scan_calls(src, g.gl_pathv[i], why_buffer, 1, texts, n, max);
        if (!strcmp(g.gl_pathv[i], "sim/sim.c"))
            n = scan_calls(src, g.gl_pathv[i], describe_buffer, 1, texts, n, max);
    }
    globfree(&g);
    return n;
}

/* Does a Chinese template keep the word (n letters at w) as it is, as a
 * word of its own (accept, epoll_wait, --max-conns)? */
static bool chinese_keeps(const char *w, size_t n)
{
    for (int i = 0; i < reason_count(); i++)
        for (const char *z = reason_template(i, LANG_ZH); *z; z++)
            if (!strncmp(z, w, n) && !isalpha((unsigned char)z[n]) &&
                (z == reason_template(i, LANG_ZH) || !isalpha((unsigned char)z[-1])))
                return true;
    return false;
}

/* Does s hold an English word (two letters or more) that no Chinese
 * template keeps? A thread's name (conn-7, task-2) is no word. Returns
 * the first, in word (size len), or false. */
static bool english_left(const char *s, char *word, size_t len)
{
    while (*s) {
        size_t n = 0;
        while (isalpha((unsigned char)s[n]))
            n++;
        bool name = s[n] == '-' && isdigit((unsigned char)s[n + 1]);
        if (n >= 2 && !name && !chinese_keeps(s, n)) {
            snprintf(word, len, "%.*s", (int)n, s);
            return true;
        }
        s += n ? n : 1;
    }
    return false;
}

/* A format as a server fills it in: every number 7, every string "x". */
static void sample_of(const char *fmt, char *out, size_t len)
{
    size_t n = 0;
    for (const char *p = fmt; *p && n + 2 < len; p++) {
        if (*p != '%') {
            out[n++] = *p;
            continue;
        }
        if (p[1] == '%') {
            out[n++] = *++p;
            continue;
        }
        while (p[1] && strchr("-+ #0123456789.hljzt", p[1]))
            p++;
        if (!*++p)
            break;
        out[n++] = *p == 's' ? 'x' : '7';
    }
    out[n] = '\0';
}

/* The text, filled in, is translated whole: a template fits it and no
 * English is left. Marks the template used. */
static void expect_translated(const char *text, const char *where, bool *used)
{
    char sample[256], zh[REASON_TEXT_BYTES], word[64];
    sample_of(text, sample, sizeof(sample));
    bool has_word = false;
    for (const char *p = sample; *p && !has_word; p++)
        has_word = isalpha((unsigned char)p[0]) && isalpha((unsigned char)p[1]);
    if (!has_word)
        return;                         /* nothing to translate: "%s", "", "s" */
    int i = reason_translate(LANG_ZH, sample, zh, sizeof(zh));
    ck_assert_msg(i >= 0, "%s: the event text \"%s\" has no template in viz/reason.c",
                  where, text);
    used[i] = true;
    ck_assert_msg(!english_left(zh, word, sizeof(word)),
                  "%s: \"%s\" is shown as \"%s\": '%s' is not translated (a template in "
                  "viz/reason.c for it)", where, text, zh, word);
}

START_TEST(every_event_the_servers_write_is_translated)
{
    static struct source_text texts[512];
    int nevents, n = source_texts(texts, 512, &nevents);
    /* The scan must find the events, or it would pass on nothing: about
     * 25 board_event calls in models/, 8 in sim/. */
    ck_assert_msg(nevents >= 30, "found only %d event texts (run from the top of the "
                  "tree, as make check does)", nevents);
    ck_assert_int_lt(n, 512);
    bool used[256] = { false };
    ck_assert_int_le(reason_count(), 256);
    for (int i = 0; i < n; i++)
        expect_translated(texts[i].text, texts[i].where, used);
    /* Why a connection ended: every ending the session names. */
    for (int e = 0; e < 64; e++)
        for (int stopping = 0; stopping < 2; stopping++) {
            const char *why = echo_end_reason((enum echo_end)e, stopping);
            if (strcmp(why, "?"))
                expect_translated(why, "echo_end_reason", used);
        }
    /* And the table holds nothing no server writes any more. */
    for (int i = 0; i < reason_count(); i++)
        ck_assert_msg(used[i], "template \"%s\" matches no event in the sources",
                      reason_template(i, LANG_EN));
}
END_TEST

/* A template's Chinese names each conversion of its English as %1 .. %9,
 * and names none that is not there. The one it may leave out: an English
 * plural's ending, a %s right after a letter (connection%s). */
START_TEST(every_reason_template_keeps_its_conversions)
{
    for (int i = 0; i < reason_count(); i++) {
        const char *en = reason_template(i, LANG_EN), *zh = reason_template(i, LANG_ZH);
        int n = 0;
        for (const char *p = en; *p; p++) {
            if (*p != '%')
                continue;
            if (*++p == '%')
                continue;                   /* "%%": no conversion */
            bool plural = p - 1 > en && isalpha((unsigned char)p[-2]) && *p == 's';
            char mark[12];
            snprintf(mark, sizeof(mark), "%%%d", ++n);
            ck_assert_msg(n <= 9, "\"%s\": more than 9 conversions", en);
            ck_assert_msg(plural || strstr(zh, mark), "\"%s\" -> \"%s\": %s (a number or "
                          "a name) is left out", en, zh, mark);
        }
        for (const char *p = strchr(zh, '%'); p; p = strchr(p + 1, '%'))
            ck_assert_msg(p[1] >= '1' && p[1] <= '0' + n, "\"%s\" -> \"%s\": '%.2s' names no "
                          "conversion of the English", en, zh, p);
    }
}
END_TEST

START_TEST(a_reason_is_translated_with_its_numbers_names_and_inner_reasons)
{
    char out[REASON_TEXT_BYTES];
    /* Numbers and names as written; the inner reason in its Chinese. */
    ck_assert_int_ge(reason_translate(LANG_ZH, "task-3: no idle thread, 6 queued, size 59 of "
                                      "max 128", out, sizeof(out)), 0);
    ck_assert_str_eq(out, "task-3：没有空闲线程，6 个在排队，线程池尺寸 59（最大 128）");
    reason_translate(LANG_ZH, "conn 12: not reading its replies (--stall-timeout), after 40 "
                     "lines", out, sizeof(out));
    ck_assert_str_eq(out, "连接 12：不读取自己的回复（--stall-timeout），此前应答了 40 行");
    /* The most particular template wins over "conn %llu: %s". */
    reason_translate(LANG_ZH, "conn 5: queue full (4), the caller runs it (caller-runs)",
                     out, sizeof(out));
    ck_assert_str_eq(out, "连接 5：任务队列已满（4），由提交者自己运行（caller-runs）");
    /* A %s that is no reason (strerror's) stays; an empty one fits. */
    reason_translate(LANG_ZH, "accept failed: Too many open files", out, sizeof(out));
    ck_assert_str_eq(out, "accept 失败：Too many open files");
    reason_translate(LANG_ZH, "worker-2 unblocked: its handler ran 2.0 s", out, sizeof(out));
    ck_assert_str_eq(out, "worker-2 解除阻塞：它的处理器运行了 2.0 秒");
    reason_translate(LANG_ZH, "worker-2 unblocked: its handler ran at least 2.0 s", out,
                     sizeof(out));
    ck_assert_str_eq(out, "worker-2 解除阻塞：它的处理器运行了 至少 2.0 秒");
    /* English is the board's text as it is; an unknown text, or one cut at
     * the board's 95 bytes, is shown as it is. */
    const char *text = "conn 7 -> worker-2: round robin (2 of 4)";
    ck_assert_int_ge(reason_translate(LANG_EN, text, out, sizeof(out)), 0);
    ck_assert_str_eq(out, text);
    ck_assert_int_eq(reason_translate(LANG_ZH, "a reason from an older server", out,
                                      sizeof(out)), -1);
    ck_assert_str_eq(out, "a reason from an older server");
    ck_assert_int_eq(reason_translate(LANG_ZH, "conn 7 -> worker-2: round robin (2 of",
                                      out, sizeof(out)), -1);
}
END_TEST

START_TEST(a_translation_is_cut_at_a_character_and_hostile_text_stays_bounded)
{
    /* "连接 12：" is 6 + 3 + 3 bytes; 10 bytes of room keep "连接 12" whole
     * and leave out the "：" that does not fit, not two bytes of it. */
    char out[11];
    reason_translate(LANG_ZH, "conn 12: stopping", out, sizeof(out));
    ck_assert_str_eq(out, "连接 12");
    ck_assert_int_eq(reason_translate(LANG_ZH, "conn 12", out, 1), 0);
    ck_assert_str_eq(out, "");
    /* Text another process wrote to make the matcher backtrack: ": " and
     * ", " everywhere, 95 bytes. It ends (bounded steps) and fits nothing. */
    char hostile[96], big[REASON_TEXT_BYTES];
    for (int i = 0; i < 95; i++)
        hostile[i] = ": , "[i % 4];
    hostile[95] = '\0';
    ck_assert_int_eq(reason_translate(LANG_ZH, hostile, big, sizeof(big)), -1);
    ck_assert_str_eq(big, hostile);
}
END_TEST

START_TEST(the_chinese_event_log_shows_the_reasons_in_chinese)
{
    ck_assert_int_eq(msg_set_lang("zh"), 0);
    setenv("LANG", "C", 1);
    unsetenv("LC_ALL");
    msg_setup_locale();
    struct board_snapshot *s = make_snapshot("pool", 7, 10);
    add_thread(s, ROLE_WATCHDOG, "watchdog", STATE_WAITING, 0);
    s->nevents = 2;
    s->events[0] = (struct board_event_snap){ 1, s->start_mono_ns + SEC, EV_REJECT,
        "conn 12 dropped: queue full (1024), oldest discarded for conn 13" };
    s->events[1] = (struct board_event_snap){ 2, s->start_mono_ns + 2 * SEC, EV_GROW,
        "task-9: no idle thread, 2 queued, size 9 of max 128" };
    struct view v;
    struct screen scr;
    one_pane(&v, s, NULL);
    /* 80 columns: the longer wraps under its own text, between two
     * characters, and no row starts with a closing mark. */
    screen_init(&scr, 80, 24);
    view_render(&v, &scr);
    ck_assert_int_eq(screen_find(&scr, "pool  pid 7  已运行 10.0s"), 0);
    int y = screen_find(&scr, "+1.000s 拒绝    连接 12 被丢弃：任务队列已满（1024），为连接 13 丢弃了最早");
    ck_assert_int_ge(y, 0);
    char row[512];
    screen_row_text(&scr, y + 1, row, sizeof(row));
    ck_assert_str_eq(row, "                   的任务");
    ck_assert_int_ge(screen_find(&scr, "+2.000s 扩容    task-9：没有空闲线程，2 个在排队，线程池尺寸 9（最大 128）"), 0);
    /* At 60, between two characters of a word: CJK has no spaces. */
    screen_free(&scr);
    screen_init(&scr, 60, 24);
    view_render(&v, &scr);
    y = screen_find(&scr, "+2.000s 扩容    task-9：没有空闲线程，2 个在排队，线程");
    ck_assert_int_ge(y, 0);
    screen_row_text(&scr, y + 1, row, sizeof(row));
    ck_assert_str_eq(row, "                   池尺寸 9（最大 128）");
    /* A break that would start a row with "，" or end one with "（" moves
     * back a character. */
    screen_clear(&scr);
    screen_put_wrapped(&scr, 0, 0, 10, 3, 0, ST_NORMAL, "阻塞线程检，查器");
    screen_row_text(&scr, 1, row, sizeof(row));
    ck_assert_str_eq(row, "检，查器");
    screen_clear(&scr);
    screen_put_wrapped(&scr, 0, 0, 10, 3, 0, ST_NORMAL, "阻塞线程（检查器）");
    screen_row_text(&scr, 1, row, sizeof(row));
    ck_assert_str_eq(row, "（检查器）");
    ck_assert_int_lt(screen_find(&scr, "no idle thread"), 0);
    screen_free(&scr);
    free(s);
}
END_TEST

void add_reason_tests(TCase *tc)
{
    tcase_add_test(tc, every_event_the_servers_write_is_translated);
    tcase_add_test(tc, every_reason_template_keeps_its_conversions);
    tcase_add_test(tc, a_reason_is_translated_with_its_numbers_names_and_inner_reasons);
    tcase_add_test(tc, a_translation_is_cut_at_a_character_and_hostile_text_stays_bounded);
    tcase_add_test(tc, the_chinese_event_log_shows_the_reasons_in_chinese);
}
