/* ptx-frontend/split.c on tests/shim_lazy/module.ptx: what a split module holds, and how binding
 * rewrites its references to the shared variables. usage: split_test MODULE.ptx */
#include "ptx-frontend/split.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fails;

static void expect(int cond, const char *what)
{
	printf("%s %s\n", cond ? "ok  " : "FAIL", what);
	fails += !cond;
}

static char *read_text(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = calloc(1, (size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* Rewritten lines print with tabs (canonical form): blanks squeezed to one space. */
static void squeeze(char *s)
{
	for (char *p = s; *p; p++)
		if (*p == '\t')
			*p = ' ';
	for (char *p; (p = strstr(s, "  "));)
		memmove(p, p + 1, strlen(p));
}

static int resolve(void *user, const char *name, uint64_t *addr)
{
	(void)user;
	if (!strcmp(name, "g"))
		*addr = 0x7f0000001000ull;
	else if (!strcmp(name, "c"))
		*addr = 0x7f0000002000ull;
	else if (!strcmp(name, "other"))
		*addr = 0x7f0000003000ull;
	else
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	size_t len;
	char *ptx = argc > 1 ? read_text(argv[1], &len) : NULL;
	if (!ptx) {
		fprintf(stderr, "usage: split_test MODULE.ptx\n");
		return 2;
	}
	char why[256];
	expect(ptx_split_precheck(ptx, len, why, sizeof(why)) == 0, "precheck: the module splits");
	const char *tex = ".version 8.0\n.target sm_90\n.address_size 64\n.global .texref t;\n";
	expect(ptx_split_precheck(tex, strlen(tex), why, sizeof(why)) == -1 &&
	       !strcmp(why, "texture references"), "precheck: texture references refused");
	const char *isp = "isspacep.const %p1, %rd1;\n";
	expect(ptx_split_precheck(isp, strlen(isp), why, sizeof(why)) == -1 &&
	       !strcmp(why, "isspacep.const"), "precheck: isspacep.const refused (ld.const is not)");
	const char *dyn = ".extern .shared .align 16 .b8 smem[];\n.extern .func (.param .b32 r) vprintf(.param .b64 a, .param .b64 b);\n";
	expect(ptx_split_precheck(dyn, strlen(dyn), why, sizeof(why)) == 0,
	       "precheck: extern __shared__ arrays and driver functions (vprintf) split");
	const char *ext = ".extern .global .align 4 .u32 x;\n";
	expect(ptx_split_precheck(ext, strlen(ext), why, sizeof(why)) == -1, "precheck: .extern refused");

	struct ptx_split_src *src = ptx_split_src_new(ptx, len, why, sizeof(why));
	expect(src != NULL, "the module parses");
	if (!src)
		return 1;
	char *out = NULL;
	size_t out_len = 0;
	struct ptx_split_vars vars;
	expect(ptx_split_kernel(src, "k_use", &out, &out_len, &vars, why, sizeof(why)) == 0,
	       "k_use splits");
	squeeze(out);
	expect(strstr(out, ".entry k_use") && strstr(out, "helper(") && !strstr(out, ".entry k_other") &&
	       !strstr(out, ".entry k_plain"), "k_use's module: k_use and helper, no other kernel");
	expect(strstr(out, ".visible .global .align 4 .u32 g;") && strstr(out, ".const .align 4 .b8 c[16];") &&
	       !strstr(out, "other[4]"), "k_use's module: g and c declared, without initializers; other not");
	expect(vars.n == 2 && !strcmp(vars.names[0], "g") && !strcmp(vars.names[1], "c"),
	       "k_use shares g and c");
	char *bound = NULL;
	size_t bound_len = 0;
	int rc = ptx_split_bind(out, out_len, &vars, resolve, NULL, &bound, &bound_len, why,
				sizeof(why));
	expect(rc == 0, "k_use binds");
	if (rc)
		printf("     %s\n", why);
	if (bound) {
		squeeze(bound);
		/* 0x7f0000001000 = 139637976731648, 0x7f0000002000 = 139637976735744 */
		expect(!strstr(bound, " g;") && !strstr(bound, " c[16]"), "bound: no declarations of g and c");
		expect(strstr(bound, "mov.u64 %gp_bind0, 139637976731648;\n ld.global.u32 %r1, [%gp_bind0];") != NULL,
		       "bound: [g] is g's address (in a register: ptxas takes immediate addresses for .local only)");
		expect(strstr(bound, "mov.u64 %gp_bind0, 139637976735744;\n ld.global.u32 %r2, [%gp_bind0+4];") != NULL,
		       "bound: ld.const [c+4] is a global load of c's address + 4");
		expect(strstr(bound, ".reg .b64 %gp_bind<4>;") != NULL, "bound: the registers declared");
		expect(strstr(bound, "mov.u64 %rd3, 139637976735744;") && strstr(bound, "mov.u64 %rd4, %rd3;"),
		       "bound: mov of c is its address, cvta.const of it a mov");
		expect(strstr(bound, "mov.u64 %rd5, 139637976731648;") &&
		       strstr(bound, "cvta.global.u64 %rd6, %rd5;"), "bound: mov of g is its address, cvta.global stays");
		expect(!strstr(bound, ".const"), "bound: nothing in constant space");
		if (fails)
			fputs(bound, stdout);
	}
	free(bound);
	/* The table form: no address in the text (the same text whatever the addresses, so the
	 * driver's JIT cache hits from run to run), each read from __gp_bind. */
	uint64_t addrs[2] = {0};
	bound = NULL;
	rc = ptx_split_bind_table(out, out_len, &vars, resolve, NULL, &bound, &bound_len, addrs, why,
				  sizeof(why));
	expect(rc == 0 && addrs[0] == 0x7f0000001000 && addrs[1] == 0x7f0000002000,
	       "table: k_use binds, the addresses in vars' order");
	if (bound) {
		squeeze(bound);
		expect(strstr(bound, ".const .align 8 .u64 __gp_bind[2];") != NULL, "table: declared, 2 entries");
		expect(!strstr(bound, "139637976731648") && !strstr(bound, "139637976735744"),
		       "table: no address in the text");
		expect(strstr(bound, "ld.const.u64 %gp_bind0, [__gp_bind];\n ld.global.u32 %r1, [%gp_bind0];") != NULL,
		       "table: [g] through entry 0");
		expect(strstr(bound, "ld.const.u64 %gp_bind0, [__gp_bind+8];\n ld.global.u32 %r2, [%gp_bind0+4];") != NULL,
		       "table: ld.const [c+4] through entry 1, a global load");
		expect(strstr(bound, "ld.const.u64 %rd3, [__gp_bind+8];") &&
		       strstr(bound, "ld.const.u64 %rd5, [__gp_bind];"),
		       "table: mov of a variable's address is a load of its entry");
		if (fails)
			fputs(bound, stdout);
	}
	free(bound);
	free(out);
	ptx_split_vars_free(&vars);

	expect(ptx_split_kernel(src, "k_plain", &out, &out_len, &vars, why, sizeof(why)) == 0 &&
	       vars.n == 0 && !strstr(out, "helper") && !strstr(out, " g;"),
	       "k_plain splits alone: no function, no variable");
	free(out);
	ptx_split_vars_free(&vars);
	expect(ptx_split_kernel(src, "k_other", &out, &out_len, &vars, why, sizeof(why)) == 0 &&
	       vars.n == 1 && !strcmp(vars.names[0], "other"), "k_other shares other only");
	free(out);
	ptx_split_vars_free(&vars);
	expect(ptx_split_kernel(src, "k_dyn", &out, &out_len, &vars, why, sizeof(why)) == 0 &&
	       vars.n == 0 && strstr(out, ".extern .shared .align 16 .b8 smem[];") &&
	       strstr(out, ") vprintf") && strstr(out, ".entry k_dyn") && !strstr(out, ".entry k_use") &&
	       strstr(out, "$str[4] = {104, 105, 10, 0};"),
	       "k_dyn splits with its extern __shared__ array, vprintf's declaration and a copy of its string");
	free(out);
	ptx_split_vars_free(&vars);
	expect(ptx_split_kernel(src, "helper", &out, &out_len, &vars, why, sizeof(why)) == -1,
	       "a device function is not a kernel");
	ptx_split_src_free(src);
	free(ptx);
	return fails ? 1 : 0;
}
