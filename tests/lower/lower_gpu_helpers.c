/* GPU-side checks the conformance corpus cannot make: the inline helpers (special registers),
 * bpftime's exit from a subprogram, puts, callx, and memory through global (not local) memory:
 * native atomics from many threads at once, misaligned global loads and stores. Every program
 * checks itself against reference values the kernel gathered before calling it (a per-thread
 * context at r1) and returns 1 on success (0 for the two exit tests, whose code after exit must
 * not run).
 *
 * usage: lower_gpu_helpers OUT.ptx OUT.manifest [--target sm_XX]
 * The module's kernel gp_conformance(out, count) runs program (thread % nprogs) in each thread;
 * the manifest lists one "run THREAD NAME EXPECTED" per thread, for tests/gpu/lower_run.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebpf/asm.h"
#include "ebpf/lower.h"
#include "ptx-frontend/ir.h"

/* Context the kernel fills (u64 each). */
enum { TIDX = 0, CTAX = 24, NTIDX = 48, NCTAX = 72, LANE = 96, WARP = 104, SMID = 112,
       TIMER = 120, GPTR = 128, GID = 136, CTX_SIZE = 144 };
enum { THREADS_PER_PROG = 32 };
#define PID_TGID 0x0000303900001a85ull

struct gprog {
	const char *name;
	unsigned long long expected;
	const char *text;
};

#define FAIL_TAIL "mov %r0, 1\nexit\nfail:\nmov %r0, 0\nexit\n"

/* helper id, context offsets of x, y, z, and the stack offsets of the out-pointers r1..r3 */
#define DIM3(id, c1, c2, c3, o1, o2, o3)                                                   \
	"mov %r6, %r1\n"                                                            \
	"mov %r1, %r10\nadd %r1, " #o1 "\nmov %r2, %r10\nadd %r2, " #o2 "\n"        \
	"mov %r3, %r10\nadd %r3, " #o3 "\ncall " #id "\n"                           \
	"ldxdw %r2, [%r10" #o1 "]\nldxdw %r3, [%r6+" #c1 "]\njne %r2, %r3, fail\n" \
	"ldxdw %r2, [%r10" #o2 "]\nldxdw %r3, [%r6+" #c2 "]\njne %r2, %r3, fail\n" \
	"ldxdw %r2, [%r10" #o3 "]\nldxdw %r3, [%r6+" #c3 "]\njne %r2, %r3, fail\n" FAIL_TAIL

static const struct gprog progs[] = {
	{"thread_idx", 1, DIM3(505, 0, 8, 16, -8, -16, -24)},
	{"block_idx_misaligned_out", 1, DIM3(503, 24, 32, 40, -13, -29, -45)},
	{"block_dim", 1, DIM3(504, 48, 56, 64, -8, -16, -24)},
	{"grid_dim", 1, DIM3(508, 72, 80, 88, -8, -16, -24)},
	{"lane_id", 1, "ldxdw %r6, [%r1+96]\ncall 511\njne %r0, %r6, fail\n" FAIL_TAIL},
	{"warp_id", 1, "ldxdw %r6, [%r1+104]\ncall 510\njne %r0, %r6, fail\n" FAIL_TAIL},
	{"sm_id_and_cpu", 1, "ldxdw %r6, [%r1+112]\ncall 509\njne %r0, %r6, fail\n"
			     "call 8\njne %r0, %r6, fail\n" FAIL_TAIL},
	{"globaltimer_ktime", 1, "ldxdw %r6, [%r1+120]\ncall 502\njlt %r0, %r6, fail\nmov %r7, %r0\n"
				 "call 5\njlt %r0, %r7, fail\nsub %r0, %r6\nlddw %r1, 10000000000\n"
				 "jgt %r0, %r1, fail\n" FAIL_TAIL},
	{"clock64", 1, "call 512\nmov %r6, %r0\ncall 512\njlt %r0, %r6, fail\n" FAIL_TAIL},
	{"active_mask_has_self", 1, "ldxdw %r6, [%r1+96]\ncall 513\nrsh %r0, %r6\nand %r0, 1\n"
				    "jne %r0, 1, fail\n" FAIL_TAIL},
	{"pid_tgid", 1, "call 14\nlddw %r1, 0x0000303900001a85\njne %r0, %r1, fail\n" FAIL_TAIL},
	{"membar", 1, "mov %r0, 5\ncall 506\njne %r0, 0, fail\n" FAIL_TAIL},
	{"exit_main", 0, "mov %r0, 3\ncall 507\nmov %r0, 7\nexit\n"},
	{"exit_from_subprogram", 0, "mov %r0, 9\ncall local f\nmov %r0, 7\nexit\nf:\nmov %r0, 4\n"
				    "call 507\nmov %r0, 5\nexit\n"},
	{"callx", 1, "ldxdw %r6, [%r1+96]\nmov %r2, 511\ncall %r2\njne %r0, %r6, fail\n"
		     "mov %r2, 4242\nmov %r0, 1\ncall %r2\njne %r0, 0, fail\n" FAIL_TAIL},
	{"puts", 1, "lddw %r1, 0x006b6f2073747570\nstxdw [%r10-8], %r1\nmov %r1, %r10\nadd %r1, -8\n"
		    "call 501\njslt %r0, 0, fail\n" FAIL_TAIL},
	/* 64-bit ticket from fetch-add, its bit in a bitmap by fetch-or: a duplicate ticket (a
	 * non-atomic add) or a lost bit (a non-atomic or) makes some thread fail. */
	{"atomic_fetch_add_or_64", 1,
	 "ldxdw %r6, [%r1+128]\nmov %r2, 1\nlock fetch add [%r6+0], %r2\njgt %r2, 4095, fail\n"
	 "mov %r3, %r2\nrsh %r3, 6\nlsh %r3, 3\nadd %r3, %r6\nmov %r4, 1\nmov %r5, %r2\nand %r5, 63\n"
	 "lsh %r4, %r5\nmov %r7, %r4\nlock fetch or [%r3+8], %r4\nand %r4, %r7\njne %r4, 0, fail\n" FAIL_TAIL},
	/* ticket from a cmpxchg loop (64-bit), bit set with fetch-or32 */
	{"atomic_cmpxchg_loop_64_or_32", 1,
	 "ldxdw %r6, [%r1+128]\nretry:\nldxdw %r0, [%r6+1024]\nmov %r8, %r0\nmov %r2, %r0\nadd %r2, 1\n"
	 "lock cmpxchg [%r6+1024], %r2\njne %r0, %r8, retry\njgt %r8, 4095, fail\n"
	 "mov %r3, %r8\nrsh %r3, 5\nlsh %r3, 2\nadd %r3, %r6\nmov %r4, 1\nmov %r5, %r8\nand %r5, 31\n"
	 "lsh32 %r4, %r5\nmov %r7, %r4\nlock fetch or32 [%r3+1032], %r4\nand %r4, %r7\njne %r4, 0, fail\n" FAIL_TAIL},
	/* 32-bit fetch-add ticket, bit cleared from an all-ones word with fetch-and, and
	 * cmpxchg32 */
	{"atomic_fetch_add32_and_xor", 1,
	 "ldxdw %r6, [%r1+128]\nmov %r2, 1\nlock fetch add32 [%r6+2048], %r2\njgt %r2, 4095, fail\n"
	 "mov %r3, %r2\nrsh %r3, 6\nlsh %r3, 3\nadd %r3, %r6\nmov %r4, 1\nmov %r5, %r2\nand %r5, 63\n"
	 "lsh %r4, %r5\nmov %r7, %r4\nlock fetch xor [%r3+2056], %r4\nand %r4, %r7\njne %r4, 0, fail\n"
	 "mov %r4, %r7\nlock xor [%r3+2600], %r4\n"     /* non-fetch forms (red): must not fault */
	 "mov %r4, 1\nlock add [%r6+3064], %r4\nlock add32 [%r6+3060], %r4\n"
	 "lock or32 [%r6+3056], %r4\nlock and [%r6+3048], %r4\n" FAIL_TAIL},
	/* per-thread global slot: xchg (old must be 0), xchg32, cmpxchg32 success and failure */
	{"atomic_xchg_cmpxchg32_slot", 1,
	 "ldxdw %r6, [%r1+128]\nldxdw %r7, [%r1+136]\nlsh %r7, 3\nadd %r7, %r6\nadd %r7, 4096\n"
	 "lddw %r2, 0x1234567800000001\nlock xchg [%r7+0], %r2\njne %r2, 0, fail\n"
	 "ldxdw %r2, [%r7+0]\nlddw %r3, 0x1234567800000001\njne %r2, %r3, fail\n"
	 "mov %r2, 0x55\nlock xchg32 [%r7+0], %r2\njne %r2, 1, fail\n"
	 "mov %r0, 0x54\nmov %r2, 0x66\nlock cmpxchg32 [%r7+0], %r2\njne %r0, 0x55, fail\n"
	 "mov %r0, 0x55\nmov %r2, 0x77\nlock cmpxchg32 [%r7+0], %r2\njne %r0, 0x55, fail\n"
	 "ldxdw %r2, [%r7+0]\nlddw %r3, 0x1234567800000077\njne %r2, %r3, fail\n" FAIL_TAIL},
	/* misaligned loads and stores in global memory (a plain access there would fault) */
	{"global_misaligned", 1,
	 "ldxdw %r6, [%r1+128]\nldxdw %r7, [%r1+136]\nlsh %r7, 4\nadd %r7, %r6\nadd %r7, 16384\n"
	 "lddw %r2, 0x1122334455667788\nstxdw [%r7+0], %r2\n"
	 "ldxw %r2, [%r7+1]\njne %r2, 0x44556677, fail\n"
	 "ldxh %r2, [%r7+3]\njne %r2, 0x4455, fail\n"
	 "stw [%r7+5], 0xaabbccdd\nldxdw %r2, [%r7+0]\nlddw %r3, 0xbbccdd4455667788\njne %r2, %r3, fail\n"
	 "ldxb %r2, [%r7+8]\njne %r2, 0xaa, fail\n"
	 "ldxsw %r2, [%r7+4]\nlddw %r3, 0xffffffffbbccdd44\njne %r2, %r3, fail\n"
	 "ldxsh %r2, [%r7+7]\nlddw %r3, 0xffffffffffffaabb\njne %r2, %r3, fail\n"
	 "mov %r2, -2\nstxdw [%r7+3], %r2\nldxdw %r2, [%r7+3]\njne %r2, -2, fail\n" FAIL_TAIL},
};
#define NPROGS (sizeof(progs) / sizeof(progs[0]))

static void add_text(ir_module *m, enum ir_top_kind k, const char *text)
{
	ir_top *t = ir_top_new(m, k);
	t->text = ir_strdup(m, text);
	ir_top_append(m, t);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s OUT.ptx OUT.manifest [--target sm_XX]\n", argv[0]);
		return 2;
	}
	const char *target = argc > 4 && !strcmp(argv[3], "--target") ? argv[4] : "sm_75";
	unsigned nthreads = (unsigned)NPROGS * THREADS_PER_PROG;
	ir_module *m = ir_module_new();
	add_text(m, IR_TOP_DIRECTIVE, ".version 7.8");
	add_text(m, IR_TOP_DIRECTIVE, ir_strfmt(m, ".target %s", target));
	add_text(m, IR_TOP_DIRECTIVE, ".address_size 64");
	/* shared scratch: counters and bitmaps (0-3071), per-thread slots (4096+8*gid, 16384+16*gid) */
	add_text(m, IR_TOP_DIRECTIVE, ir_strfmt(m, ".global .align 8 .b8 gp_g[%u];", 16384 + 16 * nthreads + 64));
	int failed = 0;
	for (size_t i = 0; i < NPROGS; i++) {
		struct bpf_insn *insns;
		size_t n;
		char err[256];
		if (bpf_asm(progs[i].text, &insns, &n, err, sizeof(err))) {
			fprintf(stderr, "lower_gpu_helpers: %s: %s\n", progs[i].name, err);
			failed = 1;
			continue;
		}
		struct gp_lower_opts o = {.prefix = ir_strfmt(m, "__gh%zu_", i), .pid_tgid = PID_TGID};
		if (gp_lower_program(m, insns, n, ir_strfmt(m, "gh_prog_%zu", i), &o, err, sizeof(err))) {
			fprintf(stderr, "lower_gpu_helpers: %s: %s\n", progs[i].name, err);
			failed = 1;
		}
		free(insns);
	}
	if (failed)
		return 1;
	size_t len;
	char *text = ptx_print(m, &len);
	FILE *f = fopen(argv[1], "w"), *man = fopen(argv[2], "w");
	if (!f || !man) {
		perror("lower_gpu_helpers");
		return 2;
	}
	fwrite(text, 1, len, f);
	free(text);
	static const char *const sregs[] = {"tid", "ctaid", "ntid", "nctaid"};
	fprintf(f, "\n.visible .entry gp_conformance(\n\t.param .u64 gp_out,\n\t.param .u32 gp_count\n)\n{\n"
		   "\t.reg .b64 %%a<8>;\n\t.reg .b32 %%b<8>;\n\t.reg .pred %%q<2>;\n"
		   "\t.local .align 8 .b8 gp_ctx[%d];\n"
		   "\tmov.u32 %%b0, %%ctaid.x;\n\tmov.u32 %%b1, %%ntid.x;\n\tmov.u32 %%b2, %%tid.x;\n"
		   "\tmad.lo.u32 %%b0, %%b0, %%b1, %%b2;\n\tld.param.u32 %%b3, [gp_count];\n"
		   "\tsetp.ge.u32 %%q0, %%b0, %%b3;\n\t@%%q0 bra GP_END;\n", CTX_SIZE);
	for (int s = 0; s < 4; s++)
		for (int d = 0; d < 3; d++)
			fprintf(f, "\tmov.u32 %%b4, %%%s.%c;\n\tcvt.u64.u32 %%a1, %%b4;\n\tst.local.u64 [gp_ctx+%d], %%a1;\n",
				sregs[s], "xyz"[d], s * 24 + d * 8);
	fprintf(f, "\tmov.u32 %%b4, %%laneid;\n\tcvt.u64.u32 %%a1, %%b4;\n\tst.local.u64 [gp_ctx+%d], %%a1;\n"
		   "\tmov.u32 %%b4, %%warpid;\n\tcvt.u64.u32 %%a1, %%b4;\n\tst.local.u64 [gp_ctx+%d], %%a1;\n"
		   "\tmov.u32 %%b4, %%smid;\n\tcvt.u64.u32 %%a1, %%b4;\n\tst.local.u64 [gp_ctx+%d], %%a1;\n"
		   "\tmov.u64 %%a1, %%globaltimer;\n\tst.local.u64 [gp_ctx+%d], %%a1;\n"
		   "\tmov.u64 %%a1, gp_g;\n\tcvta.global.u64 %%a1, %%a1;\n\tst.local.u64 [gp_ctx+%d], %%a1;\n"
		   "\tcvt.u64.u32 %%a1, %%b0;\n\tst.local.u64 [gp_ctx+%d], %%a1;\n"
		   "\tmov.u64 %%a0, gp_ctx;\n\tcvta.local.u64 %%a0, %%a0;\n"
		   "\tld.param.u64 %%a7, [gp_out];\n\tcvta.to.global.u64 %%a7, %%a7;\n"
		   "\tmul.wide.u32 %%a6, %%b0, 8;\n\tadd.s64 %%a7, %%a7, %%a6;\n"
		   "\trem.u32 %%b5, %%b0, %zu;\n",
		LANE, WARP, SMID, TIMER, GPTR, GID, NPROGS);
	for (size_t i = 0; i < NPROGS; i++)
		fprintf(f, "\tsetp.eq.u32 %%q0, %%b5, %zu;\n\t@%%q0 bra GP_P%zu;\n", i, i);
	fprintf(f, "\tbra.uni GP_END;\n");
	for (size_t i = 0; i < NPROGS; i++)
		fprintf(f, "GP_P%zu:\n\t{\n\t.param .b64 x1;\n\t.param .b64 xr;\n\tst.param.b64 [x1], %%a0;\n"
			   "\tcall (xr), gh_prog_%zu, (x1);\n\tld.param.b64 %%a3, [xr];\n\t}\n\tbra.uni GP_STORE;\n",
			i, i);
	fprintf(f, "GP_STORE:\n\tst.global.u64 [%%a7], %%a3;\nGP_END:\n\tret;\n}\n");
	for (unsigned t = 0; t < nthreads; t++)
		fprintf(man, "run %u %s#%u 0x%llx\n", t, progs[t % NPROGS].name, t, progs[t % NPROGS].expected);
	fclose(f);
	fclose(man);
	ir_module_free(m);
	printf("lower_gpu_helpers: %zu programs x %d threads into %s (%s)\n", NPROGS, THREADS_PER_PROG, argv[1], target);
	return 0;
}
