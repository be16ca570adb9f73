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

#endif
