# tests/gpu/jit_ml.sh: torch.compile (Inductor) trains a small MLP for STEPS steps on fixed random
# data. Inductor turns the forward and backward graphs into Triton kernels (pointwise and
# reduction kernels named triton_*; the matmuls stay cuBLAS's). torch.use_deterministic_algorithms
# makes cuBLAS deterministic, so two runs give the same losses bit for bit; Inductor's pointwise
# autotuning is turned off (inductor config triton.autotune_pointwise; older PyTorch turned it off
# with deterministic algorithms, newer does not): one configuration per pointwise kernel, no
# benchmark launches at compile time, whose counts and winner vary from run to run (on the H100
# the plain run made 212 extra launches of each of 4 pointwise kernels while compiling, the run
# under gpuprobe none; why it made none is not established). The optimizer (SGD with momentum)
# runs eagerly.
# Prints "loss I HEX" for every step (the float32's bits), "time first_step_s S loop_s L steps N"
# (the first step compiles or loads the caches; the loop is the other steps, synchronized) and
# "time total_s T" (from the start of the script). --profile: also torch.profiler (CUPTI) over the
# steps after the first (the first compiles, and may launch kernels to benchmark them: only the
# training steps' launches are counted), "profiler kernels K triton kernels M steps S" (S =
# STEPS - 1, the steps profiled) and per kernel whose name starts with triton_: "profiled NAME
# THREADS LAUNCHES PER_LAUNCH", THREADS being the sum over its launches of grid x block as the
# driver saw them, PER_LAUNCH the distinct grid x block of its launches (comma-separated).
import os
import struct
import sys
import time

t0 = time.perf_counter()
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")   # deterministic cuBLAS
import torch
import torch.nn as nn
import torch.nn.functional as F

STEPS = int(os.environ.get("STEPS", "50"))
profile = "--profile" in sys.argv[1:]

torch.use_deterministic_algorithms(True)
torch.manual_seed(0)
import torch._inductor.config as icfg
icfg.compile_threads = 1          # compile in this process (no worker pool to start)
if hasattr(icfg, "triton") and hasattr(icfg.triton, "autotune_pointwise"):
    icfg.triton.autotune_pointwise = False   # one configuration per pointwise kernel

dev = "cuda"
model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 512), nn.GELU(),
                      nn.LayerNorm(512), nn.Linear(512, 16)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
g = torch.Generator(device=dev).manual_seed(1)
xb = torch.randn(1024, 256, device=dev, generator=g)
yb = torch.randn(1024, 16, device=dev, generator=g)


def loss_fn(x, y):
    return F.mse_loss(model(x), y)


step = torch.compile(loss_fn)


def train_step():
    opt.zero_grad(set_to_none=True)
    loss = step(xb, yb)
    loss.backward()
    opt.step()
    return loss.detach()


prof = None
losses = []
t1 = time.perf_counter()
losses.append(train_step())
torch.cuda.synchronize()
t2 = time.perf_counter()
if profile:   # the training steps after the first (compiling) one
    try:
        from torch.profiler import ProfilerActivity, profile as tprofile
        prof = tprofile(activities=[ProfilerActivity.CUDA])
        prof.__enter__()
    except Exception as e:   # the losses still count; the script says the profiler failed
        print(f"expect-error the profiler did not start: {e!r}")
        prof = None
for _ in range(STEPS - 1):
    losses.append(train_step())
torch.cuda.synchronize()
t3 = time.perf_counter()
if prof is not None:
    prof.__exit__(None, None, None)

for i, l in enumerate(torch.stack(losses).float().cpu().tolist()):
    print(f"loss {i} {struct.pack('<f', l).hex()} {l:.6f}")
print(f"time first_step_s {t2 - t1:.6f} loop_s {t3 - t2:.6f} steps {STEPS}")

if prof is not None:
    import json
    import tempfile
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        path = f.name
    prof.export_chrome_trace(path)
    with open(path) as f:
        trace = json.load(f)
    os.unlink(path)
    threads, launches, shapes, kernels = {}, {}, {}, 0
    for ev in trace.get("traceEvents", []):
        if str(ev.get("cat", "")).lower() != "kernel":
            continue
        kernels += 1
        name, args = ev.get("name", ""), ev.get("args", {})
        if not name.startswith("triton_"):
            continue
        grid, block = args.get("grid"), args.get("block")
        if not grid or not block:
            print(f"expect-error {name}: no grid/block in the profiler's event")
            continue
        n = grid[0] * grid[1] * grid[2] * block[0] * block[1] * block[2]
        threads[name] = threads.get(name, 0) + n
        launches[name] = launches.get(name, 0) + 1
        shapes.setdefault(name, set()).add(n)
    print(f"profiler kernels {kernels} triton kernels {len(threads)} steps {STEPS - 1}")
    for name in sorted(threads):
        per = ",".join(str(n) for n in sorted(shapes[name]))
        print(f"profiled {name} {threads[name]} {launches[name]} {per}")
print(f"time total_s {time.perf_counter() - t0:.4f}")
