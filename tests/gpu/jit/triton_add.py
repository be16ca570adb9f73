# tests/gpu/jit.sh: a Triton vector add (after Triton's first tutorial). Prints the launch's
# shape (programs, threads per program, the kernel's name) and a hash of the result, which must
# be the same with and without probes; exits 1 when the result is wrong.
import hashlib
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


n = 98432
g = torch.Generator(device="cuda").manual_seed(0)
x = torch.rand(n, device="cuda", generator=g)
y = torch.rand(n, device="cuda", generator=g)
out = torch.empty_like(x)
grid = (triton.cdiv(n, 1024),)
k = add_kernel[grid](x, y, out, n, BLOCK_SIZE=1024, num_warps=4)
torch.cuda.synchronize()
ok = torch.equal(out, x + y)
print(f"kernel add_kernel programs {grid[0]} threads {k.metadata.num_warps * 32}")
print("result", hashlib.sha256(out.cpu().numpy().tobytes()).hexdigest(), "ok" if ok else "WRONG")
sys.exit(0 if ok else 1)
