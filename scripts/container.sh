#!/usr/bin/env bash
# Build gpuprobe's container image (Dockerfile; docs/container.md).
#
#   scripts/container.sh [--work DIR] [--keep] [--save]   the Debian 12 image, no registry: the base root
#       filesystem made by mmdebstrap from Debian's package archive (the packages gpuprobe builds
#       and runs with installed), imported into buildah's own storage (vfs, under DIR), then the
#       Dockerfile built by buildah with chroot isolation up to its `debian` stage, which runs
#       the no-GPU tests (its `test` stage) on the way. Last, `gpuprobe --help` and the example
#       probes' verification run inside the image. --save writes it to DIR/gpuprobe-debian.oci.tar;
#       --keep keeps buildah's storage (DIR/storage) and the image in it.
#   scripts/container.sh --docker [--work DIR]   the CUDA image (the Dockerfile's `cuda` stage)
#       with docker, from Docker Hub's debian:12 and nvidia/cuda images: tag gpuprobe:cuda.
#
# Both need the CUDA 13 headers ($CUDA_ROOT/include, default /usr/local/cuda), as a native build
# does. Exit 77 (skip) when mmdebstrap/buildah are missing or cannot run here (neither root nor
# user namespaces with subordinate ids), 1 on a failure. MIRROR overrides Debian's archive
# (default http://deb.debian.org/debian), JOBS the build's parallelism (default nproc).
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=${TMPDIR:-/tmp}/gpuprobe-container-$(id -u)
docker=0 keep=0 save=0
while [ $# -gt 0 ]; do
	case $1 in
	--work) work=$2; shift 2 ;;
	--docker) docker=1; shift ;;
	--keep) keep=1; shift ;;
	--save) save=1; shift ;;
	-h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "container.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
done
cuda=${CUDA_ROOT:-/usr/local/cuda}
mirror=${MIRROR:-http://deb.debian.org/debian}
jobs=${JOBS:-$(nproc)}
skip() { echo "SKIP: $*"; exit 77; }
die() { echo "container.sh: $*" >&2; exit 1; }
step() { echo "container.sh: [$(date +%T)] $*"; }
t0=$(date +%s)

[ -f "$cuda/include/cuda.h" ] || skip "no CUDA headers at $cuda/include (set CUDA_ROOT)"
if [ $docker = 1 ]; then
	command -v docker >/dev/null || skip "no docker"
	docker info >/dev/null 2>&1 || skip "docker cannot reach its daemon here"
else
	command -v mmdebstrap >/dev/null || skip "no mmdebstrap (apt-get install mmdebstrap)"
	command -v buildah >/dev/null || skip "no buildah (apt-get install buildah)"
	if [ "$(id -u)" != 0 ]; then
		unshare -U -r true 2>/dev/null || skip "not root and no user namespaces here: mmdebstrap and buildah cannot make a root filesystem"
		grep -q "^$(id -un):" /etc/subuid 2>/dev/null || skip "not root and no /etc/subuid range for $(id -un): rootless buildah needs one"
	fi
fi

# ---- the build context: Dockerfile, src/ (the working tree's files git tracks or would), cuda/include
mkdir -p "$work" || die "cannot make $work"
ctx=$work/context
rm -rf "$ctx" && mkdir -p "$ctx/src" "$ctx/cuda" || die "cannot make $ctx"
step "context: sources of $repo and $cuda/include"
(cd "$repo" && git ls-files -co --exclude-standard -z | xargs -0 cp --parents -t "$ctx/src" 2>/dev/null) ||
	die "cannot copy the sources (git ls-files in $repo)"
cp "$repo/Dockerfile" "$ctx/Dockerfile" && cp -r "$cuda/include" "$ctx/cuda/include" || die "cannot copy the Dockerfile or CUDA headers"
# The packages: what scripts/build.sh installs for a native build, so that the image follows the
# project's dependencies; the runtime list is the Dockerfile's.
# (its PACKAGES=(...) and PACKAGES+=(...) lines), less the container tools themselves and the
# heavy tools only some tests use (chromium, prometheus).
PACKAGES=()
eval "$(sed -n '/^PACKAGES=(/,/^missing=()/p' "$repo/scripts/build.sh" | grep -v '^missing=')"
build_pkgs=
for p in "${PACKAGES[@]}" clinfo; do
	case $p in mmdebstrap|buildah|chromium|prometheus) ;; *) build_pkgs="$build_pkgs $p" ;; esac
done
runtime_pkgs=$(sed -n 's/^ARG RUNTIME_PACKAGES="\(.*\)"$/\1/p' "$repo/Dockerfile")
[ ${#PACKAGES[@]} -gt 0 ] && [ -n "$runtime_pkgs" ] || die "cannot read the package lists (scripts/build.sh, Dockerfile)"

if [ $docker = 1 ]; then
	step "docker build --target cuda"
	docker build --build-arg JOBS="$jobs" --build-arg BUILD_PACKAGES="$build_pkgs" --target cuda -t gpuprobe:cuda -f "$ctx/Dockerfile" "$ctx" || die "docker build failed"
	echo "container.sh: built gpuprobe:cuda in $(( $(date +%s) - t0 )) s"
	exit 0
fi

# ---- the base root filesystem (kept between runs while the package list is the same)
pkgs=$(echo "ca-certificates $build_pkgs $runtime_pkgs" | tr ' ' '\n' | sort -u | tr '\n' ' ')
key=$(echo "$mirror $pkgs" | sha256sum | cut -c1-16)
base=$work/debian12-$key.tar
if [ ! -s "$base" ]; then
	step "mmdebstrap bookworm from $mirror"
	rm -rf "$work"/debian12-*.tar
	mmdebstrap --variant=apt --include="$(echo $pkgs | tr ' ' ',')" \
		--aptopt='APT::Install-Recommends "false"' --dpkgopt='path-exclude=/usr/share/doc/*' \
		--dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
		bookworm "$work/part.tar" "$mirror" >"$work/mmdebstrap.log" 2>&1 ||
		{ tail -20 "$work/mmdebstrap.log"; die "mmdebstrap failed (log: $work/mmdebstrap.log)"; }
	mv "$work/part.tar" "$base"
fi

# ---- buildah with its own storage: vfs (no overlay mounts), chroot isolation (no runtime)
store=$work/storage
bh() { buildah --root "$store/root" --runroot "$store/run" --storage-driver vfs "$@"; }
export BUILDAH_ISOLATION=chroot
[ $keep = 1 ] || trap 'bh rm -a >/dev/null 2>&1; bh rmi -a -f >/dev/null 2>&1' EXIT
step "import the base root filesystem"
c=$(bh from scratch) || die "buildah cannot make a container here"
bh add "$c" "$base" / >/dev/null && bh config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$c" &&
	bh commit --rm "$c" localhost/gpuprobe-debian12-base >/dev/null || die "cannot import $base"
# buildah re-executes itself for every RUN step from a sealed memfd copy of its own binary; the
# kernel refuses the seal now and then with EBUSY (a transient writable mapping of the copy; seen
# once in CI: "Close_Fd sealing memfd copy: Device or resource busy" at the last RUN step). That
# is buildah's start-up failing, not our build: the whole build is tried again, twice at most.
reexec_flake() { grep -q -E 'sealing memfd copy|Error during reexec' "$1"; }
step "buildah build --target debian (builds gpuprobe, runs the no-GPU tests)"
try=1
until bh build --isolation chroot --pull=false --build-arg BASE=localhost/gpuprobe-debian12-base \
	--build-arg JOBS="$jobs" --build-arg BUILD_PACKAGES="$build_pkgs" --target debian -t localhost/gpuprobe:debian -f "$ctx/Dockerfile" "$ctx" \
	>"$work/build.log" 2>&1; do
	tail -40 "$work/build.log"
	if [ $try -lt 3 ] && reexec_flake "$work/build.log"; then
		cp "$work/build.log" "$work/build.$try.log"
		step "buildah could not re-execute itself (memfd seal refused: a transient kernel EBUSY); build again (attempt $((try + 1)) of 3)"
		try=$((try + 1))
		continue
	fi
	die "buildah build failed (log: $work/build.log)"
done
grep -E '^[0-9]+% tests passed|tests? failed|Total Test time' "$work/build.log"

step "inside the image"
c=$(bh from localhost/gpuprobe:debian) || die "cannot start the image"
# bh_run CONTAINER CMD...: buildah run, again (twice at most) where buildah's own re-exec failed
bh_run() {
	local out n
	for n in 1 2 3; do
		out=$(bh run --isolation chroot "$@" 2>&1) && { printf '%s\n' "$out"; return 0; }
		printf '%s\n' "$out" >"$work/run.log"
		reexec_flake "$work/run.log" || break
	done
	printf '%s\n' "$out"
	return 1
}
help=$(bh_run "$c" -- /opt/gpuprobe/bin/gpuprobe-entry gpuprobe --help)
echo "$help" | head -3
echo "$help" | grep -q '^usage: gpuprobe' || die "gpuprobe --help inside the image printed no usage line"
ver=$(bh_run "$c" -- sh -c 'n=0; for p in /opt/gpuprobe/examples/*.bpf.o; do gpuprobe verify "$p" >/dev/null || exit 1; n=$((n+1)); done; echo $n')
[ "${ver:-0}" -gt 0 ] 2>/dev/null || die "example probes do not verify inside the image: $ver"
echo "container.sh: $ver example probes verify inside the image"
bh rm "$c" >/dev/null
if [ $save = 1 ]; then
	bh push localhost/gpuprobe:debian "oci-archive:$work/gpuprobe-debian.oci.tar:gpuprobe:debian" >/dev/null 2>&1 ||
		die "cannot save the image"
	echo "container.sh: saved $work/gpuprobe-debian.oci.tar ($(du -h "$work/gpuprobe-debian.oci.tar" | cut -f1))"
fi
echo "container.sh: built localhost/gpuprobe:debian in $(( $(date +%s) - t0 )) s"
