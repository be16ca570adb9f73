#!/usr/bin/env bash
# gpuprobe-nvcc (tools/gpuprobe-nvcc) against the real nvcc, no GPU needed: a .cu compiled with
# --cubin, -fatbin and -o to an executable gives the same files as plain nvcc (an executable the
# same but for the process id in nvcc's temporary file names, tmpxft_PID_, which two plain nvcc
# runs differ in too), the same exit status, stdout and stderr (-Xptxas -v's report included), and
# a record in the cache for the cubin holding the kernels (looked up as the shim does: the file
# named by the cubin's SHA-256, its ptx_sha256 that of the PTX it holds; cubins inside a fatbin or
# an executable taken out by `gpuprobe fatbin`); nothing left in TMPDIR. A compile error, --version,
# -ptx, nvcc's -v and --dryrun, and a gpuprobe-nvcc without gpuprobe-ptxas beside it (the fallback:
# the real nvcc unchanged, no record) give exactly what nvcc gives. `gpuprobe run` sets NVCC to gpuprobe-nvcc unless set.
# usage: nvcc.sh GPUPROBE_NVCC REAL_NVCC GPUPROBE
set -u
wrap=$(readlink -f "$1") real=$2 gp=$(readlink -f "$3")
self=$wrap
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fails=$((fails + 1)); }
check() { if [ "$2" = "$3" ]; then ok "$1"; else bad "$1"; echo "--- expected"; echo "$2"; echo "--- got"; echo "$3"; fi; }
unset GPUPROBE_LOG GPUPROBE_REAL_NVCC NVCC
export GPUPROBE_CACHE_DIR=$tmp/cache GPUPROBE_REAL_NVCC=$real
mkdir -p "$tmp/src"
cat >"$tmp/src/k.cu" <<'EOF'
extern "C" __global__ void gp_nvcc_scale(float *v, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        v[i] *= a;
}
int main() { return 0; }
EOF
printf 'extern "C" __global__ void broken(float *v) { v[0] = undeclared; }\n' >"$tmp/src/bad.cu"
cp -p "$tmp/src/k.cu" "$tmp/src/kern.cu"
# normalize FILE: nvcc's temporary file names carry its process id
# and ptxas -v's compile time differs from run to run
norm() { LC_ALL=C sed -e 's/tmpxft_[0-9a-f]\{8\}_/tmpxft_XXXXXXXX_/g' -e 's/Compile time = [0-9.]* ms/Compile time = T ms/' "$1" | sha256sum | cut -c1-64; }

# compare NAME OUTFILE ARGS...: plain nvcc, then gpuprobe-nvcc, in the same directory (-lineinfo
# records the source's path) with the same TMPDIR (nvcc -v and --dryrun name it); their files into
# p/NAME and w/NAME; what each leaves in TMPDIR listed in left-p and left-w, then removed
compare() {
	local name=$1 out=$2
	shift 2
	local d f
	for d in p w; do
		rm -rf "$tmp/run"
		mkdir -p "$tmp/run" "$tmp/$d/$name" "$tmp/tmpd"
		cp -p "$tmp/src/"*.cu "$tmp/run/"   # -lineinfo records the source's mtime
		local prog=$real
		[ $d = w ] && prog=$wrap
		(cd "$tmp/run" && TMPDIR=$tmp/tmpd "$prog" "$@" >out.txt 2>err.txt; echo $? >rc)
		ls -A "$tmp/tmpd" | sed "s/tmpxft_[0-9a-f]*_/tmpxft_X_/; s/^/$name: /" >>"$tmp/left-$d"
		rm -rf "$tmp/tmpd"
		for f in rc out.txt err.txt $out; do
			[ -e "$tmp/run/$f" ] && mv "$tmp/run/$f" "$tmp/$d/$name/"
		done
	done
	local same=1
	for f in rc out.txt err.txt $out; do
		if [ ! -e "$tmp/p/$name/$f" ] && [ ! -e "$tmp/w/$name/$f" ]; then
			continue
		fi
		[ "$(norm "$tmp/p/$name/$f" 2>&1)" = "$(norm "$tmp/w/$name/$f" 2>&1)" ] ||
			{ same=0; echo "--- $name: $f differs"; diff "$tmp/p/$name/$f" "$tmp/w/$name/$f" 2>&1 | head -5; }
	done
	[ $same = 1 ] && ok "$name: the same as plain nvcc (exit $(cat "$tmp/p/$name/rc"), stdout, stderr${out:+, $out})" ||
		bad "$name: gpuprobe-nvcc differs from nvcc"
}
# recorded FILE: FILE's SHA-256 has a record that checks out (ptxas's, holding the kernel)
recorded() {
	local key rec
	key=$(sha256sum "$1" | cut -c1-64)
	rec=$GPUPROBE_CACHE_DIR/$key.jitptx
	[ -f "$rec" ] || { echo "no $rec"; return 1; }
	[ "$(sed -n 2p "$rec")" = "source ptxas" ] || { echo "$rec: $(sed -n 2p "$rec")"; return 1; }
	[ "$(sed -n 's/^ptx_sha256 //p' "$rec")" = "$(sed '1,/^$/d' "$rec" | sha256sum | cut -c1-64)" ] ||
		{ echo "$rec: the PTX's hash does not check out"; return 1; }
	sed '1,/^$/d' "$rec" | grep -q 'gp_nvcc_scale' || { echo "$rec: no gp_nvcc_scale in its PTX"; return 1; }
}
# kernel_cubins NAME FILE: the cubins in FILE that hold the kernel, one path a line
kernel_cubins() {
	"$gp" fatbin --kind cubin -o "$tmp/x-$1" "$2" >/dev/null 2>&1
	grep -l gp_nvcc_scale "$tmp/x-$1"/*.cubin 2>/dev/null
}

compare cubin k.cubin -arch=sm_90 --cubin -o k.cubin k.cu
why=$(recorded "$tmp/w/cubin/k.cubin") && ok "cubin: a record for the cubin" || bad "cubin: $why"
# CuPy's command (cupy/cuda/compiler.py compile_using_nvcc): -gencode=..., --cubin, the source by
# its absolute path, the cubin beside it in the working directory
compare cupy kern.cubin -gencode=arch=compute_90,code=sm_90 --cubin -std=c++17 "$tmp/run/kern.cu"
why=$(recorded "$tmp/w/cupy/kern.cubin") && ok "cupy: a record for the cubin" || bad "cupy: $why"
compare fatbin k.fatbin -arch=sm_90 -fatbin -o k.fatbin k.cu
n=0 good=0
for c in $(kernel_cubins fatbin "$tmp/w/fatbin/k.fatbin"); do
	n=$((n + 1))
	why=$(recorded "$c") && good=$((good + 1)) || echo "$why"
done
[ $n -gt 0 ] && [ $good = $n ] && ok "fatbin: a record for each of its $n kernel cubins" ||
	bad "fatbin: $good of $n kernel cubins recorded"
compare exe k.exe -gencode arch=compute_90,code=sm_90 -gencode arch=compute_80,code=sm_80 -o k.exe k.cu
n=0 good=0
for c in $(kernel_cubins exe "$tmp/w/exe/k.exe"); do
	n=$((n + 1))
	why=$(recorded "$c") && good=$((good + 1)) || echo "$why"
done
[ $n = 2 ] && [ $good = $n ] && ok "exe: a record for each of its 2 kernel cubins (sm_90, sm_80)" ||
	bad "exe: $good of $n kernel cubins recorded (2 expected)"
compare verbose k.cubin -arch=sm_90 --cubin -Xptxas -v -O3 -lineinfo -o k.cubin k.cu
grep -q "ptxas info" "$tmp/w/verbose/err.txt" "$tmp/w/verbose/out.txt" && ok "verbose: ptxas's report passed on" ||
	bad "verbose: no 'ptxas info' line"
why=$(recorded "$tmp/w/verbose/k.cubin") && ok "verbose: a record for the cubin" || bad "verbose: $why"
check "verbose: the record has nvcc's -lineinfo for ptxas" "lineinfo 1" \
	"$(grep '^lineinfo ' "$GPUPROBE_CACHE_DIR/$(sha256sum "$tmp/w/verbose/k.cubin" | cut -c1-64).jitptx")"
compare error "" -arch=sm_90 --cubin -o bad.cubin bad.cu
[ "$(cat "$tmp/w/error/rc")" != 0 ] && ok "error: a failure, as nvcc's" || bad "error: exit 0"
compare version "" --version
# nvcc's -v (its steps as they run) and --dryrun: nvcc's own, no record
before=$(ls "$GPUPROBE_CACHE_DIR" | wc -l)
compare nvcc-v k.cubin -arch=sm_90 --cubin -v -o k.cubin k.cu
compare dryrun "" -arch=sm_90 --cubin --dryrun -o k.cubin k.cu
check "nvcc's -v and --dryrun: no record" "$before" "$(ls "$GPUPROBE_CACHE_DIR" | wc -l)"
check "nvcc's -v: GPUPROBE_LOG=1 says why" "gpuprobe-nvcc: nvcc's -v: running $real unchanged" \
	"$(mkdir -p "$tmp/log" && cd "$tmp/log" && GPUPROBE_LOG=1 TMPDIR=$tmp/log "$wrap" -arch=sm_90 --cubin -v -o k.cubin "$tmp/src/k.cu" 2>&1 | head -1)"
compare ptx k.ptx -arch=sm_90 -ptx -o k.ptx k.cu
# (nvcc itself leaves a file of a failed compile there: the same then)
check "TMPDIR: what nvcc leaves there and nothing more" "$(cat "$tmp/left-p")" "$(cat "$tmp/left-w")"

# fallback: gpuprobe-ptxas not beside it: the real nvcc, unchanged, and no record
mkdir -p "$tmp/lonely"
cp "$wrap" "$tmp/lonely/gpuprobe-nvcc"
before=$(ls "$GPUPROBE_CACHE_DIR" | wc -l)
wrap=$tmp/lonely/gpuprobe-nvcc
compare fallback k.cubin -arch=sm_90 --cubin -Xptxas -O2 -o k.cubin k.cu
check "fallback: no record made" "$before" "$(ls "$GPUPROBE_CACHE_DIR" | wc -l)"
check "fallback: GPUPROBE_LOG=1 says why" \
	"gpuprobe-nvcc: no $tmp/lonely/gpuprobe-ptxas: running $real unchanged" \
	"$(cd "$tmp/w/fallback" && GPUPROBE_LOG=1 "$wrap" --version 2>&1 >/dev/null)"
# no real nvcc
check "no nvcc: one line, exit 127" "gpuprobe-nvcc: GPUPROBE_REAL_NVCC=/nonexistent/nvcc is not a program other than gpuprobe-nvcc
127" "$(GPUPROBE_REAL_NVCC=/nonexistent/nvcc "$self" --version 2>&1; echo $?)"
# the real nvcc found on PATH, not gpuprobe-nvcc itself (a link to it named nvcc first on PATH)
mkdir -p "$tmp/self"
ln -s "$self" "$tmp/self/nvcc"
check "nvcc on PATH after a link to gpuprobe-nvcc" "$("$real" --version)" \
	"$(env -u GPUPROBE_REAL_NVCC -u CUDA_PATH PATH="$tmp/self:${real%/*}:$PATH" "$tmp/self/nvcc" --version)"

# gpuprobe run: NVCC names gpuprobe-nvcc unless set
bin=$(cd "$(dirname "$gp")" && pwd)
check "gpuprobe run sets NVCC" "$bin/gpuprobe-nvcc" "$(env -u NVCC "$gp" run -- sh -c 'echo "$NVCC"' 2>&1)"
check "gpuprobe run keeps the user's NVCC" "/opt/my/nvcc -ccbin g++" \
	"$(NVCC="/opt/my/nvcc -ccbin g++" "$gp" run -- sh -c 'echo "$NVCC"' 2>&1)"
echo "$fails failures"
[ $fails = 0 ]
