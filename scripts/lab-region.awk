# lab-region.awk -- find one lab region in a C file, by function name, and
# either print the file with the region replaced by a stub, or print the
# region's reference lines. A region is:
#
#   - a whole function: the definition of FUNC, from its first signature
#     line (at column 0) to its closing brace (a line "}"). The stub is the
#     whole replacement definition; its signature must be the reference's,
#     word for word, so a stub that has drifted from the code is an error.
#   - part of a function: when FUNC's body holds the one-line marker
#     "/* lab NN region: ... */", the region is that line and the rest of
#     the block it sits in (up to the first line indented less than it).
#     The stub is that fragment, indented as it will stand.
#
# usage: awk -v mode=apply|extract -v lab=NN -v fn=FUNC [-v stub=FILE] \
#            -f lab-region.awk FILE FILE      (the file twice: two passes)
# Exit status 3, with a message on stderr, when FUNC, its marker or its
# stub's signature cannot be matched.

function indent_of(s) { match(s, /^ */); return RLENGTH }
function fail(msg) { print "lab-region: " FILENAME ": " msg > "/dev/stderr"; failed = 1; exit 3 }

# Pass 1: where the function starts, its body opens and closes, and the
# marker, if any.
FNR == NR {
    if (!start && $0 ~ "^[a-z][^;]*[ *]" fn "\\(" && $0 !~ /;[ \t]*$/) {
        start = FNR; sig = $0 "\n"; next
    }
    if (start && !open) {
        if ($0 == "{") { open = FNR; next }
        if ($0 ~ /;[ \t]*$/) { start = 0; sig = ""; next }   # a prototype
        sig = sig $0 "\n"; next
    }
    if (open && !shut) {
        if ($0 == "}") { shut = FNR; next }
        if (!marker && index($0, "/* lab " lab " region:")) {
            marker = FNR; marker_indent = indent_of($0); next
        }
        if (marker && !marker_end && $0 !~ /^[ \t]*$/ && indent_of($0) < marker_indent)
            marker_end = FNR
    }
    next
}

# Between the passes: decide the lines [from, to] that the region covers.
FNR == 1 {
    if (!start || !open || !shut) fail("no function " fn "() defined at column 0")
    if (marker) { from = marker; to = marker_end - 1 }
    else { from = start; to = shut }
    if (mode == "apply") {
        stub_text = ""
        while ((getline line < stub) > 0) stub_text = stub_text line "\n"
        close(stub)
        if (stub_text == "") fail("the stub " stub " is missing or empty")
        if (!marker) {
            stub_sig = substr(stub_text, 1, index(stub_text, "\n{\n"))
            if (stub_sig != sig)
                fail("the stub " stub " does not begin with " fn "()'s signature as the code has it")
        }
    }
}

mode == "extract" { if (marker ? FNR > from && FNR <= to : FNR > open && FNR < shut) print; next }
FNR == from { printf "%s", stub_text }
FNR >= from && FNR <= to { next }
{ print }
END { if (failed) exit 3 }
