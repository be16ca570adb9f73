# The checks of a run of this folder's probes on examples/apps/vec_add 8 (8 blocks of 32 threads),
# shared by run.sh (PoCL) and tests/gpu/bpftime_maps.sh (the GPU). Source it, define
# check NAME EXPECTED GOT, then call bpftime_maps_check DIR: DIR holds plain.out (vec_add 8 without
# probes) and, per probe, NAME.out and NAME.err of `gpuprobe run -p NAME.bpf.o -- vec_add 8`
# with GPUPROBE_TOP=1000, and NAME.rc its exit status.
bpftime_maps_check() {
	local work=$1 h0 d ok i n v
	val() { grep -o "^@$2\[$3\]: [0-9]*" "$1" | awk '{ print $2 }'; }
	same() {
		check "$1: exit 0" 0 "$(cat "$work/$1.rc")"
		check "$1: the app's output as without probes" "$(cat "$work/plain.out")" "$(cat "$work/$1.out")"
	}
	same gpu_array
	h0=$(val "$work/gpu_array.err" hits 0)
	check "gpu_array: racy read-add-write in 1..256" 1 "$([ "${h0:-0}" -ge 1 ] && [ "${h0:-0}" -le 256 ] && echo 1 || echo 0)"
	check "gpu_array: leader count" 1 "$(val "$work/gpu_array.err" hits 1)"
	check "gpu_array: atomic add at exit" 256 "$(val "$work/gpu_array.err" hits 2)"
	check "gpu_array: atomic add at entry" 256 "$(val "$work/gpu_array.err" hits 3)"
	check "gpu_array: printk lines" 256 "$(grep -c '^array_exit$' "$work/gpu_array.err")"

	same gpu_hash
	check "gpu_hash: a struct per thread" 256 "$(grep -c '^@threads\[' "$work/gpu_hash.err")"
	# each (sm, warp, lane, bx, by, bz, tx, ty, tz, time) under bx << 16 | tx, lane = tx (32-thread blocks)
	check "gpu_hash: every struct under its thread's key, lane = thread_x" 256 "$(sed -n 's/^@threads\[\([0-9]*\)\]: (\(.*\))$/\1, \2/p' "$work/gpu_hash.err" |
		awk -F', ' '$1 == $5 * 65536 + $8 && $4 == $8 && $8 < 32 && $5 < 8 && $6 == 0 && $9 == 0 { n++ } END { print n + 0 }')"
	# bpftime's idiom: lookup, atomic add on a hit, NOEXIST insert of 1 on a miss. Threads that
	# miss together (a GPU warp's 32 lanes) insert once and lose the other counts: on a 1501
	# map (one shared copy, bpftime's semantics) that is the program's own race, as on bpftime.
	# Threads run one after another on PoCL (256 exactly); on a GPU at least one per key.
	for m in per_sm:SM per_warp:warp; do
		local k=${m%%:*} sum keys
		sum=$(awk -F': ' "/^@$k\\[/ { s += \$2 } END { print s + 0 }" "$work/gpu_hash.err")
		keys=$(grep -c "^@$k\\[" "$work/gpu_hash.err")
		if [ "${BPFTIME_MAPS_DEVICE:-pocl}" = pocl ]; then
			check "gpu_hash: ${m#*:} counts sum" 256 "$sum"
		else
			check "gpu_hash: ${m#*:} counts sum in keys..256" 1 \
				"$([ "$keys" -ge 1 ] && [ "$sum" -ge "$keys" ] && [ "$sum" -le 256 ] && echo 1 || echo 0)"
		fi
	done
	check "gpu_hash: one key, no other" 1 "$(grep -c '^@by_pid\[' "$work/gpu_hash.err")"
	check "gpu_hash: keyed by a pid, valued 7" 7 "$(grep '^@by_pid\[' "$work/gpu_hash.err" | grep -v '^@by_pid\[0\]' | awk -F': ' '{ print $2 }')"

	same host_maps
	check "host_maps: per-thread counts summed" 256 "$(val "$work/host_maps.err" per_thread 0)"
	check "host_maps: per-thread thread_x summed" 3968 "$(val "$work/host_maps.err" per_thread 2)"
	d=$(val "$work/host_maps.err" per_thread 1)
	check "host_maps: per-thread durations > 0" 1 "$([ "${d:-0}" -gt 0 ] && echo 1 || echo 0)"
	check "host_maps: atomic add on the one copy" 256 "$(val "$work/host_maps.err" atomic_shared 0)"
	ok=1
	for i in 0 1 2 3 4 5 6 7 8 9; do
		n=$(( i < 2 ? 32 : 24 )) v=$(val "$work/host_maps.err" shared $i)
		[ "${v:-0}" -ge 1 ] && [ "${v:-0}" -le $n ] || ok=0
	done
	check "host_maps: shared read-add-writes in 1..threads with that thread_x % 10" 1 $ok
	check "host_maps: entry printk lines" 256 "$(grep -c '^entered [0-9]* at [0-9]*$' "$work/host_maps.err")"
	check "host_maps: exit printk lines" 256 "$(grep -c '^exited [0-9]* after [0-9]* ns$' "$work/host_maps.err")"

	same kernel_shared
	check "kernel_shared: GPU threads' atomic adds" 256 "$(val "$work/kernel_shared.err" calls 0)"
	check "kernel_shared: the uretprobe on cudaLaunchKernel (2 launches)" 2 "$(val "$work/kernel_shared.err" calls 1)"
	check "kernel_shared: the uretprobe's printk" 2 "$(grep -c '^gpuprobe: triggered$' "$work/kernel_shared.err")"
	check "kernel_shared: leader's *count += 1" 1 "$(val "$work/kernel_shared.err" bins 3)"
	check "kernel_shared: bpftime's cuda__ prefix names no kernel here" 1 \
		"$(grep -c '^gpuprobe: kretprobe/cuda__Z9vectorAddPKfS0_Pf: no kernel of the application matched' "$work/kernel_shared.err")"

	same special_sections
	# vectorAdd: 2 loads and a store a thread, oddEven a load and a store: 256 * 5
	check "special_sections: __memcapture's atomic count of loads and stores" 1280 "$(val "$work/special_sections.err" accesses 1)"
	v=$(val "$work/special_sections.err" accesses 0)
	check "special_sections: __memcapture's racy *v = *v + 1 in 1..1280" 1 "$([ "${v:-0}" -ge 1 ] && [ "${v:-0}" -le 1280 ] && echo 1 || echo 0)"
	check "special_sections: __directly_run names no kernel" 1 \
		"$(grep -c '^gpuprobe: kprobe/__directly_run: no kernel of the application matched' "$work/special_sections.err")"
}
