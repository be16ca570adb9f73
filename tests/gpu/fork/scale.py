"""tests/gpu/fork: gp_fork_scale (scale.ptx) loaded and launched through the driver API with
ctypes, on PyTorch's current stream: the one kernel of these tests that carries PTX, so the one an
entry+exit probe counts. launch() returns the threads it launched (grid * block)."""
import ctypes
import os

import torch

BLOCK = 256
_fn = None
_cuda = None


def _check(rc, what):
    if rc != 0:
        raise RuntimeError("%s: CUDA error %d" % (what, rc))


def _load():
    global _fn, _cuda
    if _fn is not None:
        return
    torch.cuda.init()
    torch.zeros(1, device="cuda")          # the primary context, current on this thread
    _cuda = ctypes.CDLL("libcuda.so.1")    # the library the process already has: the shim
    ptx = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "scale.ptx"), "rb").read() + b"\0"
    mod = ctypes.c_void_p()
    _check(_cuda.cuModuleLoadData(ctypes.byref(mod), ctypes.c_char_p(ptx)), "cuModuleLoadData")
    fn = ctypes.c_void_p()
    _check(_cuda.cuModuleGetFunction(ctypes.byref(fn), mod, b"gp_fork_scale"), "cuModuleGetFunction")
    _fn = fn


def launch(x):
    """y = x * 0.5 (x: a contiguous float32 CUDA tensor); returns (y, threads launched)."""
    _load()
    y = torch.empty_like(x)
    n = x.numel()
    grid = (n + BLOCK - 1) // BLOCK
    px, py, pn = ctypes.c_uint64(x.data_ptr()), ctypes.c_uint64(y.data_ptr()), ctypes.c_uint32(n)
    args = (ctypes.c_void_p * 3)(ctypes.cast(ctypes.byref(px), ctypes.c_void_p),
                                 ctypes.cast(ctypes.byref(py), ctypes.c_void_p),
                                 ctypes.cast(ctypes.byref(pn), ctypes.c_void_p))
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
    _check(_cuda.cuLaunchKernel(_fn, grid, 1, 1, BLOCK, 1, 1, 0, stream, args, None), "cuLaunchKernel")
    return y, grid * BLOCK


def name_hash(s="gp_fork_scale"):
    """gp_name_hash (include/gpuprobe/context.h): FNV-1a 32 of the kernel's name."""
    h = 2166136261
    for b in s.encode():
        h = ((h ^ b) * 16777619) & 0xffffffff
    return h
