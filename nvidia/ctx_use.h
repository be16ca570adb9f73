/* Which words of its context a BPF program can read: the instrumentation fills only those
 * (bench/overhead measured every probe site storing the whole context to .local memory: an
 * empty entry+exit probe made a 16M-element vector add 10x slower). */
#ifndef GPUPROBE_NVIDIA_CTX_USE_H
#define GPUPROBE_NVIDIA_CTX_USE_H

#include <linux/bpf.h>
#include <stddef.h>
#include <stdint.h>

/* Bit i set: bytes 4i..4i+3 of the context are never read by the program (words past 256 bytes
 * are not tracked). 0 when unknown: the context pointer is copied to memory, changed by
 * arithmetic, passed to a helper or a BPF-to-BPF call, or read past 256 bytes. */
uint64_t gp_ctx_unread_words(const struct bpf_insn *insns, size_t n);

/* The bytes of an attach point's context that hold the same value in every lane of a warp at
 * every site (gp_lower_opts.ctx_uniform): site constants (a memory access's size, space,
 * direction, instruction and line; a block's number and length), a launch's parameters, grid
 * and block, the block index, the SM, the warp and the kernel. Both words 0 where nothing is
 * known (host contexts, function entry and exit). */
void gp_ctx_uniform_bytes(int attach, uint64_t out[2]);

#endif
