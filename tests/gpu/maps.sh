#!/bin/bash
# GPU test of the maps runtime (tests/maps/gpu_maps_run.c): the device helpers in a 65,536-thread
# kernel against maps made with the real driver (cuMemAlloc, cuMemHostAlloc DEVICEMAP), every
# result checked exactly on the host (sharded counter, racing hash inserts, ring records, exact
# drop counts of an overflowing ring, 4 rounds of per-warp batches of three record sizes that
# wrap at the ring's end, printk, deletes).
# usage: tests/gpu/maps.sh [BUILD_DIR]   (default: $BUILD, then build-maps, then build). Logs to $OUT.
# gpu_maps_run needs only libc and the driver, so a binary built on Debian runs as is.
# Exit 77 when there is no GPU or driver.
set -u -o pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-${BUILD:-}}
if [ -z "$build" ] || [ ! -x "$build/bin/gpu_maps_run" ]; then
	for b in "$here/build-maps" "$here/build"; do
		[ -x "$b/bin/gpu_maps_run" ] && { build=$b; break; }
	done
fi
if [ -z "$build" ] || [ ! -x "$build/bin/gpu_maps_run" ]; then
	echo "maps.sh: build gpu_maps_run first (cmake --build BUILD --target gpu_maps_run)"
	exit 2
fi
work=${OUT:-$(mktemp -d)}
mkdir -p "$work"
"$build/bin/gpu_maps_run" --ptx "$work/maps.ptx" 2>&1 | tee "$work/maps.log"
exit "${PIPESTATUS[0]}"
