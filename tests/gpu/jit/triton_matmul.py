# tests/gpu/jit.sh: a Triton fp16 matmul (after Triton's matmul tutorial, without its grouping):
# tl.dot makes tensor-core code, and Triton pipelines the loads with asynchronous copies. Prints
# the launch's shape and a hash of the result (the same with and without probes); exits 1 when
# it is far from torch's.
import hashlib
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                  stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_K: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n
    offs_am = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_bn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_am[:, None] * stride_cm + offs_bn[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(tl.float16))


M = N = K = 512
g = torch.Generator(device="cuda").manual_seed(0)
a = torch.randn((M, K), device="cuda", dtype=torch.float16, generator=g)
b = torch.randn((K, N), device="cuda", dtype=torch.float16, generator=g)
c = torch.empty((M, N), device="cuda", dtype=torch.float16)
BM, BN, BK = 128, 128, 64
grid = (triton.cdiv(M, BM) * triton.cdiv(N, BN),)
k = matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                        c.stride(0), c.stride(1), BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK,
                        num_warps=4, num_stages=3)
torch.cuda.synchronize()
ok = torch.allclose(c.float(), (a.float() @ b.float()), atol=0.5, rtol=0.02)
print(f"kernel matmul_kernel programs {grid[0]} threads {k.metadata.num_warps * 32}")
print("result", hashlib.sha256(c.cpu().numpy().tobytes()).hexdigest(), "ok" if ok else "WRONG")
sys.exit(0 if ok else 1)
