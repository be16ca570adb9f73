/* Verification time of a generated 4,096-instruction probe with many branches (issue 4: target
 * under 50 ms). The program is built from blocks shaped like real probes, in rotation:
 *   A  read a context field, skip unless it is small, map lookup, null check, atomic add at a
 *      masked index of the value (three branches);
 *   B  read a field, signed compare, compute on either side, spill the result to the stack,
 *      reload it (a diamond);
 *   C  bounded loop of 4 iterations summing context fields (a back edge the verifier unrolls);
 *   D  ring-buffer-free event: three ranged compares chained (a ladder of branches).
 * Every branch is data dependent (both sides explored), so without pruning the path count would
 * be astronomical; the time measured is that of the real exploration.
 * usage: verifier_bench [RUNS] [INSNS]  (defaults 21, 4096); prints one table row. */
#include "ebpf/verifier.h"
#include "gpuprobe/context.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct gen {
	struct bpf_insn *v;
	size_t n, cap;
	unsigned branches;
};

static void emit(struct gen *g, uint8_t code, int dst, int src, int16_t off, int32_t imm)
{
	if (g->n == g->cap) {
		g->cap = g->cap ? g->cap * 2 : 1024;
		g->v = realloc(g->v, g->cap * sizeof(*g->v));
		if (!g->v) {
			perror("realloc");
			exit(2);
		}
	}
	g->v[g->n++] = (struct bpf_insn){.code = code, .dst_reg = dst, .src_reg = src, .off = off, .imm = imm};
	if ((BPF_CLASS(code) == BPF_JMP || BPF_CLASS(code) == BPF_JMP32) && BPF_OP(code) != BPF_JA &&
	    BPF_OP(code) != BPF_CALL && BPF_OP(code) != BPF_EXIT)
		g->branches++;
}

/* u32 fields of struct gp_kernel_ctx (offsets 8..84 step 4) */
static int16_t field(unsigned k)
{
	return (int16_t)(8 + 4 * (k % 20));
}

static void block_a(struct gen *g, unsigned k)
{
	size_t start = g->n;
	emit(g, BPF_LDX | BPF_MEM | BPF_W, 2, 6, field(k), 0);
	emit(g, BPF_JMP | BPF_JGT | BPF_K, 2, 0, 13, (int32_t)(100 + k));   /* skip */
	emit(g, BPF_ALU64 | BPF_AND | BPF_K, 2, 0, 0, 7);
	emit(g, BPF_ALU64 | BPF_LSH | BPF_K, 2, 0, 0, 3);
	emit(g, BPF_ALU64 | BPF_MOV | BPF_X, 7, 2, 0, 0);
	emit(g, BPF_ST | BPF_MEM | BPF_W, 10, 0, -4, 0);
	emit(g, BPF_ALU64 | BPF_MOV | BPF_X, 2, 10, 0, 0);
	emit(g, BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, -4);
	emit(g, BPF_LD | BPF_IMM | BPF_DW, 1, BPF_PSEUDO_MAP_FD, 0, 0);
	emit(g, 0, 0, 0, 0, 0);
	emit(g, BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem);
	emit(g, BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 3, 0);                      /* skip */
	emit(g, BPF_ALU64 | BPF_ADD | BPF_X, 0, 7, 0, 0);
	emit(g, BPF_ALU64 | BPF_MOV | BPF_K, 1, 0, 0, 1);
	emit(g, BPF_STX | BPF_ATOMIC | BPF_DW, 0, 1, 0, BPF_ADD);
	if (g->n - start != 15) {
		fprintf(stderr, "block A has %zu insns\n", g->n - start);
		exit(2);
	}
}

static void block_b(struct gen *g, unsigned k)
{
	emit(g, BPF_LDX | BPF_MEM | BPF_W, 2, 6, field(k + 3), 0);
	emit(g, BPF_JMP | BPF_JSLT | BPF_K, 2, 0, 3, (int32_t)(50 + k % 7));
	emit(g, BPF_ALU64 | BPF_MOV | BPF_X, 3, 2, 0, 0);
	emit(g, BPF_ALU64 | BPF_MUL | BPF_K, 3, 0, 0, 3);
	emit(g, BPF_JMP | BPF_JA, 0, 0, 2, 0);
	emit(g, BPF_ALU64 | BPF_MOV | BPF_X, 3, 2, 0, 0);
	emit(g, BPF_ALU64 | BPF_RSH | BPF_K, 3, 0, 0, 1);
	emit(g, BPF_STX | BPF_MEM | BPF_DW, 10, 3, -16, 0);
	emit(g, BPF_LDX | BPF_MEM | BPF_DW, 8, 10, -16, 0);
	emit(g, BPF_ALU64 | BPF_ADD | BPF_X, 9, 8, 0, 0);
}

static void block_c(struct gen *g, unsigned k)
{
	/* r4 = 0; do { r5 = ctx[field(k + r4)]... } simplified: r4 counts 0..3, r9 += r4 */
	emit(g, BPF_ALU64 | BPF_MOV | BPF_K, 4, 0, 0, 0);
	emit(g, BPF_LDX | BPF_MEM | BPF_W, 5, 6, field(k + 7), 0);
	emit(g, BPF_ALU64 | BPF_ADD | BPF_X, 5, 4, 0, 0);
	emit(g, BPF_ALU64 | BPF_ADD | BPF_K, 4, 0, 0, 1);
	emit(g, BPF_JMP | BPF_JLT | BPF_K, 4, 0, -4, 4);                     /* back edge */
	emit(g, BPF_ALU64 | BPF_ADD | BPF_X, 9, 5, 0, 0);
}

static void block_d(struct gen *g, unsigned k)
{
	emit(g, BPF_LDX | BPF_MEM | BPF_W, 2, 6, field(k + 11), 0);
	emit(g, BPF_JMP | BPF_JLT | BPF_K, 2, 0, 4, 10);
	emit(g, BPF_JMP | BPF_JLT | BPF_K, 2, 0, 2, 1000);
	emit(g, BPF_JMP32 | BPF_JGT | BPF_K, 2, 0, 1, 100000);
	emit(g, BPF_ALU64 | BPF_ADD | BPF_K, 9, 0, 0, 1);
	emit(g, BPF_ALU64 | BPF_ADD | BPF_K, 9, 0, 0, 1);
}

static struct gen generate(size_t target)
{
	struct gen g = {0};
	emit(&g, BPF_ALU64 | BPF_MOV | BPF_X, 6, 1, 0, 0);
	emit(&g, BPF_ALU64 | BPF_MOV | BPF_K, 9, 0, 0, 0);
	for (unsigned k = 0; g.n + 16 < target - 2; k++) {
		switch (k % 4) {
		case 0: block_a(&g, k); break;
		case 1: block_b(&g, k); break;
		case 2: block_c(&g, k); break;
		default: block_d(&g, k); break;
		}
	}
	while (g.n < target - 2)
		emit(&g, BPF_ALU64 | BPF_ADD | BPF_K, 9, 0, 0, 1);
	emit(&g, BPF_ALU64 | BPF_MOV | BPF_X, 0, 9, 0, 0);
	emit(&g, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	return g;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	int runs = argc > 1 ? atoi(argv[1]) : 21;
	size_t target = argc > 2 ? (size_t)atol(argv[2]) : 4096;
	if (runs < 1 || target < 64) {
		fprintf(stderr, "usage: %s [RUNS>=1] [INSNS>=64]\n", argv[0]);
		return 2;
	}
	struct gen g = generate(target);
	struct gp_map map = {.name = "counts", .type = BPF_MAP_TYPE_ARRAY, .key_size = 4, .value_size = 64,
			     .max_entries = 1};
	static char log[4096];
	double *t = calloc((size_t)runs, sizeof(double));
	struct gp_verify_opts o;
	for (int r = 0; r < runs; r++) {
		uint8_t atomic_only = 0;
		memset(&o, 0, sizeof(o));
		o.attach = GP_ATTACH_KERNEL_ENTRY;
		o.ctx_size = gp_attach_ctx_size(GP_ATTACH_KERNEL_ENTRY);
		o.maps = &map;
		o.nmaps = 1;
		o.log = log;
		o.log_size = sizeof(log);
		o.map_atomic_only = &atomic_only;
		double t0 = now_ms();
		int rc = gp_verify(g.v, g.n, &o);
		t[r] = now_ms() - t0;
		if (rc || !atomic_only) {
			fprintf(stderr, "generated program rejected (%d) or map not atomic-only:\n%s", rc, log);
			return 1;
		}
	}
	qsort(t, (size_t)runs, sizeof(double), cmp_double);
	printf("| insns | branches | insns processed | states kept | runs | median ms | min ms | max ms | target |\n");
	printf("|-------|----------|-----------------|-------------|------|-----------|--------|--------|--------|\n");
	printf("| %zu | %u | %lu | %u | %d | %.2f | %.2f | %.2f | %s |\n", g.n, g.branches, o.insns_processed,
	       o.states_stored, runs, t[runs / 2], t[0], t[runs - 1], t[runs / 2] < 50.0 ? "< 50 ms: met" : "< 50 ms: MISSED");
	free(t);
	free(g.v);
	return 0;
}
