# plan.awk -- read a teacher's guide (markdown) and print what
# tests/guide/run.sh must run and check, one tab-separated record a line:
#   C <block> <command>            a line of a fenced block that starts
#                                  with build/threadlab: run it
#   S <block> <span>               a `code span` of the prose after that
#                                  block holding a digit or a capital word:
#                                  it must appear in the block's output
#   T <block> <model> <column> <cell>
#                                  a cell of a table whose first column is
#                                  `model` (in a Chinese guide 模型, its
#                                  headings the Chinese screen's words,
#                                  printed as the English table's): checked
#                                  against the final table
#   X <block> <line>               another command in a fenced block
#                                  (e.g. make): reported, not run here
# A block's scope runs to the next block with commands or the next heading.
BEGIN {
    OFS = "\t"; block = 0; scope = 0; infence = 0
    # The Chinese final table's headings (sim/viz/msg.c), as the English.
    en["模型"] = "model"; en["错误"] = "errors"; en["线程"] = "threads"
    en["行/秒"] = "lines/s"; en["行/秒（相对 reactor）"] = "lines/s vs reactor"
}

/^```/ {
    if (infence) { infence = 0; if (cmds) scope = block; next }
    infence = 1; cmds = 0; next
}
infence {
    if ($0 ~ /^build\/threadlab /) {
        if (!cmds) { block++; cmds = 1 }
        print "C", block, $0
    } else if ($0 ~ /^[a-z]/) {
        print "X", block, $0
    }
    next
}
/^#/ { scope = 0; next }
/^<!--/ { incomment = 1 }
incomment { if ($0 ~ /-->/) incomment = 0; next }
!scope { next }

/^\|/ {
    n = split($0, cell, "|")
    for (i = 2; i < n; i++) { gsub(/^ +| +$/, "", cell[i]); gsub(/`/, "", cell[i]) }
    if (cell[2] == "model" || cell[2] == "模型") {
        ncol = n
        for (i = 3; i < n; i++) head[i] = cell[i] in en ? en[cell[i]] : cell[i]
    } else if (cell[2] !~ /^-+$/ && ncol) {
        for (i = 3; i < n; i++)
            if (cell[i] != "") print "T", scope, cell[2], head[i], cell[i]
    }
    next
}
{ ncol = 0 }

# Code spans: a span holding a digit or two capitals in a row is a quoted
# figure or screen word; options (--x) and key names are not.
{
    line = $0
    while (match(line, /`[^`]+`/)) {
        span = substr(line, RSTART + 1, RLENGTH - 2)
        line = substr(line, RSTART + RLENGTH)
        if (span ~ /^-/) continue
        if (span ~ /[0-9]/ || span ~ /[A-Z][A-Z]/) print "S", scope, span
    }
}
