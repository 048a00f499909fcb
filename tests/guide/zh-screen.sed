# zh-screen.sed -- a Chinese guide's screen word, as the English screen
# shows it (tests/guide/run.sh runs every command once, in English, and
# checks both guides' figures against that run). Each line is one pair of
# viz/msg.c or viz/reason.c; tests/docs/run.sh checks that the
# Chinese side is still on the screen.
s/^线程 \([0-9][0-9]*\)：$/threads \1:/
s/^连接 \([0-9][0-9]*\) -> \(worker-[0-9][0-9]*\)：轮转$/conn \1 -> \2: round robin/
