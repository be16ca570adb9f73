#!/bin/sh
# gpuprobe verify on bad input: one clear line on stderr, exit status 2, never a crash.
set -u
gpuprobe=$1 work=$2
mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
check() {  # check EXPECTED_STATUS EXPECTED_STDERR ARGS...
	want_status=$1 want_err=$2
	shift 2
	err=$("$gpuprobe" verify "$@" 2>&1 >/dev/null)
	status=$?
	[ "$status" = "$want_status" ] || fail "verify $*: exit $status, expected $want_status ($err)"
	[ "$(printf '%s\n' "$err" | wc -l)" = 1 ] || fail "verify $*: expected one line, got: $err"
	case "$err" in *"$want_err"*) ;; *) fail "verify $*: '$err' does not say '$want_err'";; esac
	echo "ok: verify $* -> $status: $err"
}
check 2 "does-not-exist.bpf.o: No such file or directory" "$work/does-not-exist.bpf.o"
printf 'not an ELF file\n' > "$work/garbage.bpf.o"
check 2 "garbage.bpf.o" "$work/garbage.bpf.o"
: > "$work/empty.bpf.o"
check 2 "empty.bpf.o" "$work/empty.bpf.o"
check 2 "unknown option" --frobnicate x.o
"$gpuprobe" verify --help | grep -q '^usage: gpuprobe verify' || fail "--help"
echo PASS
