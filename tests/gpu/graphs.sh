#!/bin/bash
# GPU test of probes and CUDA graphs, and of "probes disabled" meaning untouched (issue 11).
# tests/gpu/graphs/graph_app.cu captures a stream in global mode with the first launch of every
# kernel inside the capture (CUDA's lazy loading loads the module there, and gpuprobe sets its
# probes up there: graphExecution died so), replays the graph, builds a graph node by node and
# launches into the stream; it checks every result and prints how many threads each kernel ran.
#   native     the app alone: PASS
#   shim       through the shim without probes: output identical to native
#   probes     gpuprobe run with an entry probe counting threads per kernel (HASH map 'enter'),
#              fresh cache, cached, and GPUPROBE_LAZY=0 (whole modules at load): output identical,
#              no "probes disabled", entries per kernel == threads the app launched
#   fault-*    GPUPROBE_TEST_FAULT=STEP for every set-up step (memory descriptor config objects
#              output capture instrument compile load function), also with GPUPROBE_LAZY=0: output
#              identical to native, and a line naming the step
# usage: tests/gpu/graphs.sh   (BUILD=<build dir> with bin/gpuprobe, lib/libcuda.so.1 and
# tests/shim/capture.bpf.o; gpu-graphs/graph_app is used when built there, else nvcc builds it)
# Logs to $OUT. Exit 77 without a GPU; 2 when something it needs is missing; 1 when a check fails.
set -u -o pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
if [ -z "${BUILD:-}" ]; then
	for b in "$root/build" "$root"/build-*; do
		[ -x "$b/bin/gpuprobe" ] && [ -e "$b/lib/libcuda.so.1" ] && { BUILD=$b; break; }
	done
fi
[ -n "${BUILD:-}" ] && [ -x "$BUILD/bin/gpuprobe" ] && [ -e "$BUILD/lib/libcuda.so.1" ] ||
	{ echo "graphs.sh: no BUILD with bin/gpuprobe and lib/libcuda.so.1 (set BUILD=<build dir>)"; exit 2; }
BUILD=$(cd "$BUILD" && pwd)
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
if ! nvidia-smi -L >/dev/null 2>&1; then
	echo "SKIP: no NVIDIA GPU or driver (nvidia-smi -L failed)"
	exit 77
fi

probe=$BUILD/tests/shim/capture.bpf.o
if [ ! -e "$probe" ]; then
	clang=$(command -v clang || command -v clang-14 || true)
	[ -n "$clang" ] || { echo "graphs.sh: no $probe and no clang to build it"; exit 2; }
	"$clang" -target bpf -O2 -g -I/usr/include/x86_64-linux-gnu -I"$root/include" \
		-c "$root/tests/shim/probes/capture.bpf.c" -o "$OUT/capture.bpf.o" || exit 2
	probe=$OUT/capture.bpf.o
fi
app=$BUILD/gpu-graphs/graph_app
if [ ! -x "$app" ]; then
	nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
	[ -x "$nvcc" ] || { echo "graphs.sh: no $app and no nvcc to build it"; exit 2; }
	"$nvcc" -O2 -arch=sm_90 -o "$OUT/graph_app" "$root/tests/gpu/graphs/graph_app.cu" >"$OUT/nvcc.log" 2>&1 ||
		{ cat "$OUT/nvcc.log"; echo "graphs.sh: nvcc failed"; exit 2; }
	app=$OUT/graph_app
fi

# The command and the shim may need the libraries shipped beside them (libbpf.so.1); the
# native run gets the environment's own path.
native_path=${LD_LIBRARY_PATH:-}
export LD_LIBRARY_PATH=$BUILD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
unset GPUPROBE_PROBES GPUPROBE_CONFIG GPUPROBE_JSON GPUPROBE_LOG GPUPROBE_TEST_FAULT GPUPROBE_LAZY \
	GPUPROBE_PRECOMPILE GPUPROBE_DUMP_DIR LD_AUDIT
GP=$BUILD/bin/gpuprobe
T=${GRAPHS_TIMEOUT:-300}   # per run (s)
nvidia-smi -L | tee "$OUT/gpus.txt"
fails=0
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1"; fails=$((fails + 1)); }
# run NAME CMD...: stdout to NAME.out, stderr to NAME.err, exit status to NAME.rc
run() {
	local name=$1
	shift
	timeout "$T" "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"
	echo $? >"$OUT/$name.rc"
}
same_as_native() {   # NAME: exit 0 and stdout byte-identical to the native run
	if [ "$(cat "$OUT/$1.rc")" = 0 ] && cmp -s "$OUT/native.out" "$OUT/$1.out"; then
		pass "$1: output identical to native"
	else
		fail "$1: exit $(cat "$OUT/$1.rc"), output differs from native:"
		diff "$OUT/native.out" "$OUT/$1.out" | head -10
		grep '^gpuprobe: ' "$OUT/$1.err" | head -5
	fi
}

# Native: the driver's own libcuda (the shim's directory is on LD_LIBRARY_PATH: leave it out).
run native env LD_LIBRARY_PATH="$native_path" "$app"
if [ "$(cat "$OUT/native.rc")" = 0 ] && [ "$(tail -1 "$OUT/native.out")" = PASS ]; then
	pass "native: the app passes"
else
	fail "native: exit $(cat "$OUT/native.rc")"; cat "$OUT/native.out"
	echo "graphs.sh: the app fails natively; nothing to compare with"
	exit 1
fi
run shim "$GP" run -- "$app"
same_as_native shim

# entries per kernel in NAME.json == the threads the app says it launched
counts() {
	python3 - "$OUT/$1.json" "$OUT/native.out" <<'EOF'
import json, sys
def h(s):   # gp_name_hash: FNV-1a 32
    x = 2166136261
    for b in s.encode():
        x = ((x ^ b) * 16777619) & 0xffffffff
    return x
want = {}
for l in open(sys.argv[2]):
    f = l.split()
    if len(f) == 3 and f[0] == "threads":
        want[f[1]] = int(f[2])
data = None
for l in open(sys.argv[1], errors="replace"):
    l = l.strip()
    if not l.startswith("{"):
        continue
    try:
        j = json.loads(l)
    except ValueError:
        continue
    if j.get("type") in ("map", "top") and j.get("name") == "enter":
        data = j.get("data")
if data is None:
    print("no 'enter' map in the JSON"); sys.exit(1)
got = {}
rows = data.items() if isinstance(data, dict) else [(e.get("key", e.get("id")), e.get("value")) for e in data]
for k, v in rows:
    got[str(k)] = v
bad = []
for name, n in sorted(want.items()):
    keys = [name, str(h(name)), hex(h(name)), "%#010x" % h(name)]
    v = next((got[k] for k in keys if k in got), None)
    if v != n:
        bad.append("%s: %s entries, %d threads" % (name, v, n))
print("; ".join(bad) if bad else "entries == threads (%s)" % ", ".join("%s %d" % kv for kv in sorted(want.items())))
sys.exit(1 if bad else 0)
EOF
}
probes_run() {   # NAME [ENV=VALUE...]
	local name=$1
	shift
	run "$name" env GPUPROBE_CACHE_DIR="$OUT/cache" "$@" "$GP" run --json "$OUT/$name.json" -p "$probe" -- "$app"
	same_as_native "$name"
	if grep -q 'probes disabled\|without probes\|loaded unchanged' "$OUT/$name.err"; then
		fail "$name: probes were not all on:"; grep '^gpuprobe: ' "$OUT/$name.err" | head -5
	fi
	local c
	if c=$(counts "$name"); then pass "$name: $c"; else fail "$name: $c"; fi
}
rm -rf "$OUT/cache"
probes_run probes-fresh GPUPROBE_LOG=1   # the set-up's steps in probes-fresh.err
probes_run probes-cached
probes_run probes-whole GPUPROBE_LAZY=0

# A fault at each set-up step: the app as without gpuprobe, and one line naming the step.
declare -A line=(
	[memory]='probes: map memory: GPUPROBE_TEST_FAULT=memory; probes disabled'
	[descriptor]="map 'enter': cannot allocate its descriptor"
	[config]='probes: configuration: GPUPROBE_TEST_FAULT=config; probes disabled'
	[objects]='probes: objects: GPUPROBE_TEST_FAULT=objects; probes disabled'
	[output]='probes: output: cannot set it up (GPUPROBE_TEST_FAULT=output); probes disabled'
	[capture]='CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED (GPUPROBE_TEST_FAULT=capture); probes disabled'
	[instrument]='GPUPROBE_TEST_FAULT=instrument'
	[compile]='did not compile'
	[load]='GPUPROBE_TEST_FAULT=load'
	[function]='GPUPROBE_TEST_FAULT=function'
)
for lazy in default 0; do
	for f in memory descriptor config objects output capture instrument compile load function; do
		name=fault-$f
		[ "$lazy" = 0 ] && name=fault-$f-whole
		envs=(GPUPROBE_TEST_FAULT=$f GPUPROBE_CACHE_DIR=$OUT/cache-faults)
		[ "$lazy" = 0 ] && envs+=(GPUPROBE_LAZY=0)
		run "$name" env "${envs[@]}" "$GP" run -p "$probe" -- "$app"
		same_as_native "$name"
		if grep -qF -- "${line[$f]}" "$OUT/$name.err"; then
			pass "$name: $(grep -F -- "${line[$f]}" "$OUT/$name.err" | head -1)"
		else
			fail "$name: no line with '${line[$f]}':"; grep '^gpuprobe: ' "$OUT/$name.err" | head -5
		fi
	done
done

echo
[ $fails = 0 ] && echo "graphs: all passed (logs in $OUT)" || echo "graphs: $fails failed (logs in $OUT)"
[ $fails = 0 ]
