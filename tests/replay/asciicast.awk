# asciicast.awk -- check that a file is asciicast v2 and print what it
# shows: the header a JSON object with "version": 2 and a positive width
# and height; every other line an output event [time, "o", "text"] with
# the time a JSON number, not going back, and the text a JSON string
# (escapes as JSON has them, no raw control character). Prints each
# event's text decoded, "\r\n" as "\n" and the clear-screen sequence
# removed, so it compares with replay --plain; on the first line that
# breaks the format, prints "BAD line N: why" on stderr and exits 1.
# \u escapes above U+007F are refused: this checker does not encode them
# (the writer passes UTF-8 through as it is).
function bad(why) { printf "BAD line %d: %s\n", NR, why > "/dev/stderr"; failed = 1; exit 1 }
function hex(s,    i, v) {
  v = 0
  for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", tolower(substr(s, i, 1))) - 1
  return v
}
BEGIN {
  ctl = sprintf("[%c-%c]", 1, 31)
  str = "\"([^\"\\\\]|\\\\[\"\\\\/bfnrt]|\\\\u[0-9a-fA-F][0-9a-fA-F][0-9a-fA-F][0-9a-fA-F])*\""
  num = "(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][-+]?[0-9]+)?"
  event = "^\\[" num ", *\"o\", *" str "\\]$"
  clear = sprintf("%c[H%c[2J", 27, 27)
  last = -1
}
NR == 1 {
  if ($0 !~ /^\{.*\}$/) bad("the header is not a JSON object")
  if ($0 !~ /"version": *2[,}]/) bad("the header has no \"version\": 2")
  if ($0 !~ /"width": *[1-9][0-9]*[,}]/ || $0 !~ /"height": *[1-9][0-9]*[,}]/)
    bad("the header has no positive width and height")
  next
}
{
  if ($0 ~ ctl) bad("a raw control character")
  if ($0 !~ event) bad("not an output event [time, \"o\", \"text\"]")
  t = substr($0, 2, index($0, ",") - 2) + 0
  if (t < last) bad("its time goes back")
  last = t
  s = $0; sub(/^[^"]*"o", *"/, "", s); sub(/"\]$/, "", s)
  out = ""
  while ((i = index(s, "\\")) > 0) {
    out = out substr(s, 1, i - 1)
    c = substr(s, i + 1, 1)
    if (c == "u") {
      v = hex(substr(s, i + 2, 4))
      if (v > 127) bad("a \\u escape above U+007F (this checker does not encode them)")
      out = out sprintf("%c", v); s = substr(s, i + 6)
      continue
    }
    out = out (c == "n" ? "\n" : c == "r" ? "\r" : c == "t" ? "\t" : c == "b" ? "\b" : c == "f" ? "\f" : c)
    s = substr(s, i + 2)
  }
  out = out s
  if (substr(out, 1, length(clear)) == clear) out = substr(out, length(clear) + 1)
  gsub(/\r\n/, "\n", out)
  printf "%s", out
  events++
}
END { if (!failed && events == 0) { print "BAD: no event" > "/dev/stderr"; exit 1 } }
