/* Only a subprogram in .text: no program to attach. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
__attribute__((noinline)) int lonely(int x) { return x + 1; }
char LICENSE[] SEC("license") = "GPL";
