/* cli_help_zh.c -- every command's --help in Chinese, for a Chinese class
 * (--lang zh, or a zh LANG): written in the glossary's words
 * (docs/glossary.md), option for option as the English text beside each
 * command's code; tests/cli/run.sh checks that both list the same options.
 * A text a command prints with printf (its defaults) has the English
 * text's conversions, in the same order; the others are printed as they
 * are. (sim's is cli_sim_help.c.) */
#include "cli_help_zh.h"

#include <string.h>

const char *cli_command_summary_zh(const char *name)
{
    static const struct { const char *name, *summary; } summaries[] = {
        { "serve", "运行一个模型的回显服务器（bio、pool、reactor 等五个模型）" },
        { "load", "用会逐字节核对回复的客户端给回显服务器加负载" },
        { "top", "实时查看运行中的服务器：线程、事件循环和队列" },
        { "replay", "回放 top、demo 或 sim --viz 的录像，可前进可后退" },
        { "demo", "几个模型在同一个场景下并排运行，最后给出对比表" },
        { "compare", "几个模型在同一份负载下逐个运行：给出数字" },
        { "sim", "在任意大小的仿真机器上运行一个模型（结果确定）" },
        { "calibrate", "测量本机的各项开销，写成给 sim 用的 profile" },
    };
    for (size_t i = 0; i < sizeof(summaries) / sizeof(summaries[0]); i++)
        if (!strcmp(summaries[i].name, name))
            return summaries[i].summary;
    return NULL;
}

const char *cli_model_summary_zh(const char *name)
{
    static const struct { const char *name, *summary; } summaries[] = {
        { "bio", "每连接一个线程，阻塞 I/O" },
        { "pool", "接收线程 + 值守线程池，每个连接一个任务" },
        { "reactor", "一个事件循环完成 accept、I/O 和处理器" },
        { "multireactor", "boss 事件循环 accept，worker 事件循环服务（Netty）" },
        { "vthread", "虚拟线程：在载体线程上运行阻塞风格的代码（M:N）" },
    };
    for (size_t i = 0; i < sizeof(summaries) / sizeof(summaries[0]); i++)
        if (!strcmp(summaries[i].name, name))
            return summaries[i].summary;
    return NULL;
}

const char cli_usage_head_zh[] =
    "用法：threadlab COMMAND [选项]\n"
    "\n"
    "服务器线程模型的教学工具：真实的回显服务器、逐字节核对的负载生成器，\n"
    "以及实时的可视化界面。\n"
    "\n"
    "命令：\n";

const char cli_usage_tail_zh[] =
    "\n"
    "threadlab COMMAND --help 列出一个命令的选项（加 --lang zh 或在中文 LANG 下\n"
    "是中文）。\n"
    "试试：threadlab demo          （或：make demo）\n"
    "      threadlab serve bio &   threadlab load 127.0.0.1:7007 --conns 64\n";

/* printf: the port, backlog, pool min, max, queue, idle-ms, adaptive
 * window, io-ratio, blocked warn, blocked trace, workers, carriers, the
 * overflow's exit status, handoff-ms, and the port again. */
const char cli_serve_options_zh[] =
    "所有模型的选项：\n"
    "  --port N         TCP 端口（默认 %d；0 表示随便挑一个空闲端口）\n"
    "  --bind ADDR      监听的地址（默认 127.0.0.1）\n"
    "  --backlog N      accept 队列长度，即 SO_BACKLOG（默认 %d）\n"
    "  --max-line N     一行最长多少字节，不算 '\\n'（默认 65536）；\n"
    "                   更长的行得到 \"!err line-too-long\" 并被关闭连接\n"
    "  --keepalive      给每个连接设置 SO_KEEPALIVE\n"
    "  --nodelay        给每个连接设置 TCP_NODELAY\n"
    "  --port-file F    开始监听后把端口写进文件 F（给脚本用）\n"
    "  --no-board       不发布实时状态（threadlab top 看不到这个服务器）；\n"
    "                   用来测量看板本身的开销\n"
    "  --max-conns N    最多 N 个打开的连接；超出的得到 \"!err busy\" 并被关闭\n"
    "                   （默认 0：不限）\n"
    "  --idle-timeout MS  关闭这么久什么也没发的连接\n"
    "  --line-timeout MS  关闭一行过了这么久还没发完的连接（slowloris）\n"
    "  --stall-timeout MS 关闭这么久一个回复都不读的连接\n"
    "                   （三者默认都是 0：从不）\n"
    "\n"
    "bio：\n"
    "  --max-threads N  最多 N 个连接线程；超出的得到 \"!err busy\" 并被关闭\n"
    "                   （默认 0：不限）\n"
    "  --stack-kb N     每个连接线程的栈大小，单位 KiB\n"
    "                   （默认：系统的，通常是 8192；最小 16）\n"
    "\n"
    "pool：\n"
    "  --min N          线程池最小尺寸：空闲时也保留的任务线程数（默认 %d）\n"
    "  --max N          线程池最大尺寸：任务线程最多几个（默认 %d）；第 max+1\n"
    "                   个连接在队列里等，直到有线程空出来\n"
    "  --queue N        可以排队等待的连接数（默认 %d）\n"
    "  --idle-ms N      超过最小尺寸的线程空闲这么久就结束（默认 %d）\n"
    "  --reject P       队列满时的拒绝策略：abort（\"!err busy\"）、caller-runs\n"
    "                   （由接收线程自己服务）、discard-oldest、block（默认 abort）\n"
    "  --adaptive       最小尺寸跟随一个时间窗口内的平均队列长度\n"
    "  --adaptive-window-ms N  这个窗口（默认 %d）\n"
    "\n"
    "reactor：\n"
    "  --offload N      把 !cpu、!sleep 和 !who 行转交给有 N 个线程的业务线程池；\n"
    "                   回复仍按顺序回来（默认 0：在事件循环上运行，卡住\n"
    "                   每一个连接）；转交出去的 !who 报出运行它的业务线程\n"
    "  --io-ratio P     事件循环用于 I/O 与任务的时间百分比，1..100（默认 %d）\n"
    "  --blocked-warn-ms N  事件循环在一个处理器里卡了这么久就报出来，\n"
    "                   卡着不动时每 N 毫秒再报一次（默认 %d）\n"
    "  --blocked-trace-ms N 卡了这么久就打印卡住的事件循环线程的栈\n"
    "                   （默认 %d；0：从不）\n"
    "\n"
    "multireactor（以及同上的 --offload、--io-ratio、--blocked-warn-ms、\n"
    "--blocked-trace-ms）：\n"
    "  --bosses N       负责 accept 的 boss 事件循环数（默认 1）\n"
    "  --workers N      负责服务的 worker 事件循环数（默认 2 x 核数 = %d）\n"
    "\n"
    "vthread：\n"
    "  --carriers N     运行虚拟线程的载体线程数（默认：核数 = %d）\n"
    "  --stack SIZE     每个虚拟线程的栈：字节数，或带 K、M（默认 64K，\n"
    "                   最小 16K）；栈溢出时报出是谁，服务器以状态 %d 退出\n"
    "  --handoff-ms N   载体线程在阻塞调用（!sleep）里卡了这么久，就由一个\n"
    "                   备用线程接管它的运行队列（默认 %d）\n"
    "  --pin            不接管：阻塞调用占住它的载体线程，上面的每个虚拟线程\n"
    "                   都得等（Java 的钉住）\n"
    "\n"
    "协议见 docs/protocol.md。试试：nc 127.0.0.1 %d，然后输入一行，\n"
    "或者 !who、!cpu 1000、!sleep 500、!quit。\n";

const char cli_serve_head_zh[] =
    "用法：threadlab serve MODEL [选项]\n"
    "\n"
    "运行一个模型的回显服务器，直到收到 SIGINT（Ctrl-C）或 SIGTERM，然后\n"
    "优雅关闭：不再接受连接，回复已经收到的行，刷出，关闭，等每个线程结束。\n"
    "\n"
    "模型：\n";

/* printf: the refresh's default and its default with --big. */
const char cli_top_usage_zh[] =
    "用法：threadlab top [选项] [PID|MODEL ...]\n"
    "\n"
    "实时查看运行中的 threadlab 服务器：按状态分的线程、事件循环、队列、\n"
    "延迟和事件日志，最多四个服务器并排。不给 PID 或 MODEL 时，查看每个\n"
    "在运行的服务器（新启动的也会加进来）。\n"
    "\n"
    "选项：\n"
    "  --plain          打印文本快照，不画全屏界面（输出不是终端时默认如此）\n"
    "  --json           同 --plain，但每个服务器每次快照一行 JSON：计数器、\n"
    "                   按状态分的线程、handle_p50_us 和 handle_p99_us\n"
    "                   （处理时间，不是往返时间）\n"
    "  --count N        配合 --plain 或 --json：N 次快照后停止\n"
    "  --record FILE    同时把每次刷新写进 FILE，之后用 threadlab replay FILE\n"
    "                   回放；q、Ctrl-C、SIGTERM 和 SIGHUP 都会把文件写完整；\n"
    "                   中途被切断的文件（kill -9、磁盘满）仍能回放它完整的帧\n"
    "  --size WxH       配合 --plain：快照的大小（默认 120x40）\n"
    "  --interval MS    每 MS 毫秒刷新一次（默认 %d；加 --big 时 %d）\n"
    "  --big            投影模式：格子更大、粗体、刷新更慢\n"
    "  --lang en|zh     界面用英文或中文（LC_ALL、LC_MESSAGES 或 LANG 以 zh\n"
    "                   开头时默认中文）\n"
    "  --caption TEXT   窗格下方的一行字，说明该看什么（加 --record 时和\n"
    "                   demo 的解说一样录进录像）\n"
    "  -h, --help       本帮助\n"
    "\n"
    "按键：q 退出，p 暂停，tab 或 1-5 选中一个窗格，t 列表/网格，l 事件日志，\n"
    "      o 按角色/状态/行数/CPU 排序，上/下 PgUp/PgDn Home/End 选择，\n"
    "      Enter 所选线程的数字，+ / - 刷新快一些 / 慢一些，? 帮助。\n"
    "      列表里的 CPU%% 来自 /proc/PID/task/TID/stat（\"-\"：没有）\n"
    "\n"
    "颜色跟着线程状态走；NO_COLOR=1 关掉颜色（状态字母还在）。画不了全屏的\n"
    "终端（TERM=dumb）得到文本快照，和 --plain 一样。退出或被杀掉的服务器\n"
    "在一次刷新之内标为已退出。看板放在 $XDG_RUNTIME_DIR/threadlab 或\n"
    "/tmp/threadlab-$UID（THREADLAB_BOARD_DIR 可以改）。见 docs/visualizer.md。\n";

/* Printed as it is (no printf). */
const char cli_replay_usage_zh[] =
    "用法：threadlab replay FILE [选项]\n"
    "\n"
    "在同一个可视化界面里回放 threadlab top --record、demo --record 或\n"
    "sim --viz --record 录下的录像，不需要运行任何服务器。\n"
    "演示的录像以它的对比表结尾（replay 退出时打印）；\n"
    "sim --viz 的录像每个事件一帧，带着它的“下一个：”一行。\n"
    "旁白和对比表录有中英两种，按 --lang 显示。\n"
    "每个演示场景的现成录像：recordings/（make recordings）。\n"
    "\n"
    "按键：空格 播放/暂停，<- ->（或 b n）后退/前进一帧，, . 上一个/下一个\n"
    "      有新事件的帧，w W 下一个/上一个开始出现警告的帧（事件循环的停顿，\n"
    "      直到它解除阻塞；一次拒绝或线程池缩容，而前一帧里同一来源没有；\n"
    "      过了最后一个时会说出来），0-9 跳到 0%..90%，g G 第一/最后一帧，\n"
    "      + - 速度，q 退出；以及 top 的按键（tab 选中窗格，t 列表/网格，\n"
    "      l 日志，? 帮助）。移动时会暂停。\n"
    "\n"
    "选项：\n"
    "  --speed X        以录制时 X 倍的速度播放（默认 1）\n"
    "  --at S           跳到录像的第 S 秒（停在那里；配合 --plain：打印那一帧；\n"
    "                   --at 0 是第一帧）\n"
    "  --plain          把每一帧打印成文本（输出不是终端时默认如此）\n"
    "  --frame N        配合 --plain：只打印第 N 帧（超过最后一帧：出错）\n"
    "  --backward       配合 --plain：从最后一帧打印起\n"
    "  --size WxH       配合 --plain 或 --cast：帧的大小（默认 120x40）\n"
    "  --cast FILE      把每一帧按录制时的时间写进 FILE，格式是 asciicast v2\n"
    "                   （asciinema 这类终端录像播放器能播放：不需要\n"
    "                   threadlab），帧的内容和 --plain 打印的一样；演示的\n"
    "                   对比表在最后\n"
    "  --big            投影模式\n"
    "  --lang en|zh     界面用英文或中文（LC_ALL、LC_MESSAGES 或 LANG 以 zh\n"
    "                   开头时默认中文）\n"
    "  -h, --help       本帮助\n"
    "\n"
    "中途被切断的录像（录制进程被杀、磁盘满）照样回放它完整的帧；在哪里被\n"
    "切断，会写在 stderr 和窗格下方。不是录像的文件、其他版本的录像、改动\n"
    "过任何一个字节的录像、第一帧都不完整的录像都会被拒绝并说明原因\n"
    "（退出状态 1）。\n";

const char cli_demo_head_zh[] =
    "用法：threadlab demo [选项]\n"
    "\n"
    "在本机回环地址的空闲端口上把几个模型作为服务器启动，用同一个场景给每个\n"
    "加负载，并排观看；负载结束时（或按 q / Ctrl-C）全部停止，打印对比表。\n"
    "\n"
    "选项：\n";

const char cli_demo_options_zh[] =
    "  --plain          打印文本快照，不画全屏界面（输出不是终端时默认如此）\n"
    "  --interval MS    每 MS 毫秒刷新一次（默认 500；加 --plain 时 2000）\n"
    "  --big            投影模式：粗体、网格格子更大、刷新更慢（1000 毫秒）\n"
    "  --wide           显示所有列的对比表（125 列宽：多出 MB/s、p99.9 和\n"
    "                   上下文切换）；默认的表放得进 80 列\n"
    "  --record FILE    同时录下窗格显示的内容，之后用 threadlab replay FILE\n"
    "                   回放（不需要服务器）；写不了的 FILE 在启动任何服务器\n"
    "                   之前就被拒绝\n"
    "  --lang en|zh     界面用英文或中文（LC_ALL、LC_MESSAGES 或 LANG 以 zh\n"
    "                   开头时默认中文）\n"
    "  -h, --help       本帮助\n"
    "\n";

const char cli_demo_tail_zh[] =
    "\n"
    "按键同 top：q 退出，p 暂停，tab 选中窗格，l 日志，? 帮助。窗格下方的\n"
    "那一行说明该看什么。几个模型并排运行时共用这台机器的核：要看数字，\n"
    "用 threadlab compare。见 docs/demo.md。\n";

const char cli_compare_head_zh[] =
    "用法：threadlab compare [选项]\n"
    "\n"
    "在同一份负载下让每个模型轮流运行（这样它们不会争抢 CPU 核），打印一张表：\n"
    "行/秒、MB/s、往返时间的 p50、p99 和 p99.9（客户端测得的：top 的\n"
    "“处理 p50”只是服务器的处理时间）、线程峰值（进程的全部线程，来自\n"
    "/proc）、内存（RSS）峰值、CPU 秒数、主动和被动上下文切换、错误。\n"
    "\n"
    "选项：\n";

/* printf: the sleep of sleep-pct's lines, in ms. */
const char cli_compare_options_zh[] =
    "  --csv FILE       同时把表写成 CSV\n"
    "  --json           改为以 JSON 打印这张表\n"
    "  --plot FILE      把柱状图画进 FILE.png 或 FILE.svg（需要 gnuplot）\n"
    "  --sweep VAR=LIST 每个模型在 LIST 的每个取值上各跑一次：每个（模型，取值）\n"
    "                   一行；加 --plot 时画出曲线（行/秒、p99、线程、内存随\n"
    "                   VAR 变化，每个模型一条线）。\n"
    "                   VAR：conns（连接数）、depth（在途的行数）、size（每行\n"
    "                   字节数）、cpu-us（每一行都是 \"!cpu N\"）、sleep-pct\n"
    "                   （这个百分比的行是 \"!sleep %d\"）。LIST：1,10,100 或\n"
    "                   1e1..1e4（其间的 10 的各次幂）；须递增。\n"
    "                   conns 在本机的文件描述符上限处停下（到时会说）；\n"
    "                   --duration 是每个点的时长\n"
    "  --lang en|zh     表头和表格前后的说明用英文或中文（LC_ALL、LC_MESSAGES\n"
    "                   或 LANG 以 zh 开头时默认中文）；CSV 和 JSON 给程序读，\n"
    "                   保持英文\n"
    "  -h, --help       本帮助\n"
    "\n";

const char cli_compare_tail_zh[] =
    "\n"
    "Ctrl-C 停止正在运行的模型，打印已有的各行。\n"
    "没有 gnuplot 时，--plot 会说明怎样安装，并写出 FILE.csv。\n"
    "例：threadlab compare --sweep conns=1,10,100,1000,10000 --plot c10k.png\n"
    "数字来自一台机器上的一次运行：比较行与行，不要比较两次运行。\n";

/* printf: the default duration, in seconds. */
const char cli_plan_options_zh[] =
    "  --models LIST    逗号分隔的模型（默认 bio,pool,reactor,multireactor）\n"
    "  --scenario NAME  负载场景（默认 steady；见下）\n"
    "  --duration S     每个模型加负载的秒数（默认 %g）\n"
    "  --conns N        每个模型的连接数（默认：场景自己的）\n";

/* Printed as it is (no printf). */
const char cli_load_usage_zh[] =
    "用法：threadlab load HOST:PORT [选项]\n"
    "\n"
    "向回显服务器打开连接，发送行，并核对每个回复都是发出的那一行，逐字节、\n"
    "按顺序。报告行/秒、MB/s、延迟百分位和按种类分的错误。退出状态：每一行\n"
    "都正确回来时为 0，出了任何错误为 1，命令写错为 2。\n"
    "\n"
    "选项：\n"
    "  -c, --conns N      连接数（默认 1）\n"
    "  -d, --depth N      每个连接在途的行数，闭环（默认 1）\n"
    "  -s, --size N       每行字节数，含 '\\n'（默认 64）；行里可以有除 '\\n'\n"
    "                     以外的任何字节，所以二进制数据也测到了\n"
    "  -t, --duration S   发送多少秒（默认 10）\n"
    "  -n, --lines N      一共 N 行后停止（这时 --duration 只在给出时才是上限）\n"
    "  -r, --rate R       开环：所有连接合计每秒 R 行；延迟从每行应当发出的\n"
    "                     时刻算起，所以停顿看得出来\n"
    "      --mix SPEC     命令行所占的比例，例如 cpu=200:10,sleep=50:1 表示\n"
    "                     10% 的行是 \"!cpu 200\"，1% 是 \"!sleep 50\"；\n"
    "                     task=200:50 表示一半的行是 \"!task 200\"：200 微秒的\n"
    "                     CPU 排进这个连接所属的事件循环（ioRatio 那一课）\n"
    "      --ramp S       在 S 秒内陆续建立连接（默认 0）\n"
    "      --waves N      连接在 --duration 内分 N 波建立（连接数阶梯式上升）\n"
    "      --threads N    客户端线程数（默认 1）\n"
    "      --timeout S    一个连接欠着回复、又 S 秒什么也没收到，就放弃它\n"
    "                     （默认 5）\n"
    "      --seed N       行内容的随机数种子（默认 1）\n"
    "      --json         以一个 JSON 对象打印报告\n"
    "      --no-progress  不显示进度行（它只在终端上显示）\n"
    "  -h, --help         本帮助\n"
    "\n"
    "Ctrl-C（SIGINT）或 SIGTERM 停止发送，等在途的回复回来，打印到目前为止的\n"
    "报告；再来一次就立刻结束。\n"
    "\n"
    "例：threadlab load 127.0.0.1:7007 --conns 200 --duration 5\n";

/* Printed as it is (no printf). */
const char cli_calibrate_usage_zh[] =
    "用法：threadlab calibrate [--out FILE] [--only GROUP,...] [--base FILE]\n"
    "\n"
    "在本机测量仿真器要计入的开销：read 和 write（16 个回环连接上的 64 字节\n"
    "消息，在两个核上的两个线程之间回显，和负载下的服务器及其客户端付出的\n"
    "一样）、accept、close、epoll_wait、一次 eventfd 写、一次上下文切换、\n"
    "另一个核唤醒一个空闲核（它的 CPU 和延迟，取自线程自己的 CPU 时钟）、\n"
    "pthread_create、处理一行、系统调用和唤醒的离散程度及其尾部（p99、p99.9）、\n"
    "一个线程的常驻内存（碰过的栈页、内核栈），以及虚拟线程的切换（本次构建\n"
    "用的：asm 或 ucontext）、栈的映射和解除映射、处理器碰到的栈页；再从内核\n"
    "读出调度器的唤醒粒度（debugfs、/proc），读不到就用 CFS 的默认值\n"
    "1 毫秒 x (1 + log2 核数)。\n"
    "只要几秒；请在空闲的机器上运行。\n"
    "每项开销都逐次调用计时，测 5 轮；一轮的数字是过这一轮调用的 p50 和 p90\n"
    "的对数正态分布的均值（少数被其他进程拉长的调用两者都不影响），最终的\n"
    "数字是各轮的中位数。各轮相差超过它的 30%（形状参数：对数正态的 sigma\n"
    "相差超过 0.15）就重测，最多 3 次，之后拒绝这个数字。尾部（p99、p99.9）\n"
    "取自所有轮的调用合在一起，并分两半判断，偶数轮对奇数轮（相差在 0.15\n"
    "以内）。被拒绝的数字保留原值（内置的，或 --base 的），calibrate 仍会写出\n"
    "profile（每个数字的 p10/p50/p90 和离散程度作为注释写在里面），但退出\n"
    "状态为 1。由其他数字相减得出的数字（唤醒）略小于 0 时记为 0；小于 0\n"
    "超过 30% 就拒绝。\n"
    "写出一份给 threadlab sim --profile FILE 用的 profile。\n"
    "\n"
    "  --out FILE   写到哪里（默认 threadlab.profile；- 表示标准输出）\n"
    "  --only GROUP,...  只测这几组数字：syscalls\n"
    "               （read_ns、write_ns、syscall_sigma、syscall_p99、\n"
    "               syscall_p999）、accept（accept_ns、close_ns）、epoll\n"
    "               （epoll_wait_ns、eventfd_ns）、poll（poll_ns、\n"
    "               read_empty_ns）、threads（thread_create_ns、stack_kb）、\n"
    "               memory（stack_touched_kb、kernel_stack_kb）、handle\n"
    "               （handle_ns）、switches（context_switch_ns、wakeup_cpu_ns、\n"
    "               wakeup_ns、wakeup_ipi_ns、wakeup_sigma、wakeup_p99、\n"
    "               wakeup_p999、wakeup_granularity_ns、migration_cost_ns）、\n"
    "               vthread（vt_switch_ns、vt_stack_map_ns、vt_stack_unmap_ns、\n"
    "               vt_stack_touched_kb）、idle（wakeup_deep_ns、\n"
    "               wakeup_deep_sigma、wakeup_deep_p99、wakeup_deep_p999：\n"
    "               空闲了 100 us 的核醒得更晚；timer_late_ns、\n"
    "               timer_late_sigma、timer_late_p99、timer_late_p999：\n"
    "               定时器叫醒线程时晚到；约 5 秒）；其余的取自 --base。\n"
    "               make bench-sim 在每次真实运行之前重测 switches 和\n"
    "               syscalls（开环时还有 idle）：在虚拟机上它们几秒之内就会漂移\n"
    "  --base FILE  其他数字所取自的 profile（默认：内置的）；损坏的文件会被\n"
    "               拒绝，退出状态 2\n"
    "  -h, --help   本帮助\n";
