#!/usr/bin/env bash
# The command: --help, `gpuprobe run` exit statuses and environment, bad input.
# usage: run.sh GPUPROBE
set -u
g=$1
lib=$(cd "$(dirname "$g")/../lib" && pwd)
fail() { echo "FAIL: $*"; exit 1; }

"$g" --help | grep -qx '  run        run an application with the gpuprobe shim (and probes) in place of libcuda.so.1' \
  || fail "gpuprobe --help lists run"
"$g" run --help | head -1 | grep -qx 'usage: gpuprobe run \[-c CONFIG\] \[-p PROG.bpf.o\]... \[-t TOOL\]... \[-k KERNEL\]... \[--\] APP \[ARGS\]' \
  || fail "gpuprobe run --help"
echo "ok --help"

"$g" run -- /bin/true || fail "run -- /bin/true: exit $?"
"$g" run /bin/false; [ $? = 1 ] || fail "run /bin/false must exit 1"
"$g" run -- sh -c 'exit 42'; [ $? = 42 ] || fail "exit status 42 not propagated"
"$g" run -- sh -c 'kill -TERM $$'; [ $? = 143 ] || fail "killed by SIGTERM must give 143"
echo "ok exit statuses (0, 1, 42, 128+15)"

# GPUPROBE_REAL_LIBCUDA must pass the shim's own test of a driver (tests/shim's fake one does);
# probe objects and configurations are checked too (tests/cli/run_check.sh has those cases).
fake=$(cd "$(dirname "$g")/.." && pwd)/tests/shim/fake/libcuda.so.1
env=$(GPUPROBE_REAL_LIBCUDA=$fake LD_LIBRARY_PATH=/old LD_AUDIT= "$g" run -- sh -c \
  'echo "$LD_LIBRARY_PATH|$LD_AUDIT|$GPUPROBE_REAL_LIBCUDA|$GPUPROBE_SHIM|${GPUPROBE_PROBES-unset}"')
[ "$env" = "$lib:/old|$lib/libgpuprobe-audit.so|$fake|$lib/libcuda.so.1|unset" ] \
  || fail "environment: $env"
probe=$(mktemp); trap 'rm -f "$probe"' EXIT
echo "ok environment"

# bad input: one line, exit 2, before the application starts
msg=$("$g" run 2>&1); [ $? = 2 ] && [ "$msg" = "gpuprobe: run: no application given (usage: gpuprobe run [-c CONFIG] [-p PROG.bpf.o]... -- APP [ARGS])" ] || fail "no app: $msg"
msg=$("$g" run -p /nonexistent.bpf.o -- true 2>&1); [ $? = 2 ] && [ "$msg" = "gpuprobe: probe object /nonexistent.bpf.o does not exist" ] || fail "missing probe: $msg"
chmod 0602 "$probe"
msg=$("$g" run -p "$probe" -- true 2>&1); [ $? = 2 ] && [ "$msg" = "gpuprobe: $probe: refusing a probe object that everyone can write (mode 0602); run: chmod go-w $probe" ] || fail "writable probe: $msg"
chmod go-w "$probe"
msg=$("$g" run -p "$probe" -- true 2>&1); [ $? = 2 ] && [ "$msg" = "gpuprobe: $probe: not a BPF object but an empty file; a probe is built with clang -target bpf -O2 -g -c PROG.bpf.c" ] || fail "empty probe: $msg"
msg=$("$g" run -c / -- true 2>&1); [ $? = 2 ] && [ "$msg" = "gpuprobe: /: a probe configuration is not a regular file" ] || fail "config dir: $msg"
msg=$("$g" run -- /nonexistent/app 2>&1); [ $? = 127 ] && [ "$msg" = "gpuprobe: run: cannot start /nonexistent/app: No such file or directory" ] || fail "missing app: $msg"
msg=$("$g" run --bogus true 2>&1); [ $? = 2 ] && [ "$msg" = "gpuprobe: run: unknown option '--bogus' (see 'gpuprobe run --help')" ] || fail "bad option: $msg"
echo "ok bad input"
