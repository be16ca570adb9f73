/* Maps through the real lowering: eBPF programs that use every maps helper and both forms of
 * map reference are lowered with the maps hooks (gp_maps_emit_map_ref, gp_maps_helper_func,
 * gp_maps_puts_func), called from a kernel, printed, and compiled by ptxas. Exits 77 without
 * ptxas. */
#include "ebpf/lower.h"
#include "maps/map_device.h"
#include "maps/map_emit.h"
#include "maps/maps.h"
#include "check.h"

#include <stdlib.h>
#include <unistd.h>

#ifndef PTXAS
#define PTXAS "/usr/local/cuda/bin/ptxas"
#endif

#define I(c, d, s, o, i) ((struct bpf_insn){.code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i)})
#define MOV64_IMM(d, v) I(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, v)
#define MOV64_REG(d, s) I(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define ADD64_IMM(d, v) I(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, v)
#define STW(d, off, v) I(BPF_ST | BPF_MEM | BPF_W, d, 0, off, v)
#define STDW(d, off, v) I(BPF_ST | BPF_MEM | BPF_DW, d, 0, off, v)
#define LD_MAP(d, idx) I(BPF_LD | BPF_DW | BPF_IMM, d, BPF_PSEUDO_MAP_FD, 0, idx), I(0, 0, 0, 0, 0)
#define LD_MAP_VALUE(d, idx, off) I(BPF_LD | BPF_DW | BPF_IMM, d, BPF_PSEUDO_MAP_VALUE, 0, idx), I(0, 0, 0, 0, off)
#define CALL(id) I(BPF_JMP | BPF_CALL, 0, 0, 0, id)
#define JEQ_IMM(d, v, off) I(BPF_JMP | BPF_JEQ | BPF_K, d, 0, off, v)
#define XADD64(d, s, off) I(BPF_STX | 0xc0 | BPF_DW, d, s, off, BPF_ADD)
#define EXIT() I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

static const struct bpf_insn counter[] = {
	STW(10, -4, 0),
	MOV64_REG(2, 10), ADD64_IMM(2, -4),
	LD_MAP(1, 0),
	CALL(1),
	JEQ_IMM(0, 0, 2),
	MOV64_IMM(1, 1),
	XADD64(0, 1, 0),
	/* a sharded .bss counter through the value form */
	LD_MAP_VALUE(2, 3, 8),
	MOV64_IMM(1, 1),
	XADD64(2, 1, 0),
	MOV64_IMM(0, 0),
	EXIT(),
};

static const struct bpf_insn everything[] = {
	/* key and value on the stack */
	STDW(10, -8, 7), STDW(10, -16, 1),
	LD_MAP(1, 1), MOV64_REG(2, 10), ADD64_IMM(2, -8), MOV64_REG(3, 10), ADD64_IMM(3, -16),
	MOV64_IMM(4, BPF_NOEXIST), CALL(2),
	LD_MAP(1, 1), MOV64_REG(2, 10), ADD64_IMM(2, -8), CALL(3),
	/* ringbuf_output(map, data, 16, 0) */
	LD_MAP(1, 2), MOV64_REG(2, 10), ADD64_IMM(2, -16), MOV64_IMM(3, 16), MOV64_IMM(4, 0), CALL(130),
	/* reserve / submit, reserve / discard */
	LD_MAP(1, 2), MOV64_IMM(2, 24), MOV64_IMM(3, 0), CALL(131),
	JEQ_IMM(0, 0, 4), STDW(0, 0, 5), MOV64_REG(1, 0), MOV64_IMM(2, 0), CALL(132),
	LD_MAP(1, 2), MOV64_IMM(2, 8), MOV64_IMM(3, 0), CALL(131),
	JEQ_IMM(0, 0, 2), MOV64_REG(1, 0), MOV64_IMM(2, 0), CALL(133),
	/* perf_event_output(ctx, map, flags, data, size) */
	MOV64_IMM(1, 0), LD_MAP(2, 2), MOV64_IMM(3, 0), MOV64_REG(4, 10), ADD64_IMM(4, -16),
	MOV64_IMM(5, 8), CALL(25),
	/* trace_printk("%d\n"...) from the stack, and bpftime's puts */
	STW(10, -24, 0x000a6425), MOV64_REG(1, 10), ADD64_IMM(1, -24), MOV64_IMM(2, 4), MOV64_IMM(3, 42), CALL(6),
	MOV64_REG(1, 10), ADD64_IMM(1, -24), CALL(501),
	MOV64_IMM(0, 0),
	EXIT(),
};

int main(void)
{
	if (access(PTXAS, X_OK)) {
		printf("SKIP: %s not found\n", PTXAS);
		return 77;
	}
	struct gp_map_allocator *a = gp_map_allocator_host(8);
	struct gp_map defs[] = {
		{.name = "counts", .type = BPF_MAP_TYPE_ARRAY, .key_size = 4, .value_size = 8, .max_entries = 4},
		{.name = "h", .type = BPF_MAP_TYPE_HASH, .key_size = 8, .value_size = 8, .max_entries = 64},
		{.name = "events", .type = BPF_MAP_TYPE_RINGBUF, .max_entries = 1 << 16},
		{.name = ".bss", .type = BPF_MAP_TYPE_ARRAY, .key_size = 4, .value_size = 16, .max_entries = 1},
	};
	uint8_t atomic_only[] = {1, 0, 0, 1};
	struct gp_map_set_opts so = {.alloc = a, .atomic_only = atomic_only};
	struct gp_map_set *set;
	char err[512] = "";
	CHECK_EQ(gp_map_set__create(defs, 4, &so, &set, err, sizeof(err)), 0);
	struct gp_maps_device dev;
	gp_maps_device__init_from_set(&dev, set);

	ir_module *m = ir_module_new();
	const char *dirs[] = {".version 8.0", ".target sm_75", ".address_size 64"};
	for (int i = 0; i < 3; i++) {
		ir_top *t = ir_top_new(m, IR_TOP_DIRECTIVE);
		t->text = dirs[i];
		ir_top_append(m, t);
	}
	struct gp_lower_opts lo = {
		.emit_map_ref = gp_maps_emit_map_ref,
		.helper_func = gp_maps_helper_func,
		.puts_func = gp_maps_puts_func(&dev, m),
		.user = &dev,
		.prefix = "__gp0_",
	};
	int rc = gp_lower_program(m, counter, sizeof(counter) / sizeof(counter[0]), "probe_counter", &lo,
				  err, sizeof(err));
	if (rc)
		fprintf(stderr, "lower counter: %s\n", err);
	CHECK_EQ(rc, 0);
	lo.prefix = "__gp1_";
	rc = gp_lower_program(m, everything, sizeof(everything) / sizeof(everything[0]), "probe_all", &lo,
			      err, sizeof(err));
	if (rc)
		fprintf(stderr, "lower everything: %s\n", err);
	CHECK_EQ(rc, 0);

	/* a kernel that calls both probes */
	ir_top *t = ir_top_new(m, IR_TOP_FUNC);
	ir_func *k = &t->func;
	k->is_entry = true;
	k->linkage = ".visible";
	k->name = "gp_kernel";
	k->has_params = true;
	k->has_body = true;
	ir_top_append(m, t);
	ir_stmt_append(k, ir_reg_decl_new(m, ".b64", "%rd", 4));
	struct gp_emit e = {.m = m, .f = k};
	gp_em(&e, "mov.u64 %%rd1, 0");
	const char *arg = "%rd1";
	gp_em_call(&e, "probe_counter", "%rd2", 1, &arg);
	gp_em_call(&e, "probe_all", "%rd2", 1, &arg);
	gp_em(&e, "ret");
	CHECK_EQ(e.failed, 0);

	size_t len;
	char *ptx = ptx_print(m, &len);
	if (getenv("GP_PRINT_PTX"))
		fputs(ptx, stdout);
	char path[] = "/tmp/gp_maps_lower_XXXXXX.ptx";
	int fd = mkstemps(path, 4);
	CHECK(fd >= 0 && write(fd, ptx, len) == (ssize_t)len);
	close(fd);
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "%s -arch=sm_90 -o /dev/null %s", PTXAS, path);
	int prc = system(cmd);
	CHECK_EQ(prc, 0);
	if (!prc)
		unlink(path);
	else
		fprintf(stderr, "kept %s\n", path);
	free(ptx);
	ir_module_free(m);
	gp_maps_device__release(&dev);
	gp_map_set__free(set);
	free(a);
	CHECK_DONE();
}
