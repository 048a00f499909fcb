# lab-lib.sh -- what the lab scripts share (sourced, not run): finding a
# lab, its regions, and putting its stubs in a tree.

# lab_dir NN: labs/NN-topic, or a message and exit 2.
lab_dir() {
  case "$1" in [0-9][0-9]) ;; *) echo "lab: LAB is two digits, like 03 (not '$1')" >&2; exit 2 ;; esac
  d=$(ls -d labs/"$1"-* 2>/dev/null | head -1)
  [ -n "$d" ] || { echo "lab: no lab $1 under labs/" >&2; exit 2; }
  echo "$d"
}

# lab_regions LABDIR: one "FILE FUNCTION" line per region of the lab
# (LABDIR/regions: "file | function" lines, # comments).
lab_regions() {
  [ -f "$1/regions" ] || return 0
  grep -v '^#' "$1/regions" | awk -F'|' 'NF >= 2 { gsub(/ /, "", $1); gsub(/ /, "", $2); print $1, $2 }'
}

# region_awk MODE LAB FILE FUNCTION [STUB]: run scripts/lab-region.awk.
region_awk() {
  awk -v mode="$1" -v lab="$2" -v fn="$4" -v stub="${5:-}" \
      -f "$LAB_SCRIPTS/lab-region.awk" "$3" "$3"
}

# copy_tree DEST [EXCLUDE-REGEX]: copy this tree's tracked files (or all
# files, outside git) into DEST, without build output and without the
# paths matching the extended regex.
copy_tree() {
  if git rev-parse --git-dir >/dev/null 2>&1; then
    git ls-files -co --exclude-standard
  else
    find . -type f ! -path './build/*' | sed 's|^\./||'
  fi | grep -Ev "${2:-^$}" | while read -r f; do
    [ -f "$f" ] || continue
    mkdir -p "$1/$(dirname "$f")"
    cp -p "$f" "$1/$f"
  done
}

# put_stubs LAB LABDIR TREE: in TREE, replace each of the lab's regions by
# its stub (LABDIR/stubs/FUNCTION.c). Fails, naming it, on a region whose
# function, marker or signature no longer matches the code.
put_stubs() {
  lab_regions "$2" | while read -r file fn; do
    region_awk apply "$1" "$3/$file" "$fn" "$2/stubs/$fn.c" >"$3/$file.lab" || exit 3
    mv "$3/$file.lab" "$3/$file"
  done
}

# lab_files LAB: the files that hold lab LAB's regions, one a line.
lab_files() { lab_regions "$(lab_dir "$1")" | awk '{ print $1 }' | sort -u; }

# other_labs_files LAB: the files that hold another lab's regions. No file
# holds regions of two labs (tests/labs checks it): each lab's code is in
# files of its own, so a handout can leave out every other lab's.
other_labs_files() {
  for d in labs/[0-9][0-9]-*/; do
    n=$(basename "$d" | cut -c1-2)
    [ "$n" = "$1" ] || lab_regions "$d" | awk '{ print $1 }'
  done | sort -u
}

# put_prebuilt LAB TREE: in TREE, a handout of lab LAB, each file of the
# other labs' regions gives way to its object (this tree's plain build,
# debug info stripped) in TREE/labs/prebuilt/PATH.o, which the Makefile
# links for PATH.c. A class does the labs in order: lab 05's student must
# not find lab 03's answer in the tree.
put_prebuilt() {
  files=$(other_labs_files "$1")
  objs=$(for f in $files; do echo "build/obj/${f%.c}.o"; done)
  mkdir -p build
  # One make at a time: handouts made side by side share these objects.
  flock build/.prebuilt.lock ${MAKE:-make} -s $objs >&2 || return 3
  for f in $files; do
    o="labs/prebuilt/${f%.c}.o"
    mkdir -p "$2/$(dirname "$o")"
    objcopy --strip-debug "build/obj/${f%.c}.o" "$2/$o" || return 3
    rm -f "$2/$f"
  done
}

# What only a forged pass needs, as extended regexes over code (comments
# stripped): ending the process or a thread early, signalling or starting
# another process, code that runs before main (a constructor) or after
# it, inline assembly or token pasting (to hide a name), a jump out of a
# test, and Check's own variables, log and summary line. No lab's
# reference file has any of them (tests/labs/run.sh checks it), and no
# lab's answer needs one.
FORGERY_RE='\b(exit|_exit|_Exit|quick_exit|atexit|at_quick_exit|on_exit|pthread_exit|pthread_cancel|fork|vfork|clone|clone3|getppid|kill|tgkill|tkill|execve|execv|execvp|execvpe|execl|execlp|execle|fexecve|system|popen|posix_spawn|posix_spawnp|syscall|dlsym|dlopen|ptrace|setsid|setpgid|prctl|longjmp|siglongjmp|freopen|dup2|dup3|constructor|destructor|asm|__asm|__asm__)\b|##|\bCK_[A-Z_]*|testsuites|Checks:'

# strip_comments FILE: FILE with its C comments blanked (line numbers
# kept) and its string literals left as they are, each line as
# "LINE: code". In awk, so that the scan does not hang on one compiler's
# flags.
strip_comments() {
  awk '{
    out = ""; n = length($0); i = 1
    while (i <= n) {
      c = substr($0, i, 1); two = substr($0, i, 2)
      if (in_comment) {
        if (two == "*/") { in_comment = 0; i += 2; out = out " " } else i++
      } else if (quote != "") {
        out = out c
        if (c == "\\") { out = out substr($0, i + 1, 1); i += 2; continue }
        if (c == quote) quote = ""
        i++
      } else if (two == "/*") { in_comment = 1; i += 2
      } else if (two == "//") { i = n + 1
      } else { if (c == "\"" || c == "\047") quote = c; out = out c; i++ }
    }
    quote = ""
    sub(/^[ \t]+/, "", out); print NR ": " out
  }' "$1"
}

# forgery_lines LABDIR: every line, in the files that hold the lab's
# regions (whole files: lab-grade takes them whole from a student), whose
# code (comments are not code) matches FORGERY_RE, as "FILE:LINE: code".
forgery_lines() {
  lab_regions "$1" | awk '{ print $1 }' | sort -u | while read -r f; do
    [ -f "$f" ] || continue
    strip_comments "$f" | grep -E -- "$FORGERY_RE" | sed "s|^|$f:|"
  done
}

LAB_SCRIPTS=$(cd "$(dirname "$0")" && pwd)
