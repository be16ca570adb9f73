/* Global data: .data, .rodata (incl. a string literal), .bss, referenced at known offsets. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

__u64 counter = 0x1122334455667788;   /* .data offset 0 */
__u32 scale = 3;                       /* .data offset 8 */
const volatile __u32 limits[4] = { 10, 20, 30, 40 };   /* .rodata */
__u64 total;                           /* .bss offset 0 */
__u32 seen[4];                         /* .bss offset 8 */

HOST_ENTRY("cu*") int use_globals(struct gp_host_ctx *ctx)
{
	__u32 i = ctx->nargs & 3;
	counter += limits[2];
	total += scale * limits[i];
	seen[3] = 7;
	return (int)(total + counter);
}

char LICENSE[] SEC("license") = "GPL";
