/* The device helpers: add every one to a module with a kernel that calls each, print it with
 * ptx_print, and have ptxas (no GPU needed) compile it for sm_75 and sm_90. Also checks the map
 * references (descriptor address, global data value, sharded global data) and that the helper
 * set is added once per module. Exits 77 (skip) when ptxas is absent. */
#include "maps/map_device.h"
#include "maps/map_emit.h"
#include "maps/maps.h"
#include "check.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#ifndef PTXAS
#define PTXAS "/usr/local/cuda/bin/ptxas"
#endif

static ir_top *directive(ir_module *m, const char *text)
{
	ir_top *t = ir_top_new(m, IR_TOP_DIRECTIVE);
	t->text = ir_strdup(m, text);
	ir_top_append(m, t);
	return t;
}

static ir_func *kernel(ir_module *m, const char *name)
{
	ir_top *t = ir_top_new(m, IR_TOP_FUNC);
	ir_func *f = &t->func;
	f->is_entry = true;
	f->linkage = ".visible";
	f->name = name;
	f->has_params = true;
	f->nparams = 1;
	f->params = ir_alloc(m, sizeof(ir_decl));
	f->params[0] = (ir_decl){.space = ".param", .type = ".u64", .name = "gp_k", .count = -1};
	f->has_body = true;
	ir_top_append(m, t);
	ir_stmt_append(f, ir_reg_decl_new(m, ".b64", "%rd", 48));
	return f;
}

static int ptxas(const char *ptx, size_t len, const char *arch)
{
	char path[] = "/tmp/gp_maps_device_XXXXXX.ptx";
	int fd = mkstemps(path, 4);
	if (fd < 0)
		return -1;
	if (write(fd, ptx, len) != (ssize_t)len) {
		close(fd);
		return -1;
	}
	close(fd);
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "%s -arch=%s -o /dev/null %s", PTXAS, arch, path);
	int rc = system(cmd);
	if (rc)
		fprintf(stderr, "ptxas failed (%d) on %s (kept)\n", rc, path);
	else
		unlink(path);
	return rc;
}

/* The text of .func name in ptx (from its name to its closing brace), or NULL. */
static char *func_body(const char *ptx, const char *name, size_t *len)
{
	char key[128];
	snprintf(key, sizeof(key), ") %s(\n", name);
	const char *b = strstr(ptx, key);
	const char *end = b ? strstr(b, "\n}\n") : NULL;
	if (!end)
		return NULL;
	*len = (size_t)(end - b);
	return strndup(b, *len);
}

static int count(const char *s, const char *what)
{
	int n = 0;
	for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

/* The ring's code for a module whose target is `target` (NULL: none given). From sm_70 on, a
 * reservation is made once per warp: every atomic on the ring's producer state (the CAS on head,
 * the CAS claiming the host reread, the drop count) lies between the branch that sends every lane
 * but the leader to $L_bcast and that label, and the position reaches the lanes by shfl.sync;
 * records are published with one system-scope release fence. Older targets: a group of one, no
 * warp instructions, membar.sys (also sm_70+ modules of PTX before 6.2). All compile with ptxas. */
static void check_ring_code(struct gp_maps_device *dev, const char *target, const char *version)
{
	ir_module *m = ir_module_new();
	directive(m, ".version 8.0");
	directive(m, target ? (!strcmp(target, "sm_90") ? ".target sm_90" : ".target sm_75") : ".target sm_75");
	directive(m, ".address_size 64");
	m->target = target;
	m->version = version;
	ir_func *k = kernel(m, "gp_ring_kernel");
	struct gp_emit e = {.m = m, .f = k};
	gp_em(&e, "ld.param.u64 %%rd1, [gp_k]");
	CHECK_EQ(gp_maps_emit_map_ref(dev, m, k, "%rd2", 2, 0, 0), 0);   /* events */
	gp_em(&e, "mov.u64 %%rd3, 16");
	gp_em(&e, "mov.u64 %%rd4, 0");
	const char *out = gp_maps_helper_func(dev, m, 130), *res = gp_maps_helper_func(dev, m, 131),
		   *sub = gp_maps_helper_func(dev, m, 132);
	CHECK(out && res && sub);
	if (out && res && sub) {
		gp_em_call(&e, out, "%rd10", 5, (const char *const[]){"%rd2", "%rd1", "%rd3", "%rd4", "%rd4"});
		gp_em_call(&e, res, "%rd11", 5, (const char *const[]){"%rd2", "%rd3", "%rd4", "%rd4", "%rd4"});
		gp_em_call(&e, sub, "%rd12", 5, (const char *const[]){"%rd11", "%rd4", "%rd4", "%rd4", "%rd4"});
	}
	gp_em(&e, "ret");
	CHECK_EQ(e.failed, 0);
	size_t len, rlen = 0, clen = 0;
	char *ptx = ptx_print(m, &len);
	char *rsv = func_body(ptx, "__gp_m_ring_reserve", &rlen);
	char *cmt = func_body(ptx, "__gp_m_ring_commit", &clen);
	CHECK(rsv && cmt);
	if (rsv && cmt) {
		/* sm_70+, and PTX 6.2+ where the module says (activemask) */
		int warp = target != NULL && (!version || strcmp(version, "6.2") >= 0);
		CHECK_EQ(count(rsv, "atom.global.cas.b64"), 2);   /* head; the reread claim */
		CHECK_EQ(count(rsv, "red.global.add.u64"), 1);    /* drops, once for the group */
		CHECK_EQ(count(rsv, "activemask.b32"), warp);
		CHECK_EQ(count(rsv, "match.any.sync.b64"), 2 * warp);   /* same ring, same size */
		CHECK_EQ(count(rsv, "shfl.sync.idx.b32"), 2 * warp);    /* offset; k and k1 */
		CHECK_EQ(count(cmt, warp ? "fence.acq_rel.sys" : "membar.sys"), 1);
		CHECK_EQ(count(cmt, warp ? "membar.sys" : "fence."), 0);
		if (warp) {
			/* the leader region: from the non-leaders' branch to $L_bcast */
			char *guard = strstr(rsv, "@%p4 bra \t$L_bcast;");
			char *lead_end = strstr(rsv, "\n$L_bcast:");
			CHECK(guard && lead_end && guard < lead_end);
			CHECK(strstr(rsv, "setp.ne.u32 \t%p4, %r8, 0;") != NULL);   /* rank != 0 */
			if (guard && lead_end) {
				for (char *p = strstr(rsv, "atom.global"); p; p = strstr(p + 1, "atom.global"))
					CHECK(p > guard && p < lead_end);
				char *p = strstr(rsv, "red.global");
				CHECK(p && p > guard && p < lead_end);
				CHECK(strstr(rsv, "shfl.sync.idx.b32") > lead_end);
			}
		}
	}
	if (getenv("GP_PRINT_PTX"))
		fputs(ptx, stdout);
	if (!target || strcmp(target, "sm_90"))
		CHECK_EQ(ptxas(ptx, len, "sm_75"), 0);
	CHECK_EQ(ptxas(ptx, len, "sm_90"), 0);
	free(rsv);
	free(cmt);
	free(ptx);
	m->target = NULL;
	m->version = NULL;
	ir_module_free(m);
}

int main(void)
{
	if (access(PTXAS, X_OK)) {
		printf("SKIP: %s not found\n", PTXAS);
		return 77;
	}
	struct gp_map_allocator *a = gp_map_allocator_host(4);
	struct gp_map defs[] = {
		{.name = "counts", .type = BPF_MAP_TYPE_HASH, .key_size = 8, .value_size = 8, .max_entries = 64},
		{.name = ".bss", .type = BPF_MAP_TYPE_ARRAY, .key_size = 4, .value_size = 16, .max_entries = 1},
		{.name = "events", .type = BPF_MAP_TYPE_RINGBUF, .max_entries = 1 << 16},
		{.name = ".data", .type = BPF_MAP_TYPE_ARRAY, .key_size = 4, .value_size = 8, .max_entries = 1},
	};
	uint8_t atomic_only[] = {0, 1, 0, 0};
	struct gp_map_set_opts so = {.alloc = a, .atomic_only = atomic_only};
	struct gp_map_set *set;
	char err[256];
	CHECK_EQ(gp_map_set__create(defs, 4, &so, &set, err, sizeof(err)), 0);
	struct gp_maps_device dev;
	CHECK_EQ(gp_maps_device__init_from_set(&dev, set), 0);

	ir_module *m = ir_module_new();
	directive(m, ".version 8.0");
	directive(m, ".target sm_75");
	directive(m, ".address_size 64");
	ir_func *k = kernel(m, "gp_test_kernel");
	struct gp_emit e = {.m = m, .f = k};
	gp_em(&e, "ld.param.u64 %%rd1, [gp_k]");

	/* map references: descriptor, plain global, sharded global (this SM's copy) */
	CHECK_EQ(gp_maps_emit_map_ref(&dev, m, k, "%rd2", 0, 0, 0), 0);
	CHECK_EQ(gp_maps_emit_map_ref(&dev, m, k, "%rd3", 3, 1, 4), 0);
	CHECK_EQ(gp_maps_emit_map_ref(&dev, m, k, "%rd4", 1, 1, 8), 0);
	CHECK_EQ(gp_maps_emit_map_ref(&dev, m, k, "%rd5", 9, 0, 0), -ENOENT);
	CHECK_EQ(gp_maps_emit_map_ref(&dev, m, k, "%rd5", 0, 1, 0), -EINVAL);   /* hash: no value form */
	CHECK_EQ(gp_maps_emit_map_ref(&dev, m, k, "%rd5", 3, 1, 8), -EINVAL);   /* past the value */
	gp_em(&e, "st.global.u64 [%%rd1], %%rd3");
	gp_em(&e, "st.global.u64 [%%rd1+8], %%rd4");

	static const int ids[] = {1, 2, 3, 6, 25, 130, 131, 132, 133};
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		const char *fn = gp_maps_helper_func(&dev, m, ids[i]);
		CHECK(fn != NULL);
		if (!fn)
			continue;
		CHECK(gp_maps_helper_func(&dev, m, ids[i]) == fn);   /* once per module */
		const char *args[5] = {"%rd2", "%rd1", "%rd1", "%rd1", "%rd1"};
		if (ids[i] == 25)
			args[1] = "%rd2";   /* ctx, map, flags, data, size */
		gp_em_call(&e, fn, "%rd10", 5, args);
		gp_em(&e, "st.global.u64 [%%rd1+%zu], %%rd10", 16 + 8 * i);
	}
	CHECK(gp_maps_helper_func(&dev, m, 5) == NULL);   /* not a maps helper */
	const char *puts = gp_maps_puts_func(&dev, m);
	CHECK(puts != NULL);
	if (puts) {
		const char *arg = "%rd1";
		gp_em_call(&e, puts, "%rd10", 1, &arg);
	}
	gp_em(&e, "ret");
	CHECK_EQ(e.failed, 0);

	size_t len;
	char *ptx = ptx_print(m, &len);
	/* helpers come before the kernel that calls them, and each is there once */
	char *first_helper = strstr(ptx, ") __gp_m_copy(\n");
	char *kern = strstr(ptx, ".entry gp_test_kernel");
	CHECK(first_helper && kern && first_helper < kern);
	char *lookup = strstr(ptx, "__gp_m_map_lookup_elem(");
	CHECK(lookup && !strstr(lookup + 1, "__gp_m_map_lookup_elem("));
	/* the sharded .bss value is this SM's copy */
	CHECK(strstr(ptx, "mov.u32 \t%gpm_s, %smid;") != NULL);
	CHECK(strstr(ptx, "and.b32 \t%gpm_s, %gpm_s, 3;") != NULL);   /* 4 copies */
	if (getenv("GP_PRINT_PTX"))
		fputs(ptx, stdout);
	CHECK_EQ(ptxas(ptx, len, "sm_75"), 0);
	CHECK_EQ(ptxas(ptx, len, "sm_90"), 0);
	free(ptx);
	ir_module_free(m);

	/* without a printk ring there is no trace_printk and no puts */
	struct gp_maps_device none = {0};
	ir_module *m2 = ir_module_new();
	CHECK(gp_maps_helper_func(&none, m2, 6) == NULL);
	CHECK(gp_maps_puts_func(&none, m2) == NULL);
	ir_module_free(m2);

	check_ring_code(&dev, NULL, NULL);
	check_ring_code(&dev, "sm_75", NULL);
	check_ring_code(&dev, "sm_90", "8.0");
	check_ring_code(&dev, "sm_75", "6.0");   /* no activemask before PTX 6.2: one per lane */

	gp_maps_device__release(&dev);
	gp_map_set__free(set);
	free(a);
	CHECK_DONE();
}
