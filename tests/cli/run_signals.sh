#!/bin/sh
# gpuprobe run stands between the caller and the application as `timeout` and `env` do (issue 12):
# SIGTERM, SIGHUP, SIGINT and SIGQUIT sent to gpuprobe reach the application's whole process
# group (a shell and its children), gpuprobe returns the application's status (128+N when signal
# N killed it), and an application is never left running under init, even when gpuprobe is
# killed with SIGKILL. usage: run_signals.sh GPUPROBE WORK_DIR
set -u
gpuprobe=$1 work=$2
rm -rf "$work"
mkdir -p "$work"
unset GPUPROBE_CONFIG GPUPROBE_PROBES GPUPROBE_REAL_LIBCUDA
fail() { echo "FAIL: $*"; exit 1; }
# A background job of a non-interactive shell starts with SIGINT and SIGQUIT ignored (and then
# gpuprobe rightly leaves them ignored, as nohup's are): give them back their default.
defaults="env --default-signal=INT,QUIT"
$defaults true 2>/dev/null || defaults=

# wait_file FILE: the application got as far as writing FILE (at most 10 s)
wait_file() {
	i=0
	while [ ! -s "$1" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	[ -s "$1" ] || fail "the application never wrote $1"
}
# child_of PID: the PID of PID's child (pgrep where there is one, else /proc)
child_of() {
	if command -v pgrep >/dev/null; then
		pgrep -P "$1" | head -1
		return
	fi
	for st in /proc/[0-9]*/stat; do
		set -- "$1" $(sed 's/.*) //' "$st" 2>/dev/null)
		[ "${3:-}" = "$1" ] && { p=${st#/proc/}; echo "${p%/stat}"; return; }
	done
}
# gone PID: no such process, within 5 s
gone() {
	i=0
	while kill -0 "$1" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	! kill -0 "$1" 2>/dev/null
}

# signal SIG WANT_STATUS: the application is a shell running a child sleep; both must die (the
# signal reaches the group, not only the process gpuprobe started), gpuprobe returns WANT_STATUS.
signal() {
	sig=$1 want=$2
	pids=$work/pids.$sig
	rm -f "$pids"
	$defaults "$gpuprobe" run -- sh -c 'echo $$ >'"$pids"'; sleep 300; echo not reached' &
	gp=$!
	wait_file "$pids"
	read -r shpid <"$pids"
	i=0 sleeppid=
	while [ -z "$sleeppid" ] && [ $i -lt 100 ]; do
		sleeppid=$(child_of "$shpid")
		[ -n "$sleeppid" ] || sleep 0.1
		i=$((i + 1))
	done
	[ -n "$sleeppid" ] || fail "SIG$sig: the application's sleep did not start"
	kill -"$sig" "$gp"
	wait "$gp"
	status=$?
	[ "$status" = "$want" ] || fail "SIG$sig: gpuprobe returned $status, expected $want"
	gone "$shpid" || fail "SIG$sig: the application's shell ($shpid) still runs"
	gone "$sleeppid" || fail "SIG$sig: the application's child ($sleeppid) still runs"
	echo "ok: SIG$sig -> $status, the application's group is gone"
}
signal TERM 143
signal HUP 129
if [ -n "$defaults" ]; then
	signal INT 130
	signal QUIT 131
else
	echo "SKIP (part): env --default-signal missing: SIGINT and SIGQUIT not checked"
fi

# the application handles the signal itself: its own status comes back
out=$work/trap
"$gpuprobe" run -- sh -c 'trap "echo trapped >'"$out"'.done; exit 7" TERM; echo ready >'"$out"'; while :; do sleep 0.1; done' &
gp=$!
wait_file "$out"
kill -TERM "$gp"
wait "$gp"
status=$?
[ "$status" = 7 ] || fail "trapped SIGTERM: gpuprobe returned $status, expected 7"
[ -s "$out.done" ] || fail "trapped SIGTERM: the application's trap did not run"
echo "ok: the application traps SIGTERM and exits 7 -> 7"

# a signal ignored when gpuprobe starts stays ignored for the application (nohup)
out=$work/nohup
"$gpuprobe" run -- sh -c 'echo ready >'"$out"'; sleep 1; echo survived >'"$out"'.done' &
gp=$!
wait_file "$out"
kill -INT "$gp" 2>/dev/null   # the background job's SIGINT is ignored: nothing happens
wait "$gp"
status=$?
[ "$status" = 0 ] && [ -s "$out.done" ] || fail "ignored SIGINT: gpuprobe returned $status"
echo "ok: an ignored SIGINT stays ignored -> 0"

# gpuprobe killed outright: the application does not run on under init
pids=$work/pids.kill
"$gpuprobe" run -- sh -c 'echo $$ >'"$pids"'; exec sleep 300' &
gp=$!
wait_file "$pids"
read -r apppid <"$pids"
kill -KILL "$gp"
wait "$gp" 2>/dev/null
gone "$apppid" || { kill -KILL "$apppid"; fail "SIGKILL: the application ($apppid) still runs"; }
echo "ok: gpuprobe killed with SIGKILL -> the application got SIGTERM"
echo PASS
