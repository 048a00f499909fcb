/* reason.c -- the one table of event reasons, English -> Chinese, and the
 * matcher that applies it. See reason.h.
 *
 * A template's English is the server's format, copied from its
 * board_event() call: a text fits it when the literal parts are the same
 * bytes and each conversion covers a number (%d %llu %.1f ...) or any
 * string (%s, shortest first, backtracking). When several fit ("conn
 * %llu: %s" and "conn %llu: queue full (%d), ..."), the one with the most
 * literal bytes wins: it is the more particular. A new event is a new row
 * here, and check_view fails until it has one. */
#include "reason.h"

#include <string.h>

#define REASON_ARGS_MAX 9          /* %1 .. %9 */
#define REASON_DEPTH_MAX 3         /* a reason inside a reason inside a reason */
/* Steps one template may take over one text. Backtracking over two %s in
 * a 95-byte text takes a few thousand; the bound keeps text another
 * process wrote from making a refresh slow. */
#define REASON_STEPS_MAX 20000

struct reason_template {
    const char *en;                /* the server's format */
    const char *zh;                /* %N: what the English's Nth conversion matched */
};

/* The Chinese uses the glossary's terms (docs/glossary.md). An English
 * plural's "%s" (connection%s) has no place in Chinese and is left out;
 * every other conversion is kept (check_view). */
static const struct reason_template table[] = {
    /* a connection's life (models/probe/board.c, multireactor/loopserver.c,
     * blocking/acceptor.c) */
    { "conn %llu", "连接 %1" },
    { "conn %llu: %s", "连接 %1：%2" },
    { "conn %llu: %s, after %llu lines", "连接 %1：%2，此前应答了 %3 行" },
    { "conn %llu -> %s: round robin (%d of %d)", "连接 %1 -> %2：轮转（第 %3 个，共 %4 个）" },
    { "conn %u -> worker-%d: round robin (%d of %d)",
      "连接 %1 -> worker-%2：轮转（第 %3 个，共 %4 个）" },
    { "conn %llu: hand-off to %s failed: %s", "连接 %1：移交给 %2 失败：%3" },
    { "conn %llu: limit of %d connections open (--max-conns)",
      "连接 %1：已达 %2 个连接的上限（--max-conns）" },
    { "conn %llu: %d refusals lingering, the oldest closed early",
      "连接 %1：已有 %2 个被拒连接在延迟关闭，最早的那个提前关闭" },
    { "conn %u refused: %s", "连接 %1 被拒绝：%2" },
    { "accept failed: %s", "accept 失败：%1" },
    { "%s: the spare fd took the connection and closed it with !err busy",
      "%1：备用 fd 接下这个连接，回复 !err busy 后关闭了它" },
    { "the simulated run is over", "仿真运行结束" },

    /* why a connection ended (echo_end_reason, models/echo/session.c) */
    { "client closed", "客户端关闭了连接" },
    { "server stopping", "服务器正在停止" },
    { "reset by client", "被客户端重置" },
    { "I/O error", "I/O 错误" },
    { "!quit", "收到 !quit" },
    { "line too long", "行太长" },
    { "out of memory", "内存不足" },
    { "closed by the stop timeout", "停止超时，被强制关闭" },
    { "idle too long (--idle-timeout)", "空闲太久（--idle-timeout）" },
    { "line too slow (--line-timeout)", "一行迟迟发不完（--line-timeout）" },
    { "not reading its replies (--stall-timeout)", "不读取自己的回复（--stall-timeout）" },
    { "refused: too many connections (--max-conns)", "被拒绝：连接太多（--max-conns）" },

    /* why a connection was refused (blocking/, bio/, pool/, sim/) */
    { "limit of %d connections open (--max-conns)", "已达 %1 个连接的上限（--max-conns）" },
    { "all %d threads busy (--max-threads)", "全部 %1 个线程都在忙（--max-threads）" },
    { "pthread_create failed: no thread to spare", "pthread_create 失败：没有多余的线程" },
    { "queue full (%d), reject policy abort", "队列已满（%1），拒绝策略 abort" },
    { "dropped from a full queue (discard-oldest)", "从已满的任务队列中被丢弃（discard-oldest）" },
    { "stopping", "正在停止" },
    { "the accept queue is full (--backlog)", "accept 队列已满（--backlog）" },
    { "the queue is full (--queue)", "任务队列已满（--queue）" },
    { "no more threads (--max-threads)", "线程已达上限（--max-threads）" },
    { "no memory for a virtual thread's stack", "没有内存给虚拟线程的栈" },

    /* threads (bio/bio.c, threadpool/pool.c, sim/) */
    { "%s: a thread for conn %llu, %llu live", "%1：为连接 %2 新建的线程，现有 %3 个" },
    { "%s: thread ended, joined by the acceptor", "%1：线程结束，已由接收线程回收（join）" },
    { "%s: %s, size %d of max %d", "%1：%2，线程池尺寸 %3（最大 %4）" },
    { "%s: %s, size %d, min %d", "%1：%2，线程池尺寸 %3（最小 %4）" },
    { "%s: no idle thread, size %u of max %d", "%1：没有空闲线程，线程池尺寸 %2（最大 %3）" },
    { "no idle thread, %d queued", "没有空闲线程，%1 个在排队" },
    { "pre-created up to min", "预先创建到最小尺寸" },
    { "idle %.1f s > %.1f s", "空闲 %1 秒 > %2 秒" },
    { "no task thread: %s; %d queued, trying again in %d ms",
      "无法新建任务线程：%1；%2 个在排队，%3 毫秒后重试" },
    { "min %d -> %d: average queue %.1f over the last %.1f s",
      "最小尺寸 %1 -> %2：最近 %4 秒任务队列平均长度 %3" },

    /* virtual threads' carriers (vthread/carrier.c, vthread/monitor.c) */
    { "%s blocked in a call for %llu ms: handoff to %s, which takes its run queue",
      "%1 在阻塞调用里卡了 %2 毫秒：由 %3 接管，接手它的运行队列" },
    { "%s: the blocking call on %s returned; the spare retired",
      "%1：%2 上的阻塞调用已返回，备用线程退出" },
    { "%s: no thread for a spare; %s waits for its blocking call",
      "%1：无法新建备用线程；%2 只能等它的阻塞调用返回" },
    { "%s: epoll_ctl failed; closing %s", "%1：epoll_ctl 失败；关闭 %2" },
    /* ... and as the simulator says it (sim/sim_carrier.c, sim_vthread.c) */
    { "%s: vt-%u blocks %.0f ms in a call, pinned: its %llu vthreads wait",
      "%1：vt-%2 在阻塞调用里卡 %3 毫秒，被钉住：它的 %4 个虚拟线程都得等" },
    { "%s: vt-%u blocks %.0f ms in a call: the carrier is given up",
      "%1：vt-%2 在阻塞调用里卡 %3 毫秒：让出载体线程" },
    { "spare-%u: the blocking call on %s returned; the spare retired",
      "spare-%1：%2 上的阻塞调用已返回，备用线程退出" },
    { "no thread for a spare (--max-threads); %s waits for its blocking call",
      "无法新建备用线程（--max-threads）；%1 只能等它的阻塞调用返回" },
    { "%s blocked in a call for %.0f ms: handoff to spare-%u, which takes its run queue",
      "%1 在阻塞调用里卡了 %2 毫秒：由 spare-%3 接管，接手它的运行队列" },
    { "vt-%u -> %s: round robin (%d of %d)", "vt-%1 -> %2：轮转（第 %3 个，共 %4 个）" },

    /* the pool's task queue (threadpool/pool.c, sim/sim_pool.c) */
    { "conn %llu waits: all %d threads busy, %d queued",
      "连接 %1 等待：全部 %2 个线程都在忙，%3 个在排队" },
    { "conn %llu -> %s after %.3f s queued", "连接 %1 -> %2，在任务队列中等了 %3 秒" },
    { "conn %llu: queue full (%d), the caller runs it (caller-runs)",
      "连接 %1：任务队列已满（%2），由提交者自己运行（caller-runs）" },
    { "conn %llu dropped: queue full (%d), oldest discarded for conn %llu",
      "连接 %1 被丢弃：任务队列已满（%2），为连接 %3 丢弃了最早的任务" },

    /* event loops (loop/loop.c, loop/checker.c, sim/sim_loop.c) */
    { "%s: task queue full (%zu tasks), %llu refused",
      "%1：任务队列已满（%2 个任务），已拒绝 %3 个" },
    { "%s: tasks ran %.0f ms while I/O waited (ioRatio 100: no limit), %llu times",
      "%1：任务运行了 %2 毫秒，I/O 一直在等（ioRatio 100：不设上限），共 %3 次" },
    { "%s: epoll_wait failed: %s (%llu times)", "%1：epoll_wait 失败：%2（共 %3 次）" },
    { "%s blocked %.1f s in one handler: %llu connection%s on it wait as long",
      "%1 在一个处理器里阻塞了 %2 秒：它上面的 %3 个连接都要等这么久" },
    { "%s unblocked: its handler ran %s%.1f s", "%1 解除阻塞：它的处理器运行了 %2%3 秒" },
    { "at least ", "至少 " },
    { "%s sleeps %.0f ms in a handler: its %llu connections wait",
      "%1 在处理器里 sleep %2 毫秒：它的 %3 个连接都在等" },
    /* sim --viz's status line: the next event (sim.c, describe) */
    { "core %u: its thread's burst or slice ends", "核 %1：其线程的一段运行或时间片结束" },
    { "the balancer's turn: a waiting thread may move core",
      "负载均衡器的一轮：一个等待中的线程可能换到另一个核" },
    { "conn %u reaches the server", "连接 %1 到达服务器" },
    { "client %u sends line %u", "客户端 %1 发出第 %2 行" },
    { "a line of conn %u reaches the server", "连接 %1 的一行到达服务器" },
    { "reply %u reaches client %u", "第 %1 个应答到达客户端 %2" },
    { "conn %u's close reaches the server", "连接 %1 的关闭到达服务器" },
    { "thread %u wakes from !sleep", "线程 %1 从 !sleep 醒来" },
    { "the monitor looks at carrier-%u", "监控线程查看 carrier-%1" },
    { "event %u", "事件 %1" },
};

#define TABLE_SIZE ((int)(sizeof(table) / sizeof(table[0])))

/* ---- matching a text against a template ----------------------------------- */

/* What a text's match to one template found. */
struct match {
    const char *arg[REASON_ARGS_MAX];   /* where conversion k matched, in the text */
    size_t arg_len[REASON_ARGS_MAX];
    bool arg_is_string[REASON_ARGS_MAX];
    int nargs;
    int steps;                          /* spent of REASON_STEPS_MAX */
};

/* The conversion at fmt (just past its '%'): returns where it ends and
 * says whether it is %s; a '%%' ends at once with *conv == '%'. */
static const char *conversion(const char *fmt, char *conv)
{
    while (*fmt && strchr("-+ #0123456789.hljzt", *fmt))
        fmt++;
    *conv = *fmt;
    return *fmt ? fmt + 1 : fmt;
}

/* The length of the number text starts with (-12, 3.5), or 0. */
static size_t number_length(const char *text)
{
    size_t n = text[0] == '-';
    size_t digits = strspn(text + n, "0123456789");
    if (digits == 0)
        return 0;
    n += digits;
    if (text[n] == '.' && text[n + 1] >= '0' && text[n + 1] <= '9')
        n += 1 + strspn(text + n + 1, "0123456789");
    return n;
}

static bool match_from(const char *fmt, const char *text, struct match *m, int k);

/* Conversion k covers text[0..n): note it, match the rest. */
static bool match_arg(const char *rest, const char *text, size_t n, bool is_string,
                      struct match *m, int k)
{
    m->arg[k] = text;
    m->arg_len[k] = n;
    m->arg_is_string[k] = is_string;
    m->nargs = k + 1;
    return match_from(rest, text + n, m, k + 1);
}

static bool match_from(const char *fmt, const char *text, struct match *m, int k)
{
    if (++m->steps > REASON_STEPS_MAX)
        return false;
    while (*fmt) {
        if (*fmt != '%') {
            if (*fmt++ != *text++)
                return false;
            continue;
        }
        char conv;
        const char *rest = conversion(fmt + 1, &conv);
        if (conv == '%') {                 /* "%%": a '%' of the text */
            if (*text++ != '%')
                return false;
            fmt = rest;
            continue;
        }
        if (k == REASON_ARGS_MAX)
            return false;
        if (conv != 's') {
            size_t n = number_length(text);
            return n > 0 && match_arg(rest, text, n, false, m, k);
        }
        /* The shortest string that lets the rest fit. Where the rest
         * starts with a literal byte, only the places that byte is are
         * worth a try; where nothing follows, only the whole text. */
        size_t n = *rest == '\0' ? strlen(text) : 0;
        for (;;) {
            if (*rest && *rest != '%') {
                const char *next = strchr(text + n, *rest);
                if (!next)
                    return false;
                n = (size_t)(next - text);
            }
            if (match_arg(rest, text, n, true, m, k))
                return true;
            if (!text[n] || m->steps > REASON_STEPS_MAX)
                return false;
            n++;
        }
    }
    return *text == '\0';
}

/* The bytes of fmt that are not conversions: how particular it is. */
static size_t literal_bytes(const char *fmt)
{
    size_t n = 0;
    while (*fmt) {
        if (*fmt != '%') {
            n++;
            fmt++;
            continue;
        }
        char conv;
        fmt = conversion(fmt + 1, &conv);
        n += conv == '%';
    }
    return n;
}

/* The template text fits best, with its match; -1 if none fits. */
static int best_template(const char *text, struct match *best)
{
    int found = -1;
    size_t found_literal = 0;
    for (int i = 0; i < TABLE_SIZE; i++) {
        struct match m = { .nargs = 0 };
        if (!match_from(table[i].en, text, &m, 0))
            continue;
        size_t literal = literal_bytes(table[i].en);
        if (found < 0 || literal > found_literal) {
            found = i;
            found_literal = literal;
            *best = m;
        }
    }
    return found;
}

/* ---- writing the translation ------------------------------------------------ */

/* A bounded output: whatever does not fit is cut at a character, so a
 * Chinese character is never left half written. */
struct out {
    char *buf;
    size_t len, used;                   /* used < len: room for the '\0' */
    bool cut;                           /* something did not fit: write no more */
};

static void out_put(struct out *o, const char *s, size_t n)
{
    if (o->cut)
        return;
    size_t room = o->len - 1 - o->used;
    if (n > room) {
        o->cut = true;
        n = room;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
            n--;                        /* s[n] continues a character: cut before it */
    }
    memcpy(o->buf + o->used, s, n);
    o->used += n;
    o->buf[o->used] = '\0';
}

static int translate(enum msg_lang lang, const char *text, struct out *o, int depth);

/* Argument k of a match, into o: a string that is itself a reason in
 * its translation, anything else as it was. */
static void put_arg(enum msg_lang lang, const struct match *m, int k, struct out *o,
                    int depth)
{
    if (!m->arg_is_string[k] || depth + 1 >= REASON_DEPTH_MAX) {
        out_put(o, m->arg[k], m->arg_len[k]);
        return;
    }
    char arg[REASON_TEXT_BYTES];
    size_t n = m->arg_len[k] < sizeof(arg) - 1 ? m->arg_len[k] : sizeof(arg) - 1;
    memcpy(arg, m->arg[k], n);
    arg[n] = '\0';
    translate(lang, arg, o, depth + 1);
}

static int translate(enum msg_lang lang, const char *text, struct out *o, int depth)
{
    struct match m = { .nargs = 0 };
    int i = best_template(text, &m);
    if (i < 0 || lang == LANG_EN) {
        out_put(o, text, strlen(text));
        return i;
    }
    const char *z = table[i].zh;
    while (*z) {
        size_t run = strcspn(z + 1, "%") + 1;   /* up to the next '%' */
        int k = z[0] == '%' && z[1] >= '1' && z[1] <= '9' ? z[1] - '1' : -1;
        if (k >= 0) {
            if (k < m.nargs)
                put_arg(lang, &m, k, o, depth);
            run = 2;
        } else {
            out_put(o, z, run);             /* whole: a character is never split */
        }
        z += run;
    }
    return i;
}

int reason_translate(enum msg_lang lang, const char *text, char *out, size_t out_len)
{
    if (out_len == 0)
        return -1;
    struct out o = { out, out_len, 0, false };
    out[0] = '\0';
    return translate(lang, text, &o, 0);
}

int reason_count(void)
{
    return TABLE_SIZE;
}

const char *reason_template(int i, enum msg_lang lang)
{
    if (i < 0 || i >= TABLE_SIZE)
        return NULL;
    return lang == LANG_ZH ? table[i].zh : table[i].en;
}
