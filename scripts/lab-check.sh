#!/bin/sh
# lab-check.sh [--json] LAB -- `make lab-check LAB=NN`: build and run lab
# NN's checks (labs/NN-topic/checks: "TEST-BINARY | CHECK-CASE | POINTS |
# what it checks") and print, for a student, each step's points and a
# total; with --json (or LAB_JSON=1) the same as one JSON object, for a
# course system. Exit 0 only when every step passes; 1 when one fails or
# the code does not compile, or when it is not graded (it names what only
# a forged pass needs: an exit, a constructor, Check's own log); 2 on a
# usage error.
#
# A failure is said in the tests' words, not as raw assertion text: the
# message a test gave (ck_assert_msg), else the name of the test that
# failed ("idle threads shrink to min") with what it expected and what it
# observed, and where it is for the curious. A test that Check counts as
# passed but that never finished (the process exited inside it) fails its
# step.
#
# --lang zh (or LAB_LANG=zh, or a LANG that starts with zh: `make
# lab-check LAB=NN LANG=zh`) says it all in Chinese: the lab's title and
# its steps from README.zh.md, the grader's own sentences; a test's own
# message stays as the test wrote it (English).
set -u
. "$(dirname "$0")/lab-lib.sh"
json=${LAB_JSON:-0}
lang=${LAB_LANG:-${LANG:-en}}
while [ $# -gt 0 ]; do
  case "$1" in
    --json) json=1; shift ;;
    --lang) lang=${2:?usage: lab-check.sh [--json] [--lang en|zh] LAB}; shift 2 ;;
    *) break ;;
  esac
done
case "$lang" in zh*) zh=1 ;; *) zh=0 ;; esac
lab=${1:?usage: lab-check.sh [--json] [--lang en|zh] LAB}
labdir=$(lab_dir "$lab") || exit 2
[ -f "$labdir/checks" ] || { echo "lab-check: lab $lab has no checks" >&2; exit 2; }
build=${BUILD:-build}
mkdir -p "$build"
log=$build/lab-check-$lab
title=$(head -1 "$labdir/README.md" | sed 's/^# *//; s/^Lab [0-9]*: *//')
steps=$(grep -v '^#' "$labdir/checks" | awk -F'|' 'NF >= 4')
# The grader's sentences, in the student's language.
if [ "$zh" = 1 ]; then
  title=$(head -1 "$labdir/README.zh.md" | sed 's/^# *//; s/^实验 [0-9]*：*//')
  T_LAB="实验" T_STEP="第 %d 步" T_PASS="通过" T_FAIL="未通过"
  T_NOT_YET="分：还没完成（标着 未通过 的步骤说明还有什么不对）"
  T_ALL="分：每一步都通过"
  T_OF="得 %d 分，满分 %d "
  T_BUILD="  构建：未通过：代码编译不过，所以哪一步都不能运行（完整日志：%s）"
  T_BUILD_END="0 分（先让代码编译通过）"
  T_UNGRADED_END="0 分（不评分）"
else
  T_LAB="lab" T_STEP="step %d" T_PASS="PASS" T_FAIL="FAIL"
  T_NOT_YET="points: not yet (the steps marked FAIL say what is still wrong)"
  T_ALL="points: every step passes"
  T_OF="%d of %d "
  T_BUILD="  build: FAIL: the code does not compile, so no step can run (whole log: %s)"
  T_BUILD_END="0 points (fix the build first)"
  T_UNGRADED_END="0 points (not graded)"
fi

# zh_step N: step N's words in README.zh.md's steps table (empty: none).
zh_step() {
  awk -F'|' -v n="$1" '/^## 检查/ { on = 1; next } /^## / { on = 0 }
    on { s = $2; gsub(/ /, "", s); if (s == n) { w = $4; sub(/^ +/, "", w); sub(/ +$/, "", w); print w; exit } }' \
    "$labdir/README.zh.md"
}

# Say a Check log's failures for a student, one per line.
explain() {
  grep -E '^[^:]+:[0-9]+:[FE]:' "$1" | head -5 | awk -F: -v zh="$zh" '{
    where = $1 ":" $2; test = $5; gsub(/_/, " ", test)
    msg = $0
    for (i = 0; i < 6; i++) msg = substr(msg, index(msg, ":") + 1)
    sub(/^ /, "", msg)
    if ($3 == "E" && msg ~ /timeout/)
      print test (zh ? "：没有结束（超时：它等待的事一直没有发生）" : ": it never finished (timed out: something it waits for never happens)")
    else if ($3 == "E" && msg ~ /signal/)
      print test (zh ? "：代码崩溃了（" msg "）" : ": the code crashed (" msg ")")
    else if (msg ~ /^Assertion .* failed/) {
      # Check says "Assertion (A == B, quoted) failed: A == 2, B == 1": the
      # test expected, then what each side was. A side that is a number
      # said nothing new, and is left out.
      expr = msg; sub(/^Assertion \047/, "", expr); sub(/\047 failed.*$/, "", expr)
      seen = ""
      if (msg ~ /failed: /) {
        vals = msg; sub(/^.*\047 failed: /, "", vals)
        n = split(vals, part, ", ")
        for (i = 1; i <= n; i++) {
          if (part[i] ~ /^-?[0-9.]+ == /) continue
          sub(/ == /, " = ", part[i]); seen = seen (seen == "" ? "" : ", ") part[i]
        }
      }
      if (zh)
        print test "：应为 " expr "；" (seen == "" ? "实际并不成立" : "实际 " seen) "（" where "）"
      else
        print test ": expected " expr "; " (seen == "" ? "it did not hold" : "observed " seen) " (" where ")"
    } else if (msg == "")
      print test (zh ? "：没有成立（" where "）" : ": this did not hold (" where ")")
    else
      print test (zh ? "：" : ": ") msg
  }'
}

# The tests that a Check XML log says passed but that never finished: in
# Check's fork mode a test's process that exits with status 0 counts as a
# pass, so an exit(0) in the code under test would pass every test that
# calls it. Only a test that returned is timed; the others get -1. A step
# passes only with the whole log written (Check writes its end last). (A
# test meant to exit, tcase_add_exit_test, would be one of them: no lab
# check has one.)
ended_early() {
  [ -f "$1" ] || return 0
  awk '/<test result="success">/ { ok = 1 } /<\/test>/ { ok = 0 }
       ok && /<id>/ { id = $0; gsub(/.*<id>|<\/id>.*/, "", id); gsub(/_/, " ", id) }
       ok && /<duration>-/ { print id }' "$1"
}

# JSON string: backslashes and quotes escaped, lines joined by \n, other
# control characters (a compiler's colours) dropped.
jstr() {
  printf '%s' "$1" | tr -d '\000-\010\013-\037' | awk '
    BEGIN { printf "\"" }
    { gsub(/\\/, "&&"); gsub(/"/, "\\\""); gsub(/\t/, " ")
      printf "%s%s", (NR > 1 ? "\\n" : ""), $0 }
    END { printf "\"" }'
}

max_points=$(echo "$steps" | awk -F'|' '{ s += $3 } END { print s + 0 }')

# Not graded at all: code that names what only a forged pass needs
# (lab-lib.sh's FORGERY_RE: ending the process, a constructor, Check's own
# log). The fork-mode and log checks below catch an exit at run time too;
# this catches the forgeries they cannot (a constructor that writes the
# whole log), before anything runs. LAB_NO_SCAN=1 skips it, for the
# grader's own tests of those run-time checks (lab-shortcuts.sh --run).
forged=""
[ "${LAB_NO_SCAN:-0}" = 1 ] || forged=$(forgery_lines "$labdir"; sh "$LAB_SCRIPTS/lab-symbols.sh" "$lab")
if [ -n "$forged" ]; then
  if [ "$json" = 1 ]; then
    printf '{"lab":"%s","title":%s,"built":false,"graded":false,"forgery":%s,"steps":[],"total":0,"max":%s}\n' \
      "$lab" "$(jstr "$title")" "$(jstr "$(printf '%s\n' "$forged" | head -8)")" "$max_points"
  else
    echo "$T_LAB $lab: $title"
    if [ "$zh" = 1 ]; then
      echo "  不评分：评分程序只评它能看懂的代码。下面这些是答案用不到、却能伪造通过的东西"
      echo "  （结束或给进程发信号、在测试之外运行、冒充 Check 的日志或汇总行、调用参考代码不调用的函数）。"
      echo "  评分程序分不清调试用的辅助代码和伪造，所以一律不评。删掉它们，各步就会运行："
    else
      echo "  not graded: the grader grades only code it can vouch for. Each line below is"
      echo "  something no answer needs and a forged pass could use (ending or signalling a"
      echo "  process, running outside the tests, speaking for Check, calling a function the"
      echo "  reference never calls). It cannot tell a debugging helper from a forgery, so it"
      echo "  grades neither. Take these out, and the steps will run:"
    fi
    printf '%s\n' "$forged" | head -8 | sed 's/^/    /'
    echo "$T_LAB $lab: $T_UNGRADED_END"
  fi
  exit 1
fi

built=1
for b in $(echo "$steps" | awk -F'|' '{ gsub(/ /, "", $1); print $1 }' | sort -u); do
  make -s "$build/tests/$b" "$build/threadlab" >"$log-build.log" 2>&1 || { built=0; break; }
done

total=0 max=0 step=0 failed=0 out_json=""
[ "$json" = 1 ] || echo "$T_LAB $lab: $title"
if [ "$built" = 0 ]; then
  errors=$(grep -E 'error|undefined reference' "$log-build.log" | head -8)
  if [ "$json" = 1 ]; then
    printf '{"lab":"%s","title":%s,"built":false,"build_errors":%s,"steps":[],"total":0,"max":%s}\n' \
      "$lab" "$(jstr "$title")" "$(jstr "$errors")" "$max_points"
  else
    printf "$T_BUILD\n" "$log-build.log"
    echo "$errors" | sed 's/^/    /'
    echo "$T_LAB $lab: $T_BUILD_END"
  fi
  exit 1
fi

# A here-document, not a pipe: the totals must survive the loop.
while IFS='|' read -r bin tcase points what; do
  bin=$(echo "$bin" | tr -d ' ')
  tcase=$(echo "$tcase" | sed 's/^ *//; s/ *$//')
  points=$(echo "$points" | tr -d ' ')
  what=$(echo "$what" | sed 's/^ *//')
  step=$((step + 1)) max=$((max + points))
  steplog=$log-$step.log
  rm -f "$steplog.xml"
  if CK_RUN_CASE="$tcase" THREADLAB_BIN="$build/threadlab" CK_XML_LOG_FILE_NAME="$steplog.xml" \
       "$build/tests/$bin" </dev/null >"$steplog" 2>&1 && grep -q "^100%: Checks: [1-9]" "$steplog" &&
     grep -q '</testsuites>' "$steplog.xml" 2>/dev/null && [ -z "$(ended_early "$steplog.xml")" ]; then
    pass=1 earned=$points why=""
  else
    pass=0 earned=0 failed=1
    early=$(ended_early "$steplog.xml")
    if [ -n "$early" ] && [ "$zh" = 1 ]; then
      why=$(echo "$early" | head -5 | sed 's/$/：进程在这个测试里结束了（exit？），测试没有跑完：它什么也证明不了/')
    elif [ -n "$early" ]; then
      why=$(echo "$early" | head -5 | sed 's/$/: the process ended inside this test (an exit?), so it never finished: it proves nothing/')
    elif grep -q "Checks: 0," "$steplog"; then why="no check case '$tcase' in $bin (the checks file is wrong)"
    elif grep -q "^100%: Checks: [1-9]" "$steplog" && ! grep -q '</testsuites>' "$steplog.xml" 2>/dev/null; then
      why="the test program ended before Check wrote its log of the tests: nothing proves they ran"
      [ "$zh" = 1 ] && why="测试程序在 Check 写完测试日志之前就结束了：没有任何东西能证明测试跑过"
    else why=$(explain "$steplog"); [ -n "$why" ] || why="it failed without a message (log: $steplog)"; fi
  fi
  total=$((total + earned))
  # LAB_FIRST_FAILURE=1 (lab-mutants.sh): a wrong answer is caught at its
  # first failing step; the later ones would only wait out their timeouts.
  [ "$pass" = 0 ] && [ "${LAB_FIRST_FAILURE:-0}" = 1 ] && break_after=1
  if [ "$json" = 1 ]; then
    out_json="$out_json${out_json:+,}{\"step\":$step,\"what\":$(jstr "$what"),\"points\":$points,\"earned\":$earned,\"passed\":$([ $pass = 1 ] && echo true || echo false),\"failures\":$(jstr "$why")}"
  else
    if [ "$zh" = 1 ]; then w=$(zh_step "$step"); [ -n "$w" ] && what=$w; fi
    printf "  $T_STEP: %3d/%-3d %s: %s\n" "$step" "$earned" "$points" "$what" \
      "$([ $pass = 1 ] && echo "$T_PASS" || echo "$T_FAIL")"
    [ -n "$why" ] && echo "$why" | sed 's/^/      /'
  fi
  [ "${break_after:-0}" = 1 ] && break
done <<EOF
$steps
EOF

if [ "$json" = 1 ]; then
  printf '{"lab":"%s","title":%s,"built":true,"steps":[%s],"total":%d,"max":%d}\n' \
    "$lab" "$(jstr "$title")" "$out_json" "$total" "$max"
elif [ "$failed" = 1 ]; then
  printf "$T_LAB %s: $T_OF%s\n" "$lab" "$total" "$max" "$T_NOT_YET"
else
  printf "$T_LAB %s: $T_OF%s\n" "$lab" "$total" "$max" "$T_ALL"
fi
[ "$failed" = 0 ]
