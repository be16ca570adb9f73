# tests/gpu/jit.sh: CuPy's run-time compiled kernels, each compiled to a cubin (run it without
# CUPY_COMPILE_WITH_PTX, with a fresh CUPY_CACHE_DIR, so that the compilers really run):
#   gp_saxpy_nvrtc   RawKernel, backend="nvrtc" (NVRTC: gpuprobe's libnvrtc stand-in records it)
#   gp_scale_nvcc    RawModule, backend="nvcc" (nvcc, and the ptxas nvcc runs)
#   gp_saxpy_nvcc    RawKernel, backend="nvcc"
#   gp_ew_axpb       ElementwiseKernel (NVRTC), block_size 128
# Prints per kernel "kernel NAME programs G threads T launches L" (G x T threads per launch) and
# "result NAME SHA256 ok|WRONG" of its output, which must be the same with and without probes;
# exits 1 when an output is wrong. argv[1] (optional): "nvrtc" runs only the NVRTC kernels.
import hashlib
import sys

import cupy as cp
import numpy as np

only_nvrtc = len(sys.argv) > 1 and sys.argv[1] == "nvrtc"
ok_all = True


def report(name, arr, want, programs, threads, launches):
    global ok_all
    got = cp.asnumpy(arr)
    ok = np.array_equal(got, want)
    ok_all &= ok
    print(f"kernel {name} programs {programs} threads {threads} launches {launches}")
    print("result", name, hashlib.sha256(got.tobytes()).hexdigest(), "ok" if ok else "WRONG")


saxpy_src = r'''
extern "C" __global__ void NAME(float a, const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}
'''
n = 300 * 256 - 77            # the last block has idle threads: they enter and leave too
x_h = (np.arange(n, dtype=np.float32) % 1000) / 8.0
x = cp.asarray(x_h)

# RawKernel through NVRTC: 300 blocks of 256, launched twice
k = cp.RawKernel(saxpy_src.replace("NAME", "gp_saxpy_nvrtc"), "gp_saxpy_nvrtc", backend="nvrtc")
y = cp.ones(n, dtype=cp.float32)
for _ in range(2):
    k((300,), (256,), (cp.float32(0.5), x, y, cp.int32(n)))
want = np.ones(n, dtype=np.float32)
for _ in range(2):
    want = np.float32(0.5) * x_h + want
report("gp_saxpy_nvrtc", y, want, 300, 256, 2)

# ElementwiseKernel (NVRTC): 64000 elements in blocks of 128, so 500 blocks of 128 threads
ew = cp.ElementwiseKernel("float32 x, float32 a, float32 b", "float32 z", "z = a * x + b",
                          name="gp_ew_axpb")
m = 500 * 128
xe_h = np.arange(m, dtype=np.float32) / 64.0
z = ew(cp.asarray(xe_h), cp.float32(3.0), cp.float32(-1.0), block_size=128)
report("gp_ew_axpb", z, np.float32(3.0) * xe_h + np.float32(-1.0), 500, 128, 1)

if not only_nvrtc:
    # RawModule through nvcc: gp_scale_nvcc, 40 blocks of 64, launched three times
    mod = cp.RawModule(code=r'''
extern "C" __global__ void gp_scale_nvcc(float *v, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        v[i] *= a;
}
''', backend="nvcc")
    f = mod.get_function("gp_scale_nvcc")
    ns = 40 * 64
    vs_h = np.arange(ns, dtype=np.float32)
    vs = cp.asarray(vs_h)
    for _ in range(3):
        f((40,), (64,), (vs, cp.float32(2.0), cp.int32(ns)))
    report("gp_scale_nvcc", vs, vs_h * np.float32(8.0), 40, 64, 3)

    # RawKernel through nvcc: 77 blocks of 128
    kn = cp.RawKernel(saxpy_src.replace("NAME", "gp_saxpy_nvcc"), "gp_saxpy_nvcc", backend="nvcc")
    nn = 77 * 128
    yn = cp.zeros(nn, dtype=cp.float32)
    kn((77,), (128,), (cp.float32(2.0), x[:nn], yn, cp.int32(nn)))
    report("gp_saxpy_nvcc", yn, np.float32(2.0) * x_h[:nn], 77, 128, 1)

cp.cuda.Device().synchronize()
sys.exit(0 if ok_all else 1)
