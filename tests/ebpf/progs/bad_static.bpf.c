/* A static function in a program section: libbpf's rule says programs are global. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
SEC("gpu/entry/k") static int hidden(void *ctx) { return 0; }
char LICENSE[] SEC("license") = "GPL";
