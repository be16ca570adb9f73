# tests/gpu/jit.sh: a Triton fused softmax (after Triton's fused-softmax tutorial, one program per
# row instead of its persistent loop): the row's load, max, exp, sum and divide in one kernel.
# Prints the launch's shape (programs, threads per program) and a hash of the result, which must
# be the same with and without probes; exits 1 when it is far from torch.softmax.
import hashlib
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols,
                   BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(axis=0)
    offs = tl.arange(0, BLOCK_SIZE)
    mask = offs < n_cols
    x = tl.load(in_ptr + row * in_row_stride + offs, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    den = tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_row_stride + offs, num / den, mask=mask)


n_rows, n_cols = 1823, 781   # the tutorial's shape: a row of 781 is masked to a block of 1024
g = torch.Generator(device="cuda").manual_seed(0)
x = torch.randn((n_rows, n_cols), device="cuda", generator=g)
y = torch.empty_like(x)
block = triton.next_power_of_2(n_cols)
grid = (n_rows,)
k = softmax_kernel[grid](y, x, x.stride(0), y.stride(0), n_cols, BLOCK_SIZE=block, num_warps=4)
torch.cuda.synchronize()
ok = torch.allclose(y, torch.softmax(x, dim=1), rtol=1e-5, atol=1e-6)
print(f"kernel softmax_kernel programs {grid[0]} threads {k.metadata.num_warps * 32}")
print("result", hashlib.sha256(y.cpu().numpy().tobytes()).hexdigest(), "ok" if ok else "WRONG")
sys.exit(0 if ok else 1)
