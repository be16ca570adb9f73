/* No loop, but 2^24 paths that never meet in one state: each branch adds its own bit to a value
 * that a last comparison makes precise. Reported as too complex with the numbers, not as a loop. */
// expect-status: 1
// expect-insn: 93: (25) if r0 > 0x3e8 goto pc+1
// expect-reason: program too complex: 1000000 instructions processed (limit 1000000); the program has no loop: too many paths to explore
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <gpuprobe/gpuprobe.h>

#define STEP(i)                                  \
	if (bpf_get_clock() > 1000)              \
		a |= 1ULL << (i);

SEC("gpu/entry/") int prog(struct gp_kernel_ctx *ctx)
{
	__u64 a = 0;

	STEP(0) STEP(1) STEP(2) STEP(3) STEP(4) STEP(5) STEP(6) STEP(7)
	STEP(8) STEP(9) STEP(10) STEP(11) STEP(12) STEP(13) STEP(14) STEP(15)
	STEP(16) STEP(17) STEP(18) STEP(19) STEP(20) STEP(21) STEP(22) STEP(23)
	if (a == 0x123456)
		return 1;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
