#!/bin/sh
# run.sh -- the Chinese screen on a real terminal (tmux) at the two sizes
# a class meets besides 120x40 (check_view's): a projector's 160x48 and a
# laptop's 80x24. `threadlab demo --lang zh` runs the five models under
# the slow-handler scenario (its reactor blocks, its pool grows, its BIO
# spawns: events of every kind); the screen is read as a person reads it.
#   160x48: the glossary's terms are there and nothing is cut: the
#           narrator whole, the loops' phase column, each pane's error
#           counts, the panes' divider in one column (display width, not
#           bytes); event reasons in Chinese, none left in English.
#   80x24:  the footer's quit and help keys in Chinese, the thread list
#           and the loops' table whole in 80 columns, a reason in Chinese,
#           the Enter box in Chinese; after q, the comparison table in 80
#           columns.
# Every wait is for something on screen, bounded (a machine others load
# can take seconds per refresh); none is a sleep followed by a check.
set -u
BIN=$(realpath "${THREADLAB_BIN:-build/threadlab}")
tmp=$(mktemp -d)
sock="$tmp/tmux.sock"
export THREADLAB_BOARD_DIR="${THREADLAB_BOARD_DIR:-$tmp/boards}/tui-zh-$$"
mkdir -p "$(dirname "$THREADLAB_BOARD_DIR")"
. "$(dirname "$0")/../lib.sh"
cleanup() {
  tmux -S "$sock" kill-server 2>/dev/null
  rm -rf "$tmp" "$THREADLAB_BOARD_DIR"
}
trap cleanup EXIT
screen() { tmux -S "$sock" capture-pane -p -t zh; }
# shows ERE [SECONDS]: the screen shows it within SECONDS (default 20).
shows() {
  i=0
  while [ "$i" -lt $(( ${2:-20} * 10 )) ]; do
    screen | grep -Eq -- "$1" && return 0
    sleep 0.1; i=$((i + 1))
  done
  return 1
}
# check WHAT ERE [SECONDS]: ok if the screen shows ERE in time, else say
# WHAT failed and show the screen.
check() {
  if shows "$2" "${3:-20}"; then ok; else
    bad "$1 (no /$2/ on screen)"; screen | sed 's/^/    | /'
  fi
}
# width TEXT: its display columns (a CJK character two), as wc -L counts
# them in a UTF-8 locale.
width() { printf '%s\n' "$1" | LC_ALL=C.UTF-8 wc -L; }

echo "== tests/tui-zh/run.sh ($BIN)"
command -v tmux >/dev/null || { echo "  FAIL: tmux is not installed"; exit 1; }
LC_ALL=C.UTF-8 wc -L </dev/null >/dev/null 2>&1 || { echo "  FAIL: no C.UTF-8 locale"; exit 1; }

# 600 s bounds the demo; q ends it as soon as the checks are done. -u:
# tmux draws UTF-8 whatever this shell's locale says.
tmux -u -S "$sock" new-session -d -s zh -x 160 -y 48 -c "$tmp" \
  "env TERM=xterm-256color LANG=C THREADLAB_BOARD_DIR=$THREADLAB_BOARD_DIR \
   $BIN demo --lang zh --scenario slow-handler --duration 600; echo zh-exit=\$?; sleep 60"

# ---- 160x48: five panes (2x3), nothing cut ------------------------------
# Four servers start beside whatever else the machine runs: 60 s.
check "160x48: the five panes never showed" "vthread  pid [0-9]+" 60
check "160x48: the reactor's loop never blocked (BLOCKED in its row)" "reactor +[0-9]+ \[[^]]*\] .*阻塞 [0-9.]+" 60
check "160x48: no blocked reason in Chinese" "reactor 在一个处理器里阻塞了 [0-9.]+ 秒：它上面的"
# The snapshot the next checks read: once every pane has its first rates
# (a pane shows none until its server has answered; beside busy cores
# that can come late), or after 30 s.
RATES='行/秒 处理 p50 [0-9.]+[mun]?s p99 [0-9.]+[mun]?s'
for _ in $(seq 300); do
  screen >"$tmp/160"
  [ "$(grep -Eo "$RATES" "$tmp/160" | wc -l)" -eq 5 ] && break
  sleep 0.1
done
# The narrator, whole: its rows, from "[slow-handler]" to the legend, joined
# (CJK wraps between characters: no spaces on either side).
sed -n '/^\[slow-handler\]/,$p' "$tmp/160" | sed '$d' | tr -d ' \n' |
  grep -q '^\[slow-handler\]1%的行sleep200毫秒：.*BIO和线程池只阻塞一个线程；vthread的监控线程20毫秒后让备用线程接管卡住的载体线程。$' && ok \
  || { bad "160x48: the narrator is not whole"; sed -n '/^\[slow-handler\]/,$p' "$tmp/160"; }
# Every pane's header: its error counts, and its rates up to p99.
[ "$(grep -Eo '拒绝 [0-9]+ 错误 [0-9]+' "$tmp/160" | wc -l)" -eq 5 ] && ok \
  || { bad "160x48: not five panes with their error counts"; grep -E '拒绝|错误' "$tmp/160"; }
[ "$(grep -Eo "$RATES" "$tmp/160" | wc -l)" -eq 5 ] && ok \
  || { bad "160x48: not five headers with lines/s, p50 and p99"; grep -E '行/秒' "$tmp/160"; }
# The loops' table: its heading to the phase column, a phase in each row.
grep -q '事件循环 .*通道 任务队列 .*IO/任务 阶段' "$tmp/160" && ok \
  || bad "160x48: the loops' heading is not whole (no phase column)"
grep -Eq ' worker-1 +[0-9]+ \[[^]]*\] +[0-9]+ +[0-9]+/[0-9]+ +(IO|等待|任务|启动|停止)' "$tmp/160" && ok \
  || { bad "160x48: a worker loop's row has no phase"; grep worker- "$tmp/160"; }
# The glossary's terms, and the states' legend.
for term in 事件循环 任务队列 阻塞于sleep 等待事件 '事件（最新的在最后）'; do
  grep -q "$term" "$tmp/160" && ok || bad "160x48: the term '$term' is not on screen"
done
# Reasons: the pool's and BIO's in Chinese, none of the English left.
grep -Eq 'task-[0-9]+：没有空闲线程，[0-9]+ 个在排队，线程池尺寸 [0-9]+（最大 [0-9]+）|连接 [0-9]+ -> task-[0-9]+，在任务队列中等了' "$tmp/160" && ok \
  || bad "160x48: no pool event in Chinese"
grep -Eq 'conn-[0-9]+：为连接 [0-9]+ 新建的线程，现有 [0-9]+ 个' "$tmp/160" && ok \
  || bad "160x48: no BIO spawn event in Chinese"
if grep -Eq 'in one handler|a thread for conn|no idle thread|round robin|after [0-9.]+ s queued' "$tmp/160"; then
  bad "160x48: an event reason is still English:"
  grep -E 'in one handler|a thread for conn|no idle thread|round robin|queued' "$tmp/160" | head -3
else ok; fi
# The panes' divider: the same display column on every row above the
# horizontal one. Were CJK counted as bytes, a row with Chinese would put
# it further left.
cols=$(awk '/^-----/ { exit } /\|/ { print }' "$tmp/160" | while IFS= read -r row; do
         width "${row%%|*}"; done | sort -u)
[ "$cols" = 79 ] && ok || bad "160x48: the divider is at columns '$(echo $cols)', not 79 alone"

# ---- 80x24: one pane at a time --------------------------------------------
tmux -S "$sock" resize-window -t zh -x 80 -y 24
check "80x24: the footer's keys are not in Chinese" "q 退出  \? 帮助  [0-9]+ms$"
check "80x24: not one pane at a time" "第 1 个窗格（共 5 个）（放不下全部；tab 切换）"
# tab to the reactor's pane, one key at a time, each once the screen has
# shown the last (the line that names the pane changes: the first tab
# zooms pane 1, the next ones move on): its thread list and its loop.
pane_line() { screen | grep '^第 [0-9]* 个窗格'; }
for _ in 1 2 3 4 5 6; do
  screen | grep -q '^>reactor  pid' && break
  before=$(pane_line)
  tmux -S "$sock" send-keys -t zh Tab
  for _ in $(seq 100); do [ "$(pane_line)" != "$before" ] && break; sleep 0.1; done
done
check "80x24: tab did not reach the reactor's pane" "^>reactor  pid [0-9]+" 1
check "80x24: the thread list's heading is not whole" "^ 线程 +状态 +持续 +CPU% +连接 +行数$"
check "80x24: the loops' heading is not whole" "^ 事件循环 +通道 +任务队列 +IO/任务 +阶段$"
check "80x24: the reactor's loop row is cut" "^ reactor +[0-9]+ \[[^]]*\] +[0-9]+ +[0-9]+/[0-9]+ +(IO|等待|任务)"
check "80x24: no reason in Chinese" "reactor (在一个处理器里阻塞了|解除阻塞：它的处理器运行了)"
# Enter: the selected thread's box, its role in the glossary's words.
tmux -S "$sock" send-keys -t zh Enter
check "80x24: Enter showed no detail in Chinese" "（(worker 事件循环|阻塞线程检查器|主线程)，tid [0-9]+）"
check "80x24: the detail has no state row in Chinese" "状态 +(阻塞于sleep|等待事件|运行中)，已持续 [0-9.]+"
tmux -S "$sock" send-keys -t zh x
for _ in $(seq 100); do screen | grep -q '（按任意键关闭）' || break; sleep 0.1; done
screen | grep -q '（按任意键关闭）' && bad "80x24: a key did not close the detail" || ok
screen >"$tmp/80"
long=$(while IFS= read -r row; do [ "$(width "$row")" -gt 80 ] && echo "$row"; done <"$tmp/80")
[ -z "$long" ] && ok || bad "80x24: rows wider than 80 columns: $long"

# q: the demo stops the servers and prints its table, each row whole in
# 80 columns (a row wider would wrap onto the next).
tmux -S "$sock" send-keys -t zh q
check "q: the demo did not end with status 0" "^zh-exit=0" 90
check "q: the table's heading is not whole in 80 columns" "^模型 +行/秒 +p50 +p99 +线程 +内存 +CPU 秒 +错误 +服务器$" 5
for m in bio pool reactor multireactor vthread; do
  check "q: the table's $m row is not whole" "^$m +([0-9]+|-) .* (ok|[a-z-]+)$" 5
done
check "q: the cut-short note is not in Chinese" "^（提前结束：运行 [0-9.]+ 秒后停止，原计划 600 秒；数字只反映这一段）$" 5

summary tui-zh
