#!/bin/sh
# gpuprobe run checks everything before the application starts (issues 12 and 13): each bad input
# gives exactly one line on stderr and exit 2, and the application never starts. Good input runs
# the application and returns its exit status. usage: run_check.sh GPUPROBE SOURCE_DIR WORK_DIR
set -u
gpuprobe=$1 src=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
umask 022
unset GPUPROBE_CONFIG GPUPROBE_PROBES GPUPROBE_REAL_LIBCUDA GPUPROBE_JSON GPUPROBE_INTERVAL
fail() { echo "FAIL: $*"; exit 1; }
# VAR=VALUE for the next check only (a prefix assignment to a shell function may outlive it)
extra_env=
started=$work/app-started
# check WANT_STATUS WANT_STDERR ARGS... (the application, when there is one, touches $started)
check() {
	want_status=$1 want_err=$2
	shift 2
	rm -f "$started"
	if [ -n "$extra_env" ]; then
		err=$(env "$extra_env" "$gpuprobe" run "$@" 2>&1 >/dev/null)
	else
		err=$("$gpuprobe" run "$@" 2>&1 >/dev/null)
	fi
	status=$?
	extra_env=
	[ "$status" = "$want_status" ] || fail "run $*: exit $status, expected $want_status ($err)"
	[ "$err" = "$want_err" ] || fail "run $*: stderr
  $err
expected
  $want_err"
	[ "$want_status" != 2 ] || [ ! -e "$started" ] || fail "run $*: the application started"
	echo "ok: run $* -> $status${err:+: $err}"
}
app="touch $started"

# the command line
check 2 "gpuprobe: run: -i abc: the interval must be a whole number of seconds from 0 to 86400" \
	-i abc -- sh -c "$app"
check 2 "gpuprobe: run: -i -1: the interval must be a whole number of seconds from 0 to 86400" \
	-i -1 -- sh -c "$app"
check 2 "gpuprobe: run: -i 86401: the interval must be a whole number of seconds from 0 to 86400" \
	-i 86401 -- sh -c "$app"
check 2 "gpuprobe: run: unknown option '--bogus' (see 'gpuprobe run --help')" --bogus -- sh -c "$app"
check 2 "gpuprobe: run: unknown option '-x' (see 'gpuprobe run --help')" -x sh -c "$app"
check 2 "gpuprobe: run: option '-c' needs an argument (see 'gpuprobe run --help')" -c
check 2 "gpuprobe: run: option '--json' needs an argument (see 'gpuprobe run --help')" --json
check 2 "gpuprobe: run: no application given (usage: gpuprobe run [-c CONFIG] [-p PROG.bpf.o]... -- APP [ARGS])" -i 1
check 2 "gpuprobe: run: -c given twice (one configuration file) (see 'gpuprobe run --help')" \
	-c a.yaml -c b.yaml -- sh -c "$app"
"$gpuprobe" run --help | grep -q '^usage: gpuprobe run' || fail "--help"

# the configuration: the shim's parser, errors at FILE:LINE:COL
cfg=$work/repeated.yaml
printf 'probes:\n  - path: a.bpf.o\n    kernels: [x]\n    kernels: [y, z]\n' >"$cfg"
check 2 "gpuprobe: $cfg:4:5: key 'kernels' repeated (first at line 3, column 5): YAML keys are unique" \
	-c "$cfg" -- sh -c "$app"
printf 'kernels:\n  include: [a]\n  include: [b]\n' >"$cfg"
check 2 "gpuprobe: $cfg:3:3: key 'include' repeated (first at line 2, column 3): YAML keys are unique" \
	-c "$cfg" -- sh -c "$app"
printf 'output: {interval: 1\n' >"$cfg"
check 2 "gpuprobe: $cfg:2:1: did not find expected ',' or '}'" -c "$cfg" -- sh -c "$app"
printf '"\\e[2J": 1\n' >"$cfg"
check 2 "gpuprobe: $cfg:1:1: unknown section '\\x1b[2J' (expected probes, kernels, maps, output, limits)" \
	-c "$cfg" -- sh -c "$app"
head -c 100000 /dev/zero | tr '\0' '[' >"$cfg"
check 2 "gpuprobe: $cfg:1:33: nested more than 32 levels deep (the limit for a probe configuration)" \
	-c "$cfg" -- sh -c "$app"
check 2 "gpuprobe: $work/none.yaml: cannot read a probe configuration: No such file or directory" \
	-c "$work/none.yaml" -- sh -c "$app"
printf 'probes:\n  - missing.bpf.o\n' >"$cfg"
chmod 664 "$cfg"
check 2 "gpuprobe: $cfg: refusing a probe configuration that its group can write (mode 0664); run: chmod go-w $cfg" \
	-c "$cfg" -- sh -c "$app"
chmod 644 "$cfg"
check 2 "gpuprobe: $cfg:2:5: probe object $work/missing.bpf.o does not exist" -c "$cfg" -- sh -c "$app"
# GPUPROBE_CONFIG is checked as -c is
extra_env="GPUPROBE_CONFIG=$cfg"
check 2 "gpuprobe: $cfg:2:5: probe object $work/missing.bpf.o does not exist" \
	-- sh -c "$app"

# the JSON output's folder must exist (the app would run to its end for nothing)
printf 'output:\n  json: nodir/out.jsonl\n' >"$cfg"
check 2 "gpuprobe: $cfg:2:9: output.json $work/nodir/out.jsonl: folder $work/nodir does not exist" \
	-c "$cfg" -- sh -c "$app"
check 2 "gpuprobe: run: --json $work/nodir/out.jsonl: folder $work/nodir does not exist" \
	--json "$work/nodir/out.jsonl" -- sh -c "$app"
# an application that sets up no probes (a shell command: no CUDA call) is told of in one line
none="gpuprobe: run: no process of the application set up probes: none loaded a GPU module through gpuprobe's libcuda.so.1 (it made no CUDA call, or reached a driver another way); nothing to report"
check 0 "$none" -c "$cfg" --json - -- sh -c "$app"

# probe objects: what each file is, said in one line
check 2 "gpuprobe: probe object $work/none.bpf.o does not exist" -p "$work/none.bpf.o" -- sh -c "$app"
check 2 "gpuprobe: /etc/passwd: not a BPF object but a text file; a probe is built with clang -target bpf -O2 -g -c PROG.bpf.c" \
	-p /etc/passwd -- sh -c "$app"
printf '//\n// Generated by NVIDIA NVVM Compiler\n.version 8.0\n.target sm_90\n.address_size 64\n' >"$work/k.ptx"
check 2 "gpuprobe: $work/k.ptx: not a BPF object but PTX, the code probes go into; a probe is built with clang -target bpf -O2 -g -c PROG.bpf.c" \
	-p "$work/k.ptx" -- sh -c "$app"
cp /bin/true "$work/true.o"
check 2 "gpuprobe: $work/true.o: not a BPF object (ELF machine 62, expected 247): build it with clang -target bpf" \
	-p "$work/true.o" -- sh -c "$app"
chmod 666 "$work/true.o"
check 2 "gpuprobe: $work/true.o: refusing a probe object that everyone can write (mode 0666); run: chmod go-w $work/true.o" \
	-p "$work/true.o" -- sh -c "$app"
extra_env="GPUPROBE_PROBES=$work/none.bpf.o"
check 2 "gpuprobe: GPUPROBE_PROBES: probe object $work/none.bpf.o does not exist" -- sh -c "$app"

# the driver the shim is pinned to: the shim's own test
extra_env="GPUPROBE_REAL_LIBCUDA=/etc/passwd"
check 2 "gpuprobe: run: no usable driver: GPUPROBE_REAL_LIBCUDA=/etc/passwd (not a usable driver): cannot load driver candidate /etc/passwd: /etc/./passwd: invalid ELF header" \
	-- sh -c "$app"
shim=$(dirname "$gpuprobe")/../lib/libcuda.so.1
extra_env="GPUPROBE_REAL_LIBCUDA=$shim"
check 2 "gpuprobe: run: no usable driver: GPUPROBE_REAL_LIBCUDA=$shim (that is the gpuprobe shim itself)" \
	-- sh -c "$app"

# exit status passthrough, the application found or not
check 0 "" -- sh -c "$app"
[ -e "$started" ] || fail "the application did not run"
check 3 "" -- sh -c "exit 3"
check 255 "" -- sh -c "exit 255"
check 143 "" -- sh -c 'kill -TERM $$'
check 127 "gpuprobe: run: cannot start $work/no-such-app: No such file or directory" -- "$work/no-such-app"
printf 'not a program\n' >"$work/not-exec"
chmod 644 "$work/not-exec"
check 126 "gpuprobe: run: cannot start $work/not-exec: Permission denied" -- "$work/not-exec"

# objects that need clang: a program the verifier rejects, and the example configuration with
# the objects examples/build.sh makes (named as it names them)
CLANG=${CLANG:-$(command -v clang || command -v clang-14 || true)}
if [ -z "$CLANG" ]; then
	echo "SKIP (part): no clang for the BPF objects"
	echo PASS
	exit 0
fi
mkdir -p "$work/include"
cp "$src/examples/vmlinux_min.h" "$work/include/vmlinux.h"
bpfcc() {
	"$CLANG" -target bpf -O2 -g -D__TARGET_ARCH_x86 -I/usr/include/x86_64-linux-gnu \
		-I"$src/include" -I"$work/include" -c "$1" -o "$2" || fail "clang $1"
}
bpfcc "$src/tests/e2e/probes/bad_store.bpf.c" "$work/bad_store.bpf.o"
check 2 "gpuprobe: $work/bad_store.bpf.o: program writes_ctx (gpu/mem/global/*) is rejected by the verifier: cannot write into ctx: the context is read-only (off=0 size=8); at insn 1: (7b) *(u64 *)(r1 +0) = r2, source: c->addr = 0; @ bad_store.bpf.c:8 (gpuprobe verify -v $work/bad_store.bpf.o shows every step)" \
	-p "$work/bad_store.bpf.o" -- sh -c "$app"
bpfcc "$src/tests/ebpf/progs/bad_filter.bpf.c" "$work/bad_filter.bpf.o"
check 2 "gpuprobe: $work/bad_filter.bpf.o: program 'oops': unknown memory filter 'vecAdd' (use global, shared, local, generic, load, store, atomic, plain, async, matrix or all, e.g. gpu/mem/global,store/<kernel>)" \
	-p "$work/bad_filter.bpf.o" -- sh -c "$app"
mkdir -p "$work/examples"
# (named as examples/build.sh names them: the source's name, .c -> .o)
for p in "$src/examples/cuda-counter/cuda_counter.bpf.c" "$src/examples/mem_trace/mem_trace.bpf.c"; do
	bpfcc "$p" "$work/examples/$(basename "$p" .c).o"
done
install -m 0644 "$src/examples/config.yaml" "$work/examples/config.yaml"
check 0 "$none" -c "$work/examples/config.yaml" -- sh -c "$app"
check 0 "$none" -p "$work/examples/cuda_counter.bpf.o" -p "$work/examples/mem_trace.bpf.o" -- sh -c "$app"
# --json FILE gets its file all the same: one "none" record saying why
rm -f "$work/none.jsonl"
check 0 "$none" --json "$work/none.jsonl" -p "$work/examples/cuda_counter.bpf.o" -- sh -c "$app"
[ "$(cat "$work/none.jsonl" 2>&1)" = '{"type":"none","why":"no process of the application set up probes: none loaded a GPU module through gpuprobe'"'"'s libcuda.so.1 (it made no CUDA call, or reached a driver another way)"}' ] ||
	fail "--json FILE of a run without probes: $(cat "$work/none.jsonl" 2>&1)"
echo "ok: --json FILE of a run without probes holds the none record"
# what the shim is handed: the checked objects and configuration by absolute path, -i and --json
real=$(cd "$work" && pwd -P)
env=$(cd "$work" && "$gpuprobe" run -p examples/cuda_counter.bpf.o -p ./examples/mem_trace.bpf.o \
	-c examples/config.yaml -i 5 --json - -- sh -c \
	'echo "$GPUPROBE_PROBES|$GPUPROBE_CONFIG|$GPUPROBE_INTERVAL|$GPUPROBE_JSON"')
[ "$env" = "$real/examples/cuda_counter.bpf.o:$real/examples/mem_trace.bpf.o|$real/examples/config.yaml|5|-" ] ||
	fail "the environment the shim is handed: $env"
echo "ok: the environment the shim is handed"
# the configuration in the source tree names objects that are not there: the line says which
cp "$src/examples/config.yaml" "$work/src-config.yaml"
chmod 644 "$work/src-config.yaml"
check 2 "gpuprobe: $work/src-config.yaml:13:11: probe object $work/cuda_counter.bpf.o does not exist" \
	-c "$work/src-config.yaml" -- sh -c "$app"
echo PASS
