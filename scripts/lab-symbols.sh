#!/bin/sh
# lab-symbols.sh LAB -- what a lab's graded files do at the object level,
# against what the reference files do. Each file that holds a region of
# lab NN is compiled to an object (the Makefile's flags, no sanitizer),
# and a line is printed, for a student, for each thing in it that no
# reference file of the labs has and no answer needs:
#   - a call of a function (nm -u) that the reference file does not call,
#     unless it is one of the pure helpers below (memcpy, strlen, ...):
#     Check's own internals (send_duration_info: "the test returned"),
#     exit by any name, printing a summary line, another process;
#   - a global that the reference file does not define (a student's
#     function named like one of Check's would replace it at link time);
#   - code that runs outside the tests: a constructor or destructor
#     (.init_array, .ctors, .fini_array, .dtors, .preinit_array, .init,
#     .fini) or a load-time resolver (an ifunc);
#   - a system call made directly (the syscall instruction: syscall(231, 0)
#     is exit_group without the word "exit").
# No output: nothing found (or the file does not compile: the build says
# why). lab-check.sh grades nothing when there is output.
#
# What each reference file calls and defines is in labs/symbols, written
# by `scripts/lab-symbols.sh --write` on the reference tree (run it when a
# graded file's calls change; `make lab-check` on the reference fails
# until then, naming the call). The handout carries that list, so a
# student's `make lab-check` judges the same way the grader does. A stub
# calls fewer things than the reference: fewer is always fine.
set -u
. "$(dirname "$0")/lab-lib.sh"
list=labs/symbols

# Pure helpers that any answer may call though its reference file does
# not: memory and string functions, their fortified forms (_FORTIFY_SOURCE
# at -O2), formatting into a buffer, errno, character classes, number
# parsing and rounding, and the two ends of a failed assertion (they stop
# the test, they cannot pass it). Nothing here prints, exits or forks.
PURE='memcpy memmove memset memcmp memchr strlen strnlen strcmp strncmp strchr strrchr strstr
 strcpy strncpy strcat strncat __memcpy_chk __memmove_chk __memset_chk __strcpy_chk __strncpy_chk
 __strcat_chk __strncat_chk snprintf vsnprintf __snprintf_chk __vsnprintf_chk __errno_location
 __ctype_b_loc __ctype_tolower_loc __ctype_toupper_loc strtol strtoll strtoul strtoull
 floor ceil round lround llround trunc fabs sqrt __stack_chk_fail __assert_fail abort'

# object_of FILE OBJ: compile FILE as the Makefile would (tests/ files see
# tests/support and Check's headers), warnings off: only its symbols matter.
object_of() {
  "${CC:-cc}" -std=c11 ${OPT:--O2} -D_GNU_SOURCE -pthread -Imodels -I. -Itests/support \
    $(pkg-config --cflags check 2>/dev/null) -w -c -o "$2" "$1" 2>/dev/null
}

# symbols_of OBJ: "calls SYM", "defines SYM", "runs-before-main SECTION",
# "runs-before-main ifunc SYM", "syscall instruction" lines, sorted.
symbols_of() {
  nm -u "$1" | awk '$NF != "_GLOBAL_OFFSET_TABLE_" { print "calls", $NF }'
  nm -g --defined-only "$1" | awk '$2 != "i" { print "defines", $3 }'
  nm "$1" | awk '$2 == "i" || $2 == "I" { print "runs-before-main ifunc", $3 }'
  readelf -SW "$1" | sed -n 's/^ *\[ *[0-9]*\] *\([^ ]*\).*/\1/p' |
    grep -E '^\.(init_array|fini_array|preinit_array|ctors|dtors|init|fini)(\.|$)' |
    sed 's/^/runs-before-main /'
  objdump -d "$1" | grep -Eq '[[:space:]](syscall|sysenter|int +\$0x80)([[:space:]]|$)' &&
    echo "syscall instruction"
} 2>/dev/null

tmp=$(mktemp -d "${TMPDIR:-/tmp}/lab-symbols.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM

if [ "${1:-}" = "--write" ]; then
  {
    echo "# labs/symbols -- what each lab's graded file, as the reference writes it,"
    echo "# calls and defines (nm): a student's file may call only these and the"
    echo "# pure helpers of scripts/lab-symbols.sh. Written by"
    echo "# scripts/lab-symbols.sh --write on the reference tree; do not edit."
    for d in labs/[0-9][0-9]-*; do lab_files "$(basename "$d" | cut -c1-2)"; done | sort -u |
      while read -r f; do
        object_of "$f" "$tmp/o.o" || { echo "lab-symbols: $f does not compile" >&2; exit 1; }
        symbols_of "$tmp/o.o" | sort -u | sed "s|^|$f |"
      done
  } >"$tmp/list" || exit 1
  if grep -E ' (runs-before-main|syscall)' "$tmp/list" >&2; then
    echo "lab-symbols: a reference file runs code outside the tests (above)" >&2; exit 1
  fi
  mv "$tmp/list" "$list" && echo "lab-symbols: wrote $list"
  exit 0
fi

lab=${1:?usage: lab-symbols.sh LAB | --write}

# say_call FILE FUNCTION: why a call the reference never makes stops the
# grading, and what to do instead, in the student's language (LAB_LANG).
say_call() {
  case "${LAB_LANG:-${LANG:-en}}" in
    zh*) case "$2" in
           sleep|usleep|nanosleep|clock_nanosleep)
             echo "你的 $1 调用了 $2 来睡眠，而实验 $lab 的参考代码从不这样做：睡眠会掩盖检查强制制造的竞争，" \
                  "评分程序也不评它无法担保的调用。删掉它（要等某件事，就像这个文件里别的等待那样，在它的条件上等）" ;;
           *) echo "你的 $1 调用了 $2，而实验 $lab 的参考代码从不调用它：评分程序分不清这样的调用和伪造通过的调用" \
                   "（结束进程、写 Check 的日志），所以什么也不评。删掉这个调用（调试用的辅助代码也一样，评分前删掉）" ;;
         esac ;;
    *) case "$2" in
         sleep|usleep|nanosleep|clock_nanosleep)
           echo "your $1 calls $2 to sleep, which lab $lab's reference never does: a sleep would" \
                "hide the races the check forces, and the grader grades no call it cannot vouch for." \
                "Take it out (to wait for something, wait on its condition, as the file's other waits do)" ;;
         *) echo "your $1 calls $2, which lab $lab's reference never calls: the grader cannot tell" \
                 "such a call from one that forges a pass (ends the process, writes Check's log), so" \
                 "it grades nothing. Take the call out (a debugging helper too, before grading)" ;;
       esac ;;
  esac
}
[ -f "$list" ] || { echo "lab $lab: this tree has no $list: the grader cannot judge the code"; exit 0; }
for f in $(lab_files "$lab"); do
  [ -f "$f" ] && object_of "$f" "$tmp/o.o" || continue
  symbols_of "$tmp/o.o" | sort -u | while read -r kind what; do
    case "$kind $what" in
      "calls "*) echo " $PURE " | tr '\n' ' ' | grep -q " $what " && continue
                 grep -qx "$f calls $what" "$list" && continue
                 say_call "$f" "$what" ;;
      "defines "*) grep -qx "$f defines $what" "$list" && continue
                   echo "your $f defines a global $what, which lab $lab's code does not have" \
                        "(make it static; a global could stand in for the tests' own code)" ;;
      "runs-before-main "*) echo "your $f has code that runs outside the tests ($what:" \
                                 "a constructor, destructor or resolver); no answer needs one" ;;
      *) echo "your $f makes a system call directly (a syscall instruction); no answer needs one" ;;
    esac
  done
done
