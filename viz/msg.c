/* msg.c -- the visualizer's one message table, English and Chinese.
 * See msg.h. A new string is a new id and one line here, never an
 * if (zh) in the code that draws. */
#include "msg.h"
#include "screen.h"

#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>

static const char *const table[MSG_COUNT][LANG_COUNT] = {
    [M_KEYS_FULL] = { "| q quit p pause tab focus t list/grid l log +/- speed ? help",
                      "| q 退出 p 暂停 tab 切换窗格 t 列表/网格 l 日志 +/- 快慢 ? 帮助" },
    [M_KEYS_SHORT] = { "q quit  ? help", "q 退出  ? 帮助" },
    [M_PAUSED] = { "PAUSED ", "已暂停 " },

    [M_PID_UP] = { " pid %d  up %s", " pid %d  已运行 %s" },
    [M_GONE] = { "  GONE: the server exited", "  已退出：服务器进程已结束" },
    [M_STOPPING] = { "  stopping", "  正在停止" },
    [M_CONNS] = { "conns %llu", "连接 %llu" },
    [M_RATES_WIDE] = { "  lines/s %s  handle p50 %s  p99 %s", "  行/秒 %s  处理 p50 %s  p99 %s" },
    [M_FAILS_WIDE] = { "  rejected %llu  errors %llu", "  拒绝 %llu  错误 %llu" },
    [M_FAILS_NARROW] = { " rej %llu err %llu", " 拒绝 %llu 错误 %llu" },
    [M_RATES_NARROW] = { "  %s/s handle p50 %s p99 %s", "  %s行/秒 处理 p50 %s p99 %s" },
    [M_THREADS] = { "threads %llu:", "线程 %llu：" },
    [M_EXITED_WIDE] = { " %u exited in %llus (%llu in all)", " %u 个 %llu 秒内结束（共 %llu）" },
    [M_WAITING_FIRST] = { "waiting for the first snapshot", "等待第一份快照" },
    [M_SERVER_EXITED] = { "pid %d: the server exited", "pid %d：服务器进程已结束" },
    [M_UNREADABLE] = { "  BOARD UNREADABLE: the server lives", "  看板无法读取：服务器进程仍在" },
    [M_BOARD_UNREADABLE] = { "pid %d lives, but its board cannot be read (%s): trying again",
                             "pid %d 仍在运行，但其看板无法读取（%s）：继续重试" },

    [M_COL_THREAD] = { "THREAD", "线程" },
    [M_COL_STATE] = { "STATE", "状态" },
    [M_COL_FOR] = { "FOR", "持续" },
    [M_COL_CPU] = { "CPU%", "CPU%" },
    [M_COL_CONN] = { "CONN", "连接" },
    [M_COL_LINES] = { "LINES", "行数" },
    [M_BY_ROLE] = { "", "" },
    [M_BY_STATE] = { " (by state)", "（按状态）" },
    [M_BY_LINES] = { " (by lines)", "（按行数）" },
    [M_BY_CPU] = { " (by CPU)", "（按 CPU）" },
    [M_SHOWN_OF] = { "%d of %d shown (%d-%d; up/down PgUp/PgDn Home/End, Enter: detail)",
                     "显示 %d 个，共 %d 个（第 %d-%d 个；上/下 PgUp/PgDn Home/End，Enter 看详情）" },
    [M_GRID_TITLE] = { "one cell per thread (%d shown%s)", "每格一个线程（显示 %d 个%s）" },
    [M_GRID_MORE] = { "; more counted above", "；其余只计入上方总数" },

    /* Headers are aligned by display width over the rows view.c draws. */
    [M_LOOPS_WIDE] = { "LOOP            CHANNELS TASK QUEUE       OUTPUT PAUSED IO/TASK PHASE",
                       "事件循环            通道 任务队列           待写 已暂停 IO/任务 阶段" },
    [M_LOOPS_MID] = { "LOOP            CHANNELS TASK QUEUE       IO/TASK PHASE",
                      "事件循环            通道 任务队列         IO/任务 阶段" },
    [M_LOOPS_NARROW] = { "LOOP       CHANS TASK QUEUE    IO/TASK PHASE",
                         "事件循环    通道 任务队列      IO/任务 阶段" },
    [M_LOOPS_TIGHT] = { "LOOP      CHANS QUEUE PHASE",
                        "事件循环   通道  队列 阶段" },
    [M_QUEUES] = { "QUEUE           DEPTH                       HIGH  REJECTED",
                   "队列            深度                      高水位      拒绝" },
    [M_BLOCKED] = { " BLOCKED %s", " 阻塞 %s" },
    [M_TASKS_STARVE] = { " TASKS STARVE I/O x%llu", " 任务饿死 I/O x%llu" },
    [M_EVENTS] = { "EVENTS (newest last)", "事件（最新的在最后）" },
    [M_PHASE_START] = { "start", "启动" },
    [M_PHASE_WAIT] = { "wait", "等待" },
    [M_PHASE_IO] = { "io", "IO" },
    [M_PHASE_TASKS] = { "tasks", "任务" },
    [M_PHASE_STOP] = { "stop", "停止" },

    [M_STATE_IDLE] = { "idle", "空闲" },
    [M_STATE_WAITING] = { "waiting", "等待事件" },
    [M_STATE_RUNNING] = { "running", "运行中" },
    [M_STATE_RUNNABLE] = { "runnable", "可运行" },
    [M_STATE_BLOCKED_IO] = { "blocked-io", "阻塞于读写" },
    [M_STATE_BLOCKED_SLEEP] = { "blocked-sleep", "阻塞于sleep" },
    [M_STATE_TERMINATED] = { "terminated", "已结束" },

    /* The glossary's names for what each thread is. */
    [M_ROLE_ACCEPTOR] = { "acceptor", "接收线程" },
    [M_ROLE_CONN] = { "conn", "连接线程" },
    [M_ROLE_WATCHDOG] = { "watchdog", "值守线程" },
    [M_ROLE_POOL_WORKER] = { "pool-worker", "任务线程" },
    [M_ROLE_BOSS] = { "boss", "boss 线程" },
    [M_ROLE_WORKER_LOOP] = { "worker-loop", "worker 事件循环" },
    [M_ROLE_BUSINESS] = { "business", "业务线程" },
    [M_ROLE_CHECKER] = { "checker", "阻塞线程检查器" },
    [M_ROLE_MAIN] = { "main", "主线程" },
    [M_ROLE_CARRIER] = { "carrier", "载体线程" },
    [M_ROLE_VTHREAD] = { "vthread", "虚拟线程" },
    [M_ROLE_MONITOR] = { "monitor", "监控线程" },

    [M_EV_ACCEPT] = { "accept", "接受" },
    [M_EV_ASSIGN] = { "assign", "分配" },
    [M_EV_CLOSE] = { "close", "关闭" },
    [M_EV_SPAWN] = { "spawn", "新线程" },
    [M_EV_EXIT] = { "exit", "线程结束" },
    [M_EV_GROW] = { "grow", "扩容" },
    [M_EV_SHRINK] = { "shrink", "缩容" },
    [M_EV_QUEUED] = { "queued", "入队" },
    [M_EV_RUN] = { "run", "执行" },
    [M_EV_TIMER] = { "timer", "定时器" },
    [M_EV_REJECT] = { "reject", "拒绝" },
    [M_EV_BLOCKED] = { "blocked", "阻塞" },
    [M_EV_ERROR] = { "error", "错误" },

    [M_TOO_SMALL] = { "terminal too small: %dx%d", "终端太小：%dx%d" },
    [M_NEED_AT_LEAST] = { "need at least %dx%d; q quits", "至少需要 %dx%d；q 退出" },
    [M_NO_SERVERS] = { "threadlab top: no servers running", "threadlab top：没有正在运行的服务器" },
    [M_LOOKED_IN] = { "looked in %s", "查找位置：%s" },
    [M_START_ONE] = { "start one:  threadlab serve bio   (this screen waits for it)",
                      "启动一个：  threadlab serve bio   （本屏幕会等它）" },
    [M_ZOOMED] = { "pane %d of %d, zoomed (tab: the next; after the last, all)",
                   "第 %d 个窗格（共 %d 个），已放大（tab：下一个；最后一个之后回到全部）" },
    [M_ONE_PANE] = { "pane %d of %d (too small for all; tab switches)",
                     "第 %d 个窗格（共 %d 个）（放不下全部；tab 切换）" },

    [M_HELP_1] = { "threadlab top: keys", "threadlab top：按键" },
    [M_HELP_2] = { "", "" },
    [M_HELP_3] = { "  q        quit", "  q        退出" },
    [M_HELP_4] = { "  p        pause / resume (the picture holds still)",
                   "  p        暂停 / 继续（画面静止，便于讲解）" },
    [M_HELP_5] = { "  tab, 1-5 focus a pane (below 120x40: tab zooms each in turn)",
                   "  tab, 1-5 切换窗格（小于 120x40 时 tab 依次放大每个窗格）" },
    [M_HELP_6] = { "  t        threads as a list, a grid, or automatic",
                   "  t        线程显示为列表、网格或自动" },
    [M_HELP_7] = { "  o        order threads by role, state (running first), lines, CPU",
                   "  o        线程排序：按角色、状态（运行中在前）、行数、CPU" },
    [M_HELP_8] = { "  l        show / hide the event log", "  l        显示 / 隐藏事件日志" },
    [M_HELP_9] = { "  up/down  the list: select a thread (PgUp PgDn Home End)",
                   "  上/下    在列表中选择线程（PgUp PgDn Home End）" },
    [M_HELP_10] = { "  Enter    the selected thread: its connection or loop, bytes, CPU",
                    "  Enter    所选线程：它的连接或事件循环、字节数、CPU" },
    [M_HELP_11] = { "  + / -    refresh faster / slower", "  + / -    刷新加快 / 减慢" },
    [M_HELP_12] = { "  ?        this help (any key closes it)", "  ?        本帮助（按任意键关闭）" },
    [M_HELP_13] = { "", "" },
    [M_HELP_14] = { "A grid cell is one thread, its letter its state:",
                    "网格中每格是一个线程，字母表示它的状态：" },
    [M_HELP_15] = { "  R running  b blocked in read/write  S blocked in !sleep",
                    "  R 运行中  b 阻塞于读写  S 阻塞于 !sleep" },
    [M_HELP_16] = { "  w waiting for events  . idle  x ended (fades after 3 s)",
                    "  w 等待事件  . 空闲  x 已结束（3 秒后淡出）" },
    [M_HELP_17] = { "  r runnable: ready, waiting for a core (sim --viz only)",
                    "  r 可运行：就绪，等待 CPU 核（仅 sim --viz）" },
    [M_HELP_18] = { "CPU% is of one core, from /proc/PID/task/TID/stat; \"-\": no figure",
                    "CPU% 以一个核为 100，取自 /proc/PID/task/TID/stat；“-”：无数据" },

    [M_D_TITLE_TID] = { "%s  (%s, tid %u)", "%s  （%s，tid %u）" },
    [M_D_TITLE_NOTID] = { "%s  (%s, no kernel thread)", "%s  （%s，无内核线程）" },
    [M_D_STATE] = { "state        %s, for %s", "状态         %s，已持续 %s" },
    [M_D_CONN] = { "connection   %llu", "连接         %llu" },
    [M_D_NO_CONN] = { "connection   none now", "连接         当前无" },
    [M_D_LINES] = { "lines        %llu answered", "行数         已应答 %llu 行" },
    [M_D_BYTES] = { "bytes        in %s, out %s", "字节         读入 %s，写出 %s" },
    [M_D_CPU] = { "CPU          %s%s now; running %s, waiting or blocked %s in all",
                  "CPU          当前 %s%s；累计运行 %s，等待或阻塞 %s" },
    [M_D_LOOP] = { "its loop     %llu channels, task queue %llu, timers %llu",
                   "所属事件循环 %llu 个通道，任务队列 %llu，定时器 %llu" },
    [M_D_LOOP2] = { "             io/task %d/%d, phase %s, longest task %s%s",
                    "             IO/任务 %d/%d，阶段 %s，最长任务 %s%s" },
    [M_D_PENDING_LOOP] = { "pending out  - (the board has no per-loop figure for it yet)",
                           "待发输出     -（看板上还没有每个事件循环的这项数据）" },
    [M_D_PENDING_NONE] = { "pending out  none held: it writes a read's replies before it reads again",
                           "待发输出     无：它写完一次读到的全部回复后才再读" },
    [M_D_PENDING_NO_CONN] = { "pending out  - (it serves no connection)",
                              "待发输出     -（它不服务连接）" },
    [M_D_CLOSE] = { "(any key closes this)", "（按任意键关闭）" },
    [M_D_GONE] = { "%s: no longer on the board (any key closes this)",
                   "%s：已不在看板上（按任意键关闭）" },

    [M_R_STATUS] = { "[replay] frame %d/%d  t=%.1fs/%.1fs  speed %gx  %s  ",
                     "[回放] 第 %d/%d 帧  t=%.1fs/%.1fs  速度 %gx  %s  " },
    [M_R_PAUSED] = { "PAUSED", "已暂停" },
    [M_R_PLAYING] = { "playing", "播放中" },
    [M_R_NEW_WARNING] = { "NEW WARNING here  ", "此处有新警告  " },
    [M_R_WARNINGS_GO_ON] = { "warnings go on  ", "警告仍在  " },
    [M_R_NO_WARNING_AFTER] = { "no warning starts after this frame  ",
                               "此帧之后没有新警告  " },
    [M_R_NO_WARNING_BEFORE] = { "no warning starts before this frame  ",
                                "此帧之前没有新警告  " },
    [M_R_CUT] = { "CUT SHORT after the last frame  ", "录制在最后一帧之后中断  " },
    [M_R_END] = { "THE END: q prints the table  ", "结束：按 q 打印结果表  " },
    [M_R_KEYS] = { "(space play, <- -> frame, , . event, w W new warning, 0-9 seek, +/- speed)",
                   "（空格 播放，<- -> 逐帧，, . 上/下一个事件，w W 新警告，0-9 跳转，+/- 速度）" },
    [M_S_STATUS] = { "[sim %s] t=%.6fs  event %llu  speed %gx  ",
                     "[模拟 %s] t=%.6fs  第 %llu 个事件  速度 %gx  " },
    [M_S_FINISHED] = { "FINISHED", "已结束" },
    [M_S_PAUSED] = { "PAUSED  ", "已暂停  " },
    [M_S_NEXT] = { "next: ", "下一个：" },
    [M_S_KEYS_SHORT] = { "   (space pause, s step, e next %s, b back, +/- speed, ? keys)",
                         "   （空格 暂停，s 单步，e 下一个 %s，b 后退，+/- 速度，? 按键）" },
    [M_S_KEYS_LONG] = { "[sim %s] keys: space pause/resume, s one event on, b one "
                        "event back, e on to the next event of the kind that happened last "
                        "(now: %s), + faster, - slower, q quit (the report follows), ? these keys",
                        "[模拟 %s] 按键：空格 暂停/继续，s 前进一个事件，b 后退一个事件，"
                        "e 前进到与上一个同类的下一个事件（现在：%s），+ 加快，- 减慢，"
                        "q 退出（随后打印报告），? 这些按键" },
    [M_S_KIND_ANY] = { "event", "事件" },
    [M_S_KIND_REPLY] = { "reply", "回复" },

    /* Each heading fits its column in both languages (check_view). */
    [M_T_MODEL] = { "model", "模型" },
    [M_T_LINES_S] = { "lines/s", "行/秒" },
    [M_T_MB_S] = { "MB/s", "MB/秒" },
    [M_T_THREADS] = { "threads", "线程" },
    [M_T_RSS] = { "RSS", "内存" },
    [M_T_CPU_S] = { "CPU s", "CPU 秒" },
    [M_T_VOL_CS] = { "vol cs", "主动切换" },
    [M_T_INVOL_CS] = { "invol cs", "被动切换" },
    [M_T_ERRORS] = { "errors", "错误" },
    [M_T_SERVER] = { "server", "服务器" },
    [M_T_ROUND_TRIP] = { "round-trip", "往返时间" },
    [M_T_NO_REPORT] = { "no report", "无报告" },
    [M_T_SCENARIO] = { "scenario %s: %s", "场景 %s：%s" },
    [M_T_SCENARIO_PER_MODEL] = { "scenario %s: %s, %g s per model",
                                 "场景 %s：%s，每个模型 %g 秒" },
    [M_T_CUT_SHORT] = { "(cut short: stopped after %.1f s of the %g s planned; figures "
                        "for that part)",
                        "（提前结束：运行 %.1f 秒后停止，原计划 %g 秒；数字只反映这一段）" },
    /* Two rows, each under 80 columns, like the table. */
    [M_T_SIDE_BY_SIDE] = { "(side by side on a shared machine; for numbers, run\n"
                           " threadlab compare --scenario %s)",
                           "（几个模型并排运行，共用这台机器的 CPU；要看可比的数字，请运行\n"
                           " threadlab compare --scenario %s）" },
    [M_T_TOO_FEW_FILES] = { "TOO FEW FILES: %s", "文件描述符不够：%s" },

    [M_SC_STEADY] = { "many connections, small lines, closed loop",
                      "许多连接，短行，闭环（收到回显才发下一行）" },
    [M_SC_STEADY_SAY] = {
        "Count threads: BIO one per connection, the pool up to --max, the reactor one "
        "loop, the multi-reactor a boss and workers; each also has its main thread, "
        "and the loops a checker.",
        "数一数线程：BIO 每个连接一个线程，线程池最多 --max 个任务线程，Reactor 只有一个"
        "事件循环，主从 Reactor 是一个 boss 加若干 worker；每个服务器还有主线程，"
        "有事件循环的还有一个阻塞线程检查器。" },
    [M_SC_BURST] = { "connections arrive in four waves", "连接分四波到来" },
    [M_SC_BURST_SAY] = {
        "Connections arrive in waves: BIO's threads jump with each wave, the pool "
        "grows its task threads, the loops just take more channels.",
        "连接一波一波到来：BIO 的线程数随每一波跳升，线程池增加任务线程，"
        "事件循环只是多接管一些通道。" },
    [M_SC_SLOW] = { "1% of lines run !sleep 200 in the handler",
                    "1% 的行在处理器里执行 !sleep 200" },
    [M_SC_SLOW_SAY] = {
        "1% of lines sleep 200 ms: the reactor's one loop sleeps too (BLOCKED) and all "
        "its connections wait; BIO and the pool block just one thread; vthread's monitor "
        "gives a stuck carrier to a spare thread after 20 ms.",
        "1% 的行 sleep 200 毫秒：Reactor 唯一的事件循环也跟着睡（阻塞），它的所有连接"
        "都得等；BIO 和线程池只阻塞一个线程；vthread 的监控线程 20 毫秒后让备用线程接管"
        "卡住的载体线程。" },
    [M_SC_CPU] = { "20% of lines burn 2 ms of CPU (!cpu 2000)",
                   "20% 的行消耗 2 毫秒 CPU（!cpu 2000）" },
    [M_SC_CPU_SAY] = {
        "20% of lines burn 2 ms of CPU: threads beyond the cores only queue for them. "
        "Lines/s level off alike; see BIO's context switches.",
        "20% 的行各消耗 2 毫秒 CPU：线程多于核数，多出来的只能排队等核。"
        "各模型的行/秒同样趋平；看看 BIO 的上下文切换。" },
    [M_SC_IDLE] = { "2000 connections, one line a second each (open loop)",
                    "2000 个连接，每个每秒一行（开环）" },
    [M_SC_IDLE_SAY] = {
        "2000 idle-ish connections: BIO holds 2000 threads blocked in read, the pool "
        "256 (the rest wait in its queue), the loops 2000 channels.",
        "2000 个几乎空闲的连接：BIO 占着 2000 个阻塞在 read 上的线程，线程池 256 个"
        "（其余连接在任务队列里等），事件循环则是 2000 个通道。" },
    [M_SC_MIXED] = { "connections in waves, !cpu and !sleep lines mixed in",
                     "连接分波到来，混有 !cpu 和 !sleep 行" },
    [M_SC_MIXED_SAY] = {
        "A bit of everything: waves of connections, 5% of lines burn 0.5 ms, 1% sleep "
        "50 ms. Which keeps its p99 lowest?",
        "样样都有一点：连接分波到来，5% 的行消耗 0.5 毫秒 CPU，1% 的行 sleep 50 毫秒。"
        "哪个模型的 p99 最低？" },
};

static const enum msg_id state_ids[STATE_COUNT] = {
    [STATE_IDLE] = M_STATE_IDLE, [STATE_WAITING] = M_STATE_WAITING,
    [STATE_RUNNING] = M_STATE_RUNNING, [STATE_RUNNABLE] = M_STATE_RUNNABLE,
    [STATE_BLOCKED_IO] = M_STATE_BLOCKED_IO,
    [STATE_BLOCKED_SLEEP] = M_STATE_BLOCKED_SLEEP,
    [STATE_TERMINATED] = M_STATE_TERMINATED,
};

static const enum msg_id role_ids[ROLE_COUNT] = {
    [ROLE_ACCEPTOR] = M_ROLE_ACCEPTOR, [ROLE_CONN] = M_ROLE_CONN,
    [ROLE_WATCHDOG] = M_ROLE_WATCHDOG, [ROLE_POOL_WORKER] = M_ROLE_POOL_WORKER,
    [ROLE_BOSS] = M_ROLE_BOSS, [ROLE_WORKER_LOOP] = M_ROLE_WORKER_LOOP,
    [ROLE_BUSINESS] = M_ROLE_BUSINESS, [ROLE_CHECKER] = M_ROLE_CHECKER,
    [ROLE_MAIN] = M_ROLE_MAIN, [ROLE_CARRIER] = M_ROLE_CARRIER,
    [ROLE_VTHREAD] = M_ROLE_VTHREAD, [ROLE_MONITOR] = M_ROLE_MONITOR,
};

static const enum msg_id event_ids[EV_COUNT] = {
    [EV_ACCEPT] = M_EV_ACCEPT, [EV_ASSIGN] = M_EV_ASSIGN, [EV_CLOSE] = M_EV_CLOSE,
    [EV_SPAWN] = M_EV_SPAWN, [EV_EXIT] = M_EV_EXIT, [EV_GROW] = M_EV_GROW,
    [EV_SHRINK] = M_EV_SHRINK, [EV_TASK_QUEUED] = M_EV_QUEUED, [EV_TASK_RUN] = M_EV_RUN,
    [EV_TIMER] = M_EV_TIMER, [EV_REJECT] = M_EV_REJECT, [EV_BLOCKED] = M_EV_BLOCKED,
    [EV_ERROR] = M_EV_ERROR,
};

static int chosen = -1;          /* enum msg_lang, or -1: ask the environment */

/* The first of LC_ALL, LC_MESSAGES, LANG that is set, as POSIX orders them. */
static enum msg_lang lang_from_env(void)
{
    static const char *const vars[] = { "LC_ALL", "LC_MESSAGES", "LANG" };
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return strncmp(v, "zh", 2) == 0 ? LANG_ZH : LANG_EN;
    }
    return LANG_EN;
}

enum msg_lang msg_lang(void)
{
    if (chosen < 0)
        chosen = (int)lang_from_env();
    return (enum msg_lang)chosen;
}

int msg_set_lang(const char *name)
{
    if (!strcmp(name, "en"))
        chosen = LANG_EN;
    else if (!strcmp(name, "zh"))
        chosen = LANG_ZH;
    else
        return -EINVAL;
    return 0;
}

enum msg_lang msg_use_lang(enum msg_lang lang)
{
    enum msg_lang before = msg_lang();
    chosen = (int)lang;
    return before;
}

const char *msg_in(enum msg_lang lang, enum msg_id id)
{
    if ((unsigned)id >= MSG_COUNT || (unsigned)lang >= LANG_COUNT)
        return "?";
    const char *s = table[id][lang];
    return s ? s : table[id][LANG_EN];
}

const char *msg(enum msg_id id)
{
    return msg_in(msg_lang(), id);
}

bool msg_is_text(enum msg_id id)
{
    return (id >= M_HELP_1 && id <= M_HELP_18) || id == M_COL_CPU ||
           (id >= M_T_MODEL && id <= M_T_NO_REPORT) ||
           (id >= M_SC_STEADY && id <= M_SC_MIXED_SAY);
}

int msg_width(const char *text)
{
    return screen_text_width(text);
}

int msg_fput_col(FILE *out, const char *text, int width, bool right_align)
{
    int text_w = screen_text_width(text);
    int pad = text_w < width ? width - text_w : 0;
    if (right_align)
        fprintf(out, "%*s%s", pad, "", text);
    else
        fprintf(out, "%s%*s", text, pad, "");
    return text_w + pad;
}

const char *msg_state(enum board_state s)
{
    return (unsigned)s < STATE_COUNT ? msg(state_ids[s]) : "?";
}

const char *msg_role(enum board_role r)
{
    return (unsigned)r < ROLE_COUNT ? msg(role_ids[r]) : "?";
}

const char *msg_event(enum board_event_kind k)
{
    return (unsigned)k < EV_COUNT ? msg(event_ids[k]) : "?";
}

void msg_setup_locale(void)
{
    setlocale(LC_CTYPE, "");
    if (msg_lang() == LANG_ZH && strcmp(nl_langinfo(CODESET), "UTF-8") != 0)
        setlocale(LC_CTYPE, "C.UTF-8");
}
