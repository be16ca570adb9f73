# Masks what legitimately differs between two runs of the same program, so tests/gpu/apps.sh can
# compare a run's output with the native run's: sed -E -f tests/gpu/apps_mask.sed FILE
# Everything else must match exactly. Rules, in order:
#
# 1. Our own lines and the tools' lines are not the program's output: the shim's messages
#    ("gpuprobe: ..."), compute-sanitizer's ("========= ..."), make's ("make[1]: ...").
/^gpuprobe: /d
/^========= /d
/^=========$/d
/^make(\[[0-9]+\])?: /d
# 2. Lines that report time, throughput or rates: every number on them becomes '#', the words
#    stay (so a line that disappears or changes its wording still shows up).
/(time|elapsed|throughput|bandwidth|[GMK]i?B\/s|[GMKT]?flops?\/?s?|[GM]ops|[GM]?pixels?\/s|[GM]?samples\/s|per second|\/s(ec)?\b|\b(m|u|µ|n)?s(ec(onds?)?)?\b *$|\b[0-9.]+ *(m|u|µ|n)?s(ec(onds?)?)?\b|\brates?\b|speed ?up|\bperf(ormance)?\b|msec|usec|cycles|clock)/I s/[-+]?[0-9]+([.,][0-9]+)?([eE][-+]?[0-9]+)?/#/g
# 3. Dates and clock times (a program that prints when it ran).
s/\b(Mon|Tue|Wed|Thu|Fri|Sat|Sun) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +[0-9]+ [0-9:]+( [0-9]{4})?/DATE/g
s/\b[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9]{2}:[0-9]{2}(:[0-9]{2}([.][0-9]+)?)?)?/DATE/g
s/\b[0-9]{1,2}:[0-9]{2}:[0-9]{2}\b/TIME/g
# 4. Addresses (device or host pointers) and process ids.
s/\b0x[0-9a-fA-F]{6,}\b/0xADDR/g
s/\b(pid|PID|process) *[:=]? *[0-9]+/\1 PID/g
