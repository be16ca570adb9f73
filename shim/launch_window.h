/* gpuprobe run --launch-skip N --launch-count M (GPUPROBE_LAUNCH_SKIP, GPUPROBE_LAUNCH_COUNT):
 * only launches N to N+M-1 of each kernel run the instrumented function; the others run the
 * application's original. Launches are counted per application handle (CUfunction or CUkernel)
 * where the lazy path picks the function a launch runs (lazy_launch.c), so a graph kernel node
 * counts once, when it is made or its parameters set. Kernels instrumented whole at load
 * (GPUPROBE_LAZY=0) are not windowed. */
#ifndef GPUPROBE_SHIM_LAUNCH_WINDOW_H
#define GPUPROBE_SHIM_LAUNCH_WINDOW_H

/* 1 when this launch of f is inside the window (always 1 without a window). Lock-free: one
 * relaxed load without a window, an atomic increment of f's counter with one. */
int shim_launch_window_take(const void *f);

#endif
