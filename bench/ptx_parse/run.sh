#!/usr/bin/env bash
# bench/ptx_parse on the largest modules of the PTX round-trip corpus: parse+print MB/s (one
# core, CPU time) and peak memory. Appends the table, with date and CPU, to bench/RESULTS.md
# under "## ptx_parse" (only that section is touched).
# usage: bench/ptx_parse/run.sh [BUILD_DIR] [CORPUS_DIR]
#   BUILD_DIR: holds bin/ptx_parse (default build-ptx, else build)
#   CORPUS_DIR: .ptx files (default BUILD_DIR/tests/ptx/corpus/ptx, left by ctest's
#   ptx_roundtrip_corpus; built here with nvcc from tests/ptx/src when absent)
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-}
[ -n "$build" ] || for b in build-ptx build; do [ -x "$here/$b/bin/ptx_parse" ] && { build=$here/$b; break; }; done
[ -n "$build" ] && [ -x "$build/bin/ptx_parse" ] || { echo "run.sh: no bin/ptx_parse (cmake --build BUILD --target ptx_parse_bench)"; exit 2; }
corpus=${2:-$build/tests/ptx/corpus/ptx}
if ! ls "$corpus"/*.ptx >/dev/null 2>&1; then
	corpus=$(mktemp -d)
	export PATH=$PATH:/usr/local/cuda/bin
	for s in thrust_algos cub_segmented cub_reduce cub_select; do
		nvcc -ptx -w -arch=sm_90 -G "$here/tests/ptx/src/$s.cu" -o "$corpus/$s.sm_90.G.ptx"
		nvcc -ptx -w -arch=sm_90 -lineinfo "$here/tests/ptx/src/$s.cu" -o "$corpus/$s.sm_90.lineinfo.ptx"
		nvcc -ptx -w -arch=sm_90 "$here/tests/ptx/src/$s.cu" -o "$corpus/$s.sm_90.plain.ptx"
	done
fi
# the 4 largest modules, then the largest plain (no debug info) and -lineinfo ones
mapfile -t files < <( (ls -S "$corpus"/*.ptx | sed -n 1,4p; ls -S "$corpus"/*.plain.ptx | sed -n 1,2p;
	ls -S "$corpus"/*.lineinfo.ptx | sed -n 1,2p) | awk '!seen[$0]++')
table=$("$build/bin/ptx_parse" -t 2 "${files[@]}")
echo "$table"
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
load=$(cut -d' ' -f1-3 /proc/loadavg)
section="### $(date -u '+%Y-%m-%d %H:%M UTC'), $cpu ($(nproc) cores, load average $load)

\`bench/ptx_parse/run.sh\` (\`ptx_parse -t 2\` on the largest corpus modules; MB/s is input size over
the CPU time of the parsing thread, so load from other processes distorts it little):

$table
"
res=$here/bench/RESULTS.md
[ -f "$res" ] || printf '# Benchmark results\n' > "$res"
if ! grep -q '^## ptx_parse' "$res"; then
	cat >> "$res" <<'HDR'

## ptx_parse: PTX parse and print throughput and memory

`bench/ptx_parse/ptx_parse.c` parses a module and prints it again (the round trip of
`gpuprobe ptx print`, checked byte for byte every round), repeating for at least 2 s of CPU time,
each module in a fresh process. Peak memory is the process's maxrss; "minus input" subtracts the
RSS before the first parse (the input text). Target from issue 3: at least 100 MB/s on one core.
HDR
fi
# insert the new run at the end of the ptx_parse section (before the next "## " heading)
python3 - "$res" "$section" <<'PY'
import sys
path, new = sys.argv[1], sys.argv[2]
lines = open(path).read().split('\n')
start = next(i for i, l in enumerate(lines) if l.startswith('## ptx_parse'))
end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith('## ')), len(lines))
while end > start + 1 and lines[end - 1] == '':
    end -= 1
lines[end:end] = [''] + new.rstrip('\n').split('\n')
open(path, 'w').write('\n'.join(lines).rstrip('\n') + '\n')
PY
echo "appended to $res"
