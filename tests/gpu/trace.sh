#!/bin/bash
# Timelines on the GPU (issue 17): gpuprobe run --trace and gpuprobe report on real programs.
#   examples/apps/vec_add with -t blocks: Perfetto and Chrome traces; vectorAdd and oddEven one
#     launch each, each timed by its 4 blocks' probes; the blocks on their SMs' tracks lie inside
#     their kernel's span and every kernel starts after its launch call began (host and device
#     times on one calibrated clock); a flow from each launch to its kernel (check_trace.py
#     generic). The app's stdout is the same as without gpuprobe.
#   A PyTorch training step (an MLP, 3 steps of forward, loss, backward, SGD on cuda): PyTorch's
#     kernels carry SASS only (no probes), so each kernel's span runs from its launch to its
#     completion on the stream; every launch has its kernel and its flow; the loss falls.
#   gpuprobe report of each: OUT/vec_add.html, OUT/torch.html (self-contained; carry them back
#     and screenshot them where Chromium is: tests/trace/report_chromium.sh's flags, e.g.
#     chromium --headless --no-sandbox --window-size=1400,900 --screenshot=vec_add.png file://$PWD/vec_add.html);
#     made here too when this machine has Chromium.
# Needs BUILD (default ./build, made by tests/gpu/prepare.sh: gpuprobe with protobuf-c linked in,
# lib/ with the shim and lib/gpuprobe-tools/blocks.bpf.o, examples/vec_add). Exit 77 without a GPU.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$root/build}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
if ! nvidia-smi -L >/dev/null 2>&1; then
	echo "SKIP: no NVIDIA GPU or driver (nvidia-smi -L failed)"
	exit 77
fi
export LD_LIBRARY_PATH=$BUILD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
GP=$BUILD/bin/gpuprobe
CHECK=$root/tests/trace/check_trace.py
fail=0
pass() { echo "PASS $1"; }
bad() { echo "FAIL $1"; fail=1; }

# --- vec_add with block probes
app=$BUILD/examples/vec_add
if [ -x "$app" ]; then
	"$app" >"$OUT/vec_add.plain" 2>&1
	for f in vec_add.pftrace vec_add.json; do
		"$GP" run --trace "$OUT/$f" -t blocks -- "$app" >"$OUT/$f.out" 2>"$OUT/$f.err"
		rc=$?
		cat "$OUT/$f.err"
		[ $rc = 0 ] && cmp -s "$OUT/vec_add.plain" "$OUT/$f.out" && pass "$f: vec_add's output as without gpuprobe" ||
			bad "$f: exit $rc or output differs"
		python3 "$CHECK" generic "$OUT/$f" --min-launches 2 \
			--kernels 'vectorAdd(float const*, float const*, float*)=1;oddEven(float*)=1' --blocks 4 &&
			pass "$f: decoded and checked" || bad "$f: check_trace.py"
	done
	"$GP" report -o "$OUT/vec_add.html" "$OUT/vec_add.pftrace" && pass "report vec_add.html" || bad "report vec_add"
else
	bad "no $app (tests/gpu/prepare.sh builds examples/)"
fi

# --- a PyTorch training step
cat >"$OUT/step.py" <<'PY'
import torch
torch.manual_seed(0)
dev = "cuda"
model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(1024, 256, device=dev)
y = torch.randint(0, 10, (1024,), device=dev)
losses = []
for step in range(3):
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    losses.append(loss.item())
torch.cuda.synchronize()
print("losses", " ".join("%.4f" % l for l in losses))
print("falls" if losses[-1] < losses[0] else "does not fall")
PY
if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
	"$GP" run --trace "$OUT/torch.pftrace" -- python3 "$OUT/step.py" >"$OUT/torch.out" 2>"$OUT/torch.err"
	rc=$?
	cat "$OUT/torch.out" "$OUT/torch.err"
	[ $rc = 0 ] && grep -q '^falls$' "$OUT/torch.out" && pass "torch step under --trace: the loss falls" ||
		bad "torch step: exit $rc"
	python3 "$CHECK" generic "$OUT/torch.pftrace" --min-launches 20 && pass "torch.pftrace: decoded and checked" ||
		bad "torch.pftrace: check_trace.py"
	"$GP" report -o "$OUT/torch.html" "$OUT/torch.pftrace" && pass "report torch.html" || bad "report torch"
	ls -la "$OUT/torch.pftrace" "$OUT/torch.html"
else
	echo "SKIP torch: no PyTorch with CUDA here"
fi

# screenshots where this machine has Chromium (the GPU machines have none: take them after)
chrome=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -n "$chrome" ]; then
	for r in vec_add torch; do
		[ -f "$OUT/$r.html" ] && timeout 120 "$chrome" --headless --no-sandbox --disable-gpu \
			--window-size=1400,900 --screenshot="$OUT/$r.png" "file://$OUT/$r.html" >/dev/null 2>&1 &&
			pass "screenshot $OUT/$r.png"
	done
else
	echo "no chromium here: screenshot $OUT/vec_add.html and $OUT/torch.html on the build machine"
fi
exit $fail
