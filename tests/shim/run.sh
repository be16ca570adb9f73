#!/usr/bin/env bash
# The command: --help, `gpuprobe run` exit statuses and environment, bad input.
# usage: run.sh GPUPROBE
set -u
g=$1
lib=$(cd "$(dirname "$g")/../lib" && pwd)
fail() { echo "FAIL: $*"; exit 1; }

"$g" --help | grep -qx '  run        run an application with the gpuprobe shim (and probes) in place of libcuda.so.1' \
  || fail "gpuprobe --help lists run"
"$g" run --help | head -1 | grep -qx 'usage: gpuprobe run \[-c CONFIG\] \[-p PROG.bpf.o\]... \[--\] APP \[ARGS\]' \
  || fail "gpuprobe run --help"
echo "ok --help"

"$g" run -- /bin/true || fail "run -- /bin/true: exit $?"
"$g" run /bin/false; [ $? = 1 ] || fail "run /bin/false must exit 1"
"$g" run -- sh -c 'exit 42'; [ $? = 42 ] || fail "exit status 42 not propagated"
"$g" run -- sh -c 'kill -TERM $$'; [ $? = 143 ] || fail "killed by SIGTERM must give 143"
echo "ok exit statuses (0, 1, 42, 128+15)"

env=$(GPUPROBE_REAL_LIBCUDA=/x/libcuda.so.1 LD_LIBRARY_PATH=/old LD_AUDIT= "$g" run -- sh -c \
  'echo "$LD_LIBRARY_PATH|$LD_AUDIT|$GPUPROBE_REAL_LIBCUDA|$GPUPROBE_SHIM|${GPUPROBE_PROBES-unset}"')
[ "$env" = "$lib:/old|$lib/libgpuprobe-audit.so|/x/libcuda.so.1|$lib/libcuda.so.1|unset" ] \
  || fail "environment: $env"
probe=$(mktemp); trap 'rm -f "$probe"' EXIT
env=$("$g" run -p "$probe" -p "$probe" -c "$probe" sh -c 'echo "$GPUPROBE_PROBES|$GPUPROBE_CONFIG"')
[ "$env" = "$probe:$probe|$probe" ] || fail "probe environment: $env"
echo "ok environment"

msg=$("$g" run 2>&1); [ $? = 1 ] && [ "$msg" = "gpuprobe: run: no application given (usage: gpuprobe run [-p PROG.bpf.o]... -- APP [ARGS])" ] || fail "no app: $msg"
msg=$("$g" run -p /nonexistent.bpf.o -- true 2>&1); [ $? = 1 ] && [ "$msg" = "gpuprobe: probe /nonexistent.bpf.o: No such file or directory" ] || fail "missing probe: $msg"
chmod o+w "$probe"
msg=$("$g" run -p "$probe" -- true 2>&1); [ $? = 1 ] && [ "$msg" = "gpuprobe: probe $probe is group- or world-writable: refusing it (chmod go-w $probe)" ] || fail "writable probe: $msg"
chmod go-w "$probe"
msg=$("$g" run -c / -- true 2>&1); [ $? = 1 ] && [ "$msg" = "gpuprobe: config /: not a regular file" ] || fail "config dir: $msg"
msg=$("$g" run -- /nonexistent/app 2>&1); [ $? = 127 ] && [ "$msg" = "gpuprobe: run: cannot start /nonexistent/app: No such file or directory" ] || fail "missing app: $msg"
msg=$("$g" run --bogus true 2>&1); [ $? = 1 ] && [ "$msg" = "gpuprobe: run: unknown option '--bogus' (see 'gpuprobe run --help')" ] || fail "bad option: $msg"
echo "ok bad input"
