#!/usr/bin/env bash
# Process events, files and the environment under the shim, over tests/shim_jit's fake driver:
# every case runs under a timeout (a hang is a failure, never a stuck test).
# usage: proc.sh fork|files|environ FORK_APP SHIM FAKE_DRIVER PTX PROBE.bpf.o (absolute paths)
# (GPUPROBE_LAZY=0 where a case needs the module instrumented at load: the cache, inlining)
#   fork     fork then exit / _exit / exec / CUDA in the child, posix_spawn, SIGTERM, SIGKILL:
#            no hang, exactly one report from the parent, the child's own where it used CUDA,
#            the parent's JSON intact
#   files    GPUPROBE_JSON and output.json against a planted link, a FIFO, another user's file;
#            no descriptor leaks into children; the cubin cache and GPUPROBE_DUMP_DIR
#   environ  bad values give one line without GPUPROBE_LOG; a setuid process honours nothing
set -u
section=$1 app=$2 shim=$3 fake=$4 ptx=$5 probe=$6
tmp=$(mktemp -d); chmod 755 "$tmp"; trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fails=$((fails + 1)); }
check() { if [ "$2" = "$3" ]; then ok "$1"; else bad "$1"; echo "  expected: $2"; echo "  got:      $3"; fi; }

# run NAME MODE [VAR=VALUE...]: the app under a 20 s timeout; stdout NAME.out, stderr NAME.err,
# exit status in $rc (124: it hung)
run() {
	local name=$1 mode=$2
	shift 2
	env GPUPROBE_REAL_LIBCUDA="$fake" GPUPROBE_PROBES="$probe" GPUPROBE_CACHE_DIR="$tmp/cache" \
		"$@" timeout -s KILL 20 "$app" "$shim" "$ptx" "$mode" >"$tmp/$name.out" 2>"$tmp/$name.err"
	rc=$?
	[ $rc = 137 ] && rc=124
}
# as under `gpuprobe run`: GPUPROBE_RUN_PID names the parent of the application
run_under_run() {
	local name=$1 mode=$2
	shift 2
	( export GPUPROBE_RUN_PID=$BASHPID
	  exec env GPUPROBE_REAL_LIBCUDA="$fake" GPUPROBE_PROBES="$probe" GPUPROBE_CACHE_DIR="$tmp/cache" \
		"$@" timeout -s KILL 20 "$app" "$shim" "$ptx" "$mode" >"$tmp/$name.out" 2>"$tmp/$name.err" )
	rc=$?
	[ $rc = 137 ] && rc=124
}
# how many reports with this count (text: "@proc_counts[0]: N")
reports() { grep -c "^@proc_counts\[0\]: $2\$" "$tmp/$1.err"; }
# JSON: the count in FILE's map records, one per record, space-separated
jcounts() { python3 - "$1" <<'PY'
import json, sys
out = []
for line in open(sys.argv[1], "rb").read().split(b"\n")[:-1]:
    r = json.loads(line)
    if r.get("type") == "map" and r.get("name") == "proc_counts":
        out.append(str(r["data"].get("0", 0)))
print(" ".join(out))
PY
}
# every line whole (ends in a newline, parses), no NUL byte: "whole" or what is wrong
whole() { python3 - "$1" <<'PY'
import json, sys
b = open(sys.argv[1], "rb").read()
if b"\0" in b: print("NUL bytes"); sys.exit()
if b and not b.endswith(b"\n"): print("torn last line: %r" % b[-60:]); sys.exit()
for line in b.split(b"\n")[:-1]:
    try: json.loads(line)
    except Exception: print("not JSON: %r" % line[:60]); sys.exit()
print("whole")
PY
}
# the process record's pid of a JSON file
jpid() { python3 -c 'import json,sys; r=json.loads(open(sys.argv[1]).readline()); print(r["pid"] if r.get("type")=="process" else "none")' "$1"; }

fork_section() {
	local m
	for m in plain fork-exit fork-_exit fork-many fork-exec-idle; do
		run "$m" "$m"
		check "$m: exit status, no hang" 0 "$rc"
		check "$m: one report, the parent's" "1 0" "$(reports "$m" 3) $(reports "$m" 5)"
	done
	for m in fork-exec fork-cuda spawn; do
		run "$m" "$m"
		check "$m: exit status, no hang" 0 "$rc"
		check "$m: the parent's report and the child's own" "1 1" "$(reports "$m" 3) $(reports "$m" 5)"
	done
	# text: a child's report says whose it is, the application's does not
	run_under_run label fork-exec
	check "text fork-exec (run): the child's report labelled, the parent's not" \
		"1 1 1" "$(grep -c '^gpuprobe: report of process [0-9]* (parent [0-9]*):$' "$tmp/label.err") $(reports label 3) $(reports label 5)"
	# JSON: the parent's file whole and its own; a child using CUDA writes FILE.PID
	for m in fork-exit fork-exec fork-cuda spawn; do
		for how in run first; do
			[ $how = first ] && [ $m = fork-cuda ] && continue   # the child ends first: see docs
			local j=$tmp/json-$m-$how
			mkdir -p "$j"
			echo stale >"$j/out.json"
			if [ $how = run ]; then run_under_run "j-$m" "$m" GPUPROBE_JSON="$j/out.json"
			else run "j-$m" "$m" GPUPROBE_JSON="$j/out.json"; fi
			check "json $m ($how): exit status" 0 "$rc"
			check "json $m ($how): the parent's file whole" whole "$(whole "$j/out.json")"
			check "json $m ($how): the parent's counts" 3 "$(jcounts "$j/out.json")"
			local kids=$(ls "$j" | grep -c '^out\.json\.[0-9]*$')
			if [ $m = fork-exit ]; then
				check "json $m ($how): no other file" 0 "$kids"
			else
				check "json $m ($how): one file of the child's" 1 "$kids"
				local f=$(ls "$j"/out.json.* 2>/dev/null | head -1)
				[ -n "$f" ] && check "json $m ($how): the child's counts, labelled by its PID" \
					"5 ${f##*.}" "$(jcounts "$f") $(jpid "$f")"
			fi
		done
	done
	# the real `gpuprobe run` (it sets GPUPROBE_RUN_PID): the child ends before the parent sets
	# probes up, and still the parent owns FILE
	local gp=$(dirname "$shim")/../bin/gpuprobe g=$tmp/json-gprun
	mkdir -p "$g"
	GPUPROBE_REAL_LIBCUDA="$fake" GPUPROBE_CACHE_DIR="$tmp/cache" timeout -s KILL 20 "$gp" run \
		--json "$g/out.json" -p "$probe" -- "$app" "$shim" "$ptx" fork-cuda >"$tmp/gprun.out" 2>"$tmp/gprun.err"
	check "gpuprobe run fork-cuda: exit status" 0 $?
	local kid=$(ls "$g"/out.json.* 2>/dev/null | head -1)
	check "gpuprobe run fork-cuda: the parent's FILE, the child's FILE.PID" "3 5 ${kid##*.}" \
		"$(jcounts "$g/out.json") $([ -n "$kid" ] && jcounts "$kid") $([ -n "$kid" ] && jpid "$kid")"
	# SIGINT/SIGTERM: the final report, then the process dies of the signal
	run sigterm sigterm
	check "SIGTERM: killed by it (143)" 143 "$rc"
	check "SIGTERM: the final report" 1 "$(reports sigterm 3)"
	run sigterm-app sigterm-app
	check "SIGTERM with the app's handler: its exit status" 3 "$rc"
	check "SIGTERM with the app's handler: one report" 1 "$(reports sigterm-app 3)"
	# SIGKILL: records written whole, one write each (periodic prints every second)
	local k=$tmp/kill.json
	env GPUPROBE_REAL_LIBCUDA="$fake" GPUPROBE_PROBES="$probe" GPUPROBE_CACHE_DIR="$tmp/cache" \
		GPUPROBE_JSON="$k" GPUPROBE_INTERVAL=1 "$app" "$shim" "$ptx" sleep 2>"$tmp/kill.err" &
	local pid=$!
	sleep 2.5
	kill -KILL $pid
	wait $pid 2>/dev/null
	check "SIGKILL: every record whole" whole "$(whole "$k")"
	[ "$(jcounts "$k" | wc -w)" -ge 2 ] && ok "SIGKILL: the periodic records are in the file" \
		|| bad "SIGKILL: periodic records missing: $(cat "$k")"
}

files_section() {
	local root=0
	[ "$(id -u)" = 0 ] && root=1
	# a link planted in place of the JSON path: refused, the target untouched, the report on stderr
	echo precious >"$tmp/victim"
	ln -s "$tmp/victim" "$tmp/link.json"
	run link fork-exit GPUPROBE_JSON="$tmp/link.json"
	check "JSON a planted link: runs" 0 "$rc"
	check "JSON a planted link: target untouched" precious "$(cat "$tmp/victim")"
	check "JSON a planted link: one line" 1 "$(grep -c "^gpuprobe: GPUPROBE_JSON=$tmp/link.json: cannot write it: is a symbolic link" "$tmp/link.err")"
	# a FIFO in place of the JSON path: no hang
	mkfifo "$tmp/fifo.json"
	run fifo plain GPUPROBE_JSON="$tmp/fifo.json"
	check "JSON a FIFO: no hang" 0 "$rc"
	check "JSON a FIFO: one line" 1 "$(grep -c "^gpuprobe: GPUPROBE_JSON=$tmp/fifo.json: cannot write it: .*FIFO" "$tmp/fifo.err")"
	if [ $root = 1 ]; then
		echo theirs >"$tmp/theirs.json"; chmod 666 "$tmp/theirs.json"; chown 65534:65534 "$tmp/theirs.json"
		run theirs plain GPUPROBE_JSON="$tmp/theirs.json"
		check "JSON another user's 0666 file: refused, untouched" "0 theirs" "$rc $(cat "$tmp/theirs.json")"
		check "JSON another user's file: one line" 1 "$(grep -c "cannot write it: belongs to uid 65534" "$tmp/theirs.err")"
	else
		echo "skip another user's file (not root)"
	fi
	# new output: 0600, and no descriptor leaks into an exec'd child
	run mode fork-exec-idle GPUPROBE_JSON="$tmp/new.json"
	check "JSON created 0600" 600 "$(stat -c %a "$tmp/new.json")"
	check "no gpuprobe descriptor in an exec'd child" "" "$(grep 'inherited fd' "$tmp/mode.err" | grep -E 'new\.json|cache')"
	# the configuration's output.json: the same rules (a link refused, 0600, no leak)
	printf 'probes:\n  - path: %s\noutput:\n  json: %s\n' "$probe" "$tmp/cfg-link.json" >"$tmp/link.yaml"
	ln -s "$tmp/victim" "$tmp/cfg-link.json"
	run cfglink plain GPUPROBE_PROBES= GPUPROBE_CONFIG="$tmp/link.yaml"
	check "output.json a planted link: runs, target untouched" "0 precious" "$rc $(cat "$tmp/victim")"
	check "output.json a planted link: one line" 1 "$(grep -c "^gpuprobe: output.json $tmp/cfg-link.json: cannot write it: is a symbolic link" "$tmp/cfglink.err")"
	printf 'probes:\n  - path: %s\noutput:\n  json: %s\n' "$probe" "$tmp/cfg.json" >"$tmp/ok.yaml"
	run cfgok fork-exec-idle GPUPROBE_PROBES= GPUPROBE_CONFIG="$tmp/ok.yaml"
	check "output.json: created 0600, counts" "600 3" "$(stat -c %a "$tmp/cfg.json") $(jcounts "$tmp/cfg.json")"
	check "output.json: no descriptor in an exec'd child" "" "$(grep 'inherited fd' "$tmp/cfgok.err" | grep cfg.json)"
	# the cubin cache: a FIFO named like an entry does not block; a link or another user's
	# entry is ignored with one line
	rm -rf "$tmp/cache"
	run cache1 plain GPUPROBE_PRECOMPILE=link GPUPROBE_LAZY=0
	local entry=$(ls "$tmp/cache"/*.cubin 2>/dev/null | head -1)
	[ -n "$entry" ] && ok "cache: an entry written" || bad "cache: no entry written"
	rm -f "$entry"; mkfifo "$entry"
	run cachefifo plain GPUPROBE_PRECOMPILE=link GPUPROBE_LAZY=0
	check "cache: a FIFO entry: no hang" 0 "$rc"
	check "cache: a FIFO entry: one line" 1 "$(grep -c 'cache entry .* is not a regular file: ignored, compiled again' "$tmp/cachefifo.err")"
	check "cache: the FIFO replaced by a good entry" "-" "$(stat -c %A "$entry" | cut -c1)"
	if [ $root = 1 ]; then
		chown 65534 "$entry"
		run cacheforeign plain GPUPROBE_PRECOMPILE=link GPUPROBE_LAZY=0
		check "cache: another user's entry: one line" 1 "$(grep -c 'cache entry .* belongs to another user: ignored, compiled again' "$tmp/cacheforeign.err")"
	fi
	rm -rf "$tmp/cache"; mkdir "$tmp/real-cache"; ln -s "$tmp/real-cache" "$tmp/cache"
	run cachelink plain GPUPROBE_PRECOMPILE=link GPUPROBE_LAZY=0
	check "cache: the directory a link: one line, runs" "0 1" "$rc $(grep -c "^gpuprobe: cubin cache $tmp/cache: is a symbolic link; instrumented modules are compiled at every run" "$tmp/cachelink.err")"
	rm -f "$tmp/cache"
	# GPUPROBE_DUMP_DIR: a link planted at a dump file's name is replaced, never followed
	mkdir -p "$tmp/dump"
	ln -s "$tmp/victim" "$tmp/dump/module-0001.ptx"
	run dump plain GPUPROBE_PROBES= GPUPROBE_DUMP_DIR="$tmp/dump"
	check "dump: a planted link: target untouched" precious "$(cat "$tmp/victim")"
	check "dump: the PTX written, 0600" "600 $(wc -c <"$ptx")" "$(stat -c '%a %s' "$tmp/dump/module-0001.ptx")"
	chmod 777 "$tmp/dump"
	run dump2 plain GPUPROBE_PROBES= GPUPROBE_DUMP_DIR="$tmp/dump"
	check "dump: a directory others can write: one line" 1 "$(grep -c "^gpuprobe: GPUPROBE_DUMP_DIR=$tmp/dump: is writable by others" "$tmp/dump2.err")"
	# a group-writable probe object: not attached, one line, the app runs
	cp "$probe" "$tmp/gw.bpf.o"; chmod 664 "$tmp/gw.bpf.o"
	run gw plain GPUPROBE_PROBES="$tmp/gw.bpf.o"
	check "a group-writable probe: runs without it" "0 0" "$rc $(reports gw 3)"
	check "a group-writable probe: one line" 1 "$(grep -c 'gw.bpf.o.*group' "$tmp/gw.err")"
}

environ_section() {
	# a bad value: one line, without GPUPROBE_LOG
	run va plain GPUPROBE_MAP_VA=0xffffffffffe00000
	check "GPUPROBE_MAP_VA wrapping: runs, one line" "0 1" "$rc $(grep -c '^gpuprobe: GPUPROBE_MAP_VA=0xffffffffffe00000: expected' "$tmp/va.err")"
	run va2 plain GPUPROBE_MAP_VA=0x600000001000
	check "GPUPROBE_MAP_VA unaligned: one line" 1 "$(grep -c '^gpuprobe: GPUPROBE_MAP_VA=0x600000001000: expected' "$tmp/va2.err")"
	run growth plain GPUPROBE_INLINE_GROWTH=abc GPUPROBE_LAZY=0
	check "GPUPROBE_INLINE_GROWTH garbage: runs, one line" "0 1" "$rc $(grep -c '^gpuprobe: GPUPROBE_INLINE_GROWTH=abc: expected' "$tmp/growth.err")"
	run growth2 plain GPUPROBE_INLINE_GROWTH=99999999999999999999 GPUPROBE_LAZY=0
	check "GPUPROBE_INLINE_GROWTH overflow: one line" 1 "$(grep -c '^gpuprobe: GPUPROBE_INLINE_GROWTH=99999999999999999999: expected' "$tmp/growth2.err")"
	run interval plain GPUPROBE_INTERVAL=5s
	check "GPUPROBE_INTERVAL bad: runs, one line, report" "0 1 1" "$rc $(grep -c 'GPUPROBE_INTERVAL=5s' "$tmp/interval.err") $(reports interval 3)"
	# setuid: nothing honoured, the named driver never loaded (needs root to make one)
	if [ "$(id -u)" != 0 ]; then
		echo "skip setuid (not root)"
		return
	fi
	cp "$app" "$tmp/suid_app"; chown 65534 "$tmp/suid_app"; chmod 4755 "$tmp/suid_app"
	local out
	out=$(env GPUPROBE_REAL_LIBCUDA="$fake" GPUPROBE_PROBES="$probe" GPUPROBE_DUMP_DIR="$tmp/suid-dump" \
		timeout -s KILL 20 "$tmp/suid_app" "$shim" "$ptx" plain 2>&1)
	rc=$?
	if [ "$(stat -c %u "$tmp/suid_app")" != 65534 ] || grep -q nosuid <(findmnt -no OPTIONS --target "$tmp"); then
		echo "skip setuid (cannot make a setuid program here)"
	else
		check "setuid: GPUPROBE_REAL_LIBCUDA not honoured" 1 "$(grep -c '^gpuprobe: GPUPROBE_REAL_LIBCUDA ignored: a setuid or setgid process' <<<"$out")"
		check "setuid: the named driver not loaded" 0 "$(grep -c "real driver $fake" <<<"$out")"
		check "setuid: no dump directory" no "$([ -e "$tmp/suid-dump" ] && echo yes || echo no)"
	fi
	# the same rule without root, as tests see it
	run secure plain GPUPROBE_TEST_SECURE=1
	check "secure mode: no driver from GPUPROBE_REAL_LIBCUDA" 1 "$(grep -c '^gpuprobe: GPUPROBE_REAL_LIBCUDA ignored' "$tmp/secure.err")"
}

case $section in
fork) fork_section ;;
files) files_section ;;
environ) environ_section ;;
*) echo "usage: proc.sh fork|files|environ ..."; exit 2 ;;
esac
[ $fails = 0 ] && echo "ok proc.sh $section" || echo "FAIL proc.sh $section: $fails"
[ $fails = 0 ]
