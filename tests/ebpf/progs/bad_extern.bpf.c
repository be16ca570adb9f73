/* A program reading an extern variable that nothing defines. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
extern int gpu_count __attribute__((weak));
SEC("gpu/entry/k") int prog(void *ctx) { return gpu_count; }
char LICENSE[] SEC("license") = "GPL";
