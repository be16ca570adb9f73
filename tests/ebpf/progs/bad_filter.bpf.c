/* gpu/mem with a kernel name where the filters go. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
SEC("gpu/mem/vecAdd") int oops(void *ctx) { return 0; }
char LICENSE[] SEC("license") = "GPL";
