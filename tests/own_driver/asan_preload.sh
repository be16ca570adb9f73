# Sourced by the own-driver tests. In the ASan/UBSan build (scripts/test.sh's second stage) the
# shim links libasan but the nvcc-built samples do not, and the ASan runtime must come first in a
# process or it aborts before main. Prefixing a sample's run with this preloads the runtime the
# shim itself links, so the own driver is still checked under ASan; in a plain build it is empty.
# usage: own_driver_asan_env SHIM_DIR   (prints "LD_PRELOAD=/path/libasan.so.N" or nothing)
own_driver_asan_env() {
	ldd "$1/libcuda.so.1" 2>/dev/null | awk '$1 ~ /^libasan\.so/ && $2 == "=>" { print "LD_PRELOAD=" $3; exit }'
}
