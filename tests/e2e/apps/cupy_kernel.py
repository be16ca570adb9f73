# PyTorch (SASS-only modules: reported, run unmodified) and a CuPy RawKernel compiled by NVRTC to
# PTX (probed). Prints results that must not change under probes.
import sys
import torch
import cupy as cp

torch.manual_seed(0)
a = torch.randn(256, 256, device="cuda")
b = (a @ a).relu().sum()
print("torch:", float(b))

src = r'''
extern "C" __global__ void scale(const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 3.0f * x[i];
}
'''
k = cp.RawKernel(src, "scale", backend="nvrtc")
n = 100 * 256
x = cp.arange(n, dtype=cp.float32)
y = cp.empty_like(x)
k((100,), (256,), (x, y, cp.int32(n)))
cp.cuda.Device().synchronize()
print("cupy: sum=%.1f" % float(y.sum()))
