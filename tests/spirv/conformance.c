/* The per-instruction conformance suite: every case in tests/spirv/cases/ is a small PTX kernel
 * with its inputs and expected outputs. The same cases run on two backends:
 *   opencl: PTX -> IR -> SPIR-V (validated) -> OpenCL (PoCL in CI)
 *   cuda:   the same PTX through the real NVIDIA driver (cuModuleLoadData), on the GPU machine,
 *           which proves the expectations against hardware.
 * usage: spirv_conformance [--backend opencl|cuda] [-v] CASE_OR_DIR...
 * Prints one line per case and "N passed, M failed"; exit 0 if all pass, 1 if any fails, 77 if
 * the backend has no device.
 *
 * Case file format (one case per file; '#' starts a comment line):
 *   Template form: the harness wraps `code:` into a kernel with one thread per value; thread i
 *   loads %in0[i], %in1[i], %in2[i] (typed registers) and stores %out to out[i]. Scratch
 *   registers %p<8> %h<8> %r<16> %rd<16> %f<16> %fd<16> are declared.
 *     in TYPE = v0 v1 ...          (up to three lines: %in0, %in1, %in2)
 *     out TYPE = e0 e1 ...         (expected)
 *     code:
 *     <PTX instructions>
 *   Full form: a whole PTX module after `ptx:`.
 *     kernel NAME
 *     grid X Y Z / block X Y Z
 *     buf NAME TYPE = v0 v1 ...    (a device buffer, passed as a .u64 parameter)
 *     buf NAME TYPE[N]             (N zeroed elements)
 *     scalar TYPE VALUE            (a parameter by value)
 *     struct TYPE = v0 v1 ...      (a by-value struct parameter: the values' bytes in order)
 *     expect NAME = e0 e1 ...
 *     ptx:
 *     <PTX module>
 *     ptr DST OFFSET SRC           (buffer SRC's device address written into DST at byte OFFSET)
 *     backend NAME                 (the case runs on that backend only: data built for our driver,
 *                                   such as a texture descriptor, means nothing to NVIDIA's)
 *     target sm_XX [VERSION]       (template form: the kernel's .target, and .version, 8.0 unless
 *                                   given; without it sm_70 and 7.0)
 *   Parameters are passed in the order of the buf/scalar lines (template: in0.., out).
 *   Values: integers (decimal, 0x hex, negative), floats (1.5, -0.0, inf, -inf, nan, 0x1p-149),
 *   or exact bits as bits:0x7fc00000. Floats compare bit for bit, except that any NaN matches nan. */
#include "ptx-frontend/ir.h"
#include "spirv/runtime.h"
#include "spirv/spirv.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXV 1024
#define MAXB 8

struct buf {
	char name[32];
	char type[8];
	unsigned n;
	uint64_t vals[MAXV];   /* raw bits */
	bool is_scalar;
	bool has_expect;
	uint64_t expect[MAXV];
	bool expect_nan[MAXV];
	unsigned nexpect;
};

struct tcase {
	char name[256];
	char kernel[128];
	unsigned grid[3], block[3];
	struct buf bufs[MAXB];
	unsigned nbufs;
	char *ptx;
	char only[16];                /* "backend NAME": runs on that backend only */
	char target[16], version[8];  /* "target sm_XX [VERSION]": the template's .target and .version */
	struct { unsigned dst, off, src; } ptrs[MAXB]; /* "ptr DST OFFSET SRC" */
	unsigned nptrs;
};

static unsigned type_bytes(const char *t)
{
	int bits = atoi(t + 1);
	return bits ? (unsigned)bits / 8 : 0;
}

static int parse_value(const char *tok, const char *type, uint64_t *out, bool *is_nan)
{
	*is_nan = false;
	if (!strncmp(tok, "bits:", 5)) {
		*out = strtoull(tok + 5, NULL, 0);
		return 0;
	}
	char *end;
	if (type[0] == 'f') {
		if (!strcmp(tok, "nan") || !strcmp(tok, "-nan")) {
			*is_nan = true;
			*out = type[1] == '3' ? 0x7fffffffu : 0x7fffffffffffffffull;
			return 0;
		}
		double d = strtod(tok, &end);
		if (*end)
			return -1;
		if (!strcmp(type, "f32")) {
			float f = (float)d;
			uint32_t r;
			memcpy(&r, &f, 4);
			*out = r;
		} else {
			memcpy(out, &d, 8);
		}
		return 0;
	}
	if (tok[0] == '-')
		*out = (uint64_t)strtoll(tok, &end, 0);
	else
		*out = strtoull(tok, &end, 0);
	if (*end)
		return -1;
	unsigned b = type_bytes(type);
	if (b < 8)
		*out &= (1ull << (8 * b)) - 1;
	return 0;
}

static int parse_values(char *s, const char *type, uint64_t *vals, bool *nans, unsigned *n)
{
	*n = 0;
	for (char *tok = strtok(s, " \t\r\n"); tok; tok = strtok(NULL, " \t\r\n")) {
		bool nan_;
		if (*n == MAXV || parse_value(tok, type, &vals[*n], &nan_) < 0)
			return -1;
		if (nans)
			nans[*n] = nan_;
		(*n)++;
	}
	return 0;
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *s = malloc((size_t)n + 1);
	if (fread(s, 1, (size_t)n, f) != (size_t)n) {
		free(s);
		fclose(f);
		return NULL;
	}
	s[n] = 0;
	fclose(f);
	return s;
}

static struct buf *find_buf(struct tcase *tc, const char *name)
{
	for (unsigned i = 0; i < tc->nbufs; i++)
		if (!strcmp(tc->bufs[i].name, name))
			return &tc->bufs[i];
	return NULL;
}

/* Template form -> a full PTX module. */
static int expand_template(struct tcase *tc, const char *code, unsigned nin)
{
	size_t cap = strlen(code) + 8192;
	char *p = malloc(cap);
	size_t n = 0;
#define OUTF(...) n += (size_t)snprintf(p + n, cap - n, __VA_ARGS__)
	/* sm_70 and PTX 7.0 unless the case names a target (instructions of newer GPUs: bf16, tf32,
	 * fp8, packed 16-bit SIMD; NVIDIA's driver rejects them under an older .target) */
	OUTF(".version %s\n.target %s\n.address_size 64\n\n.visible .entry t(",
	     tc->version[0] ? tc->version : tc->target[0] ? "8.0" : "7.0", tc->target[0] ? tc->target : "sm_70");
	for (unsigned i = 0; i < nin; i++)
		OUTF(".param .u64 pin%u, ", i);
	OUTF(".param .u64 pout)\n{\n");
	OUTF("\t.reg .pred %%p<8>;\n\t.reg .b16 %%h<8>;\n\t.reg .b32 %%r<16>;\n\t.reg .b64 %%rd<16>;\n"
	     "\t.reg .f32 %%f<16>;\n\t.reg .f64 %%fd<16>;\n\t.reg .b64 %%ti, %%ad;\n\t.reg .b32 %%tx;\n");
	for (unsigned i = 0; i < nin; i++)
		OUTF("\t.reg .%s %%in%u;\n", tc->bufs[i].type, i);
	struct buf *out = &tc->bufs[nin];
	OUTF("\t.reg .%s %%out;\n", out->type);
	OUTF("\tmov.u32 %%tx, %%tid.x;\n\tcvt.u64.u32 %%ti, %%tx;\n");
	for (unsigned i = 0; i < nin; i++)
		OUTF("\tld.param.u64 %%ad, [pin%u];\n\tmad.lo.u64 %%ad, %%ti, %u, %%ad;\n\tld.global.%s %%in%u, [%%ad];\n", i,
		     type_bytes(tc->bufs[i].type), tc->bufs[i].type, i);
	OUTF("%s\n", code);
	OUTF("\tld.param.u64 %%ad, [pout];\n\tmad.lo.u64 %%ad, %%ti, %u, %%ad;\n\tst.global.%s [%%ad], %%out;\n\tret;\n}\n",
	     type_bytes(out->type), out->type);
#undef OUTF
	tc->ptx = p;
	strcpy(tc->kernel, "t");
	tc->grid[0] = tc->grid[1] = tc->grid[2] = 1;
	tc->block[0] = out->nexpect;
	tc->block[1] = tc->block[2] = 1;
	return 0;
}

static int load_case(const char *path, struct tcase *tc, char *err, size_t errlen)
{
	memset(tc, 0, sizeof(*tc));
	const char *base = strrchr(path, '/');
	snprintf(tc->name, sizeof(tc->name), "%s", base ? base + 1 : path);
	char *dot = strrchr(tc->name, '.');
	if (dot)
		*dot = 0;
	char *text = read_file(path);
	if (!text)
		return snprintf(err, errlen, "cannot read %s", path), -1;
	tc->grid[0] = tc->grid[1] = tc->grid[2] = 1;
	tc->block[0] = tc->block[1] = tc->block[2] = 1;
	unsigned nin = 0;
	bool tmpl = false;
	char *line = text, *rest = NULL;
	int ret = 0;
	while (line && *line) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		char *next = nl ? nl + 1 : NULL;
		char *s = line;
		while (*s == ' ' || *s == '\t')
			s++;
		char type[8], name[32];
		unsigned cnt;
		if (!*s || *s == '#') {
			/* comment */
		} else if (!strcmp(s, "code:") || !strcmp(s, "ptx:")) {
			tmpl = s[0] == 'c';
			rest = next ? next : "";
			break;
		} else if (sscanf(s, "backend %15s", tc->only) == 1) {
		} else if (!strncmp(s, "target ", 7)) {
			if (sscanf(s, "target %15s %7s", tc->target, tc->version) < 1 || strncmp(tc->target, "sm_", 3)) {
				ret = (snprintf(err, errlen, "%s: bad line: %s", path, s), -1);
				break;
			}
		} else if (!strncmp(s, "ptr ", 4)) {
			char dn[32], sn[32];
			unsigned off, di = MAXB, si = MAXB;
			if (sscanf(s, "ptr %31s %u %31s", dn, &off, sn) != 3 || tc->nptrs >= MAXB) {
				ret = (snprintf(err, errlen, "%s: bad line: %s", path, s), -1);
				break;
			}
			for (unsigned k = 0; k < tc->nbufs; k++) {
				if (!strcmp(tc->bufs[k].name, dn))
					di = k;
				if (!strcmp(tc->bufs[k].name, sn))
					si = k;
			}
			if (di == MAXB || si == MAXB) {
				ret = (snprintf(err, errlen, "%s: ptr names an unknown buffer: %s", path, s), -1);
				break;
			}
			tc->ptrs[tc->nptrs].dst = di;
			tc->ptrs[tc->nptrs].off = off;
			tc->ptrs[tc->nptrs++].src = si;
		} else if (sscanf(s, "kernel %127s", tc->kernel) == 1) {
		} else if (sscanf(s, "grid %u %u %u", &tc->grid[0], &tc->grid[1], &tc->grid[2]) == 3) {
		} else if (sscanf(s, "block %u %u %u", &tc->block[0], &tc->block[1], &tc->block[2]) == 3) {
		} else if (!strncmp(s, "in ", 3) || !strncmp(s, "out ", 4)) {
			bool is_out = s[0] == 'o';
			char *eq = strchr(s, '=');
			if (!eq || sscanf(s + (is_out ? 4 : 3), "%7s", type) != 1 || tc->nbufs >= MAXB) {
				ret = (snprintf(err, errlen, "%s: bad line: %s", path, s), -1);
				break;
			}
			struct buf *b = &tc->bufs[tc->nbufs++];
			snprintf(b->name, sizeof(b->name), is_out ? "out" : "in%u", nin);
			snprintf(b->type, sizeof(b->type), "%s", type);
			if (is_out) {
				b->has_expect = true;
				if (parse_values(eq + 1, type, b->expect, b->expect_nan, &b->nexpect) < 0) {
					ret = (snprintf(err, errlen, "%s: bad value in: %s", path, s), -1);
					break;
				}
				b->n = b->nexpect;
			} else {
				nin++;
				if (parse_values(eq + 1, type, b->vals, NULL, &b->n) < 0) {
					ret = (snprintf(err, errlen, "%s: bad value in: %s", path, s), -1);
					break;
				}
			}
		} else if (sscanf(s, "buf %31s %7[a-z0-9][%u]", name, type, &cnt) == 3) {
			struct buf *b = &tc->bufs[tc->nbufs++];
			snprintf(b->name, sizeof(b->name), "%s", name);
			snprintf(b->type, sizeof(b->type), "%s", type);
			b->n = cnt > MAXV ? MAXV : cnt;
		} else if (sscanf(s, "buf %31s %7s =", name, type) == 2 && strchr(s, '=')) {
			struct buf *b = &tc->bufs[tc->nbufs++];
			snprintf(b->name, sizeof(b->name), "%s", name);
			snprintf(b->type, sizeof(b->type), "%s", type);
			if (parse_values(strchr(s, '=') + 1, type, b->vals, NULL, &b->n) < 0) {
				ret = (snprintf(err, errlen, "%s: bad value in: %s", path, s), -1);
				break;
			}
		} else if (sscanf(s, "scalar %7s", type) == 1 || sscanf(s, "struct %7s", type) == 1) {
			bool st = s[1] == 't';
			struct buf *b = &tc->bufs[tc->nbufs++];
			snprintf(b->name, sizeof(b->name), "scalar%u", tc->nbufs);
			snprintf(b->type, sizeof(b->type), "%s", type);
			b->is_scalar = true;
			char *vals = s + 7 + strlen(type);
			while (*vals == ' ' || *vals == '=')
				vals++;
			if (parse_values(vals, type, b->vals, NULL, &b->n) < 0 || (!st && b->n != 1) || b->n > 64) {
				ret = (snprintf(err, errlen, "%s: bad scalar: %s", path, s), -1);
				break;
			}
		} else if (sscanf(s, "expect %31s", name) == 1 && strchr(s, '=')) {
			struct buf *b = find_buf(tc, name);
			if (!b) {
				ret = (snprintf(err, errlen, "%s: expect names unknown buffer %s", path, name), -1);
				break;
			}
			b->has_expect = true;
			if (parse_values(strchr(s, '=') + 1, b->type, b->expect, b->expect_nan, &b->nexpect) < 0) {
				ret = (snprintf(err, errlen, "%s: bad value in: %s", path, s), -1);
				break;
			}
		} else {
			ret = (snprintf(err, errlen, "%s: cannot read line: %s", path, s), -1);
			break;
		}
		line = next;
	}
	if (!ret && !rest)
		ret = (snprintf(err, errlen, "%s: no code: or ptx: section", path), -1);
	if (!ret) {
		if (tmpl) {
			if (!tc->nbufs || !find_buf(tc, "out") || &tc->bufs[nin] != find_buf(tc, "out"))
				ret = (snprintf(err, errlen, "%s: template needs in lines then one out line", path), -1);
			else {
				for (unsigned i = 0; i < nin && !ret; i++)
					if (tc->bufs[i].n != tc->bufs[nin].nexpect)
						ret = (snprintf(err, errlen, "%s: %s has %u values, out has %u", path,
							       tc->bufs[i].name, tc->bufs[i].n, tc->bufs[nin].nexpect), -1);
				if (!ret)
					expand_template(tc, rest, nin);
			}
		} else {
			tc->ptx = strdup(rest);
		}
	}
	free(text);
	return ret;
}

/* ---- backends ------------------------------------------------------------------------------ */

struct backend {
	const char *name;
	int (*load)(void *h, const char *ptx, char *err, size_t errlen);
	int (*alloc)(void *h, size_t size, uint64_t *addr, char *err, size_t errlen);
	int (*write)(void *h, uint64_t addr, const void *src, size_t size, char *err, size_t errlen);
	int (*read)(void *h, uint64_t addr, void *dst, size_t size, char *err, size_t errlen);
	int (*launch)(void *h, const char *name, const unsigned grid[3], const unsigned block[3],
		      const struct spirv_arg *args, unsigned nargs, char *err, size_t errlen);
	void *h;
};

/* OpenCL through SPIR-V */
static int ocl_load(void *h, const char *ptx, char *err, size_t errlen)
{
	ir_module *m = ptx_parse(ptx, strlen(ptx), err, errlen);
	if (!m) {
		char tmp[512];
		snprintf(tmp, sizeof(tmp), "parse: %s", err);
		snprintf(err, errlen, "%s", tmp);
		return -EINVAL;
	}
	uint32_t *w;
	size_t n;
	int r = spirv_lower_module(m, NULL, &w, &n, err, errlen);
	ir_module_free(m);
	if (r < 0)
		return r;
	r = spirv_cl__load(h, w, n, err, errlen);
	free(w);
	return r;
}
static int ocl_alloc(void *h, size_t s, uint64_t *a, char *e, size_t el) { return spirv_cl__alloc(h, s, a, e, el); }
static int ocl_write(void *h, uint64_t a, const void *s, size_t n, char *e, size_t el) { return spirv_cl__write(h, a, s, n, e, el); }
static int ocl_read(void *h, uint64_t a, void *d, size_t n, char *e, size_t el) { return spirv_cl__read(h, a, d, n, e, el); }
static int ocl_launch(void *h, const char *name, const unsigned g[3], const unsigned b[3], const struct spirv_arg *a,
		      unsigned na, char *e, size_t el)
{
	return spirv_cl__launch(h, name, g, b, a, na, e, el);
}

/* CUDA driver API through dlopen: the few entry points the suite needs. */
typedef int CUresult;
static struct {
	void *lib;
	CUresult (*init)(unsigned);
	CUresult (*device_get)(int *, int);
	CUresult (*ctx_create)(void **, unsigned, int);
	CUresult (*module_load)(void **, const void *);
	CUresult (*module_unload)(void *);
	CUresult (*get_function)(void **, void *, const char *);
	CUresult (*mem_alloc)(uint64_t *, size_t);
	CUresult (*htod)(uint64_t, const void *, size_t);
	CUresult (*dtoh)(void *, uint64_t, size_t);
	CUresult (*launch)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *,
			   void **, void **);
	CUresult (*sync)(void);
	void *ctx, *mod;
} cu;

static int cuda_open(char *err, size_t errlen)
{
	const char *path = getenv("GPUPROBE_REAL_LIBCUDA") ? getenv("GPUPROBE_REAL_LIBCUDA") : "libcuda.so.1";
	cu.lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!cu.lib)
		return snprintf(err, errlen, "no CUDA driver (%s cannot be opened)", path), -ENODEV;
	struct { void **p; const char *s; } syms[] = {
		{(void **)&cu.init, "cuInit"}, {(void **)&cu.device_get, "cuDeviceGet"},
		{(void **)&cu.ctx_create, "cuCtxCreate_v2"}, {(void **)&cu.module_load, "cuModuleLoadData"},
		{(void **)&cu.module_unload, "cuModuleUnload"}, {(void **)&cu.get_function, "cuModuleGetFunction"},
		{(void **)&cu.mem_alloc, "cuMemAlloc_v2"}, {(void **)&cu.htod, "cuMemcpyHtoD_v2"},
		{(void **)&cu.dtoh, "cuMemcpyDtoH_v2"}, {(void **)&cu.launch, "cuLaunchKernel"},
		{(void **)&cu.sync, "cuCtxSynchronize"},
	};
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++)
		if (!(*syms[i].p = dlsym(cu.lib, syms[i].s)))
			return snprintf(err, errlen, "the CUDA driver lacks %s", syms[i].s), -ENODEV;
	int dev;
	CUresult r;
	if ((r = cu.init(0)) || (r = cu.device_get(&dev, 0)))
		return snprintf(err, errlen, "no CUDA device (error %d)", r), -ENODEV;
	if ((r = cu.ctx_create(&cu.ctx, 0, dev)))
		return snprintf(err, errlen, "cuCtxCreate failed (error %d)", r), -EIO;
	return 0;
}
static int cuda_load(void *h, const char *ptx, char *err, size_t errlen)
{
	if (cu.mod)
		cu.module_unload(cu.mod), cu.mod = NULL;
	CUresult r = cu.module_load(&cu.mod, ptx);
	return r ? (snprintf(err, errlen, "cuModuleLoadData failed (error %d)", r), -EINVAL) : 0;
}
static int cuda_alloc(void *h, size_t s, uint64_t *a, char *err, size_t errlen)
{
	CUresult r = cu.mem_alloc(a, s ? s : 1);
	return r ? (snprintf(err, errlen, "cuMemAlloc failed (error %d)", r), -ENOMEM) : 0;
}
static int cuda_write(void *h, uint64_t a, const void *s, size_t n, char *err, size_t errlen)
{
	CUresult r = cu.htod(a, s, n);
	return r ? (snprintf(err, errlen, "cuMemcpyHtoD failed (error %d)", r), -EIO) : 0;
}
static int cuda_read(void *h, uint64_t a, void *d, size_t n, char *err, size_t errlen)
{
	CUresult r = cu.dtoh(d, a, n);
	return r ? (snprintf(err, errlen, "cuMemcpyDtoH failed (error %d)", r), -EIO) : 0;
}
static int cuda_launch(void *h, const char *name, const unsigned g[3], const unsigned b[3], const struct spirv_arg *a,
		       unsigned na, char *err, size_t errlen)
{
	void *f;
	CUresult r = cu.get_function(&f, cu.mod, name);
	if (r)
		return snprintf(err, errlen, "no kernel %s (error %d)", name, r), -ENOENT;
	void *params[16];
	for (unsigned i = 0; i < na && i < 16; i++)
		params[i] = (void *)a[i].data;
	r = cu.launch(f, g[0], g[1], g[2], b[0], b[1], b[2], 0, NULL, params, NULL);
	if (!r)
		r = cu.sync();
	return r ? (snprintf(err, errlen, "launch failed (error %d)", r), -EIO) : 0;
}

/* ---- running --------------------------------------------------------------------------------- */

static bool value_matches(const struct buf *b, unsigned i, uint64_t got)
{
	if (b->type[0] == 'f' && b->expect_nan[i]) {
		if (!strcmp(b->type, "f32")) {
			uint32_t g = (uint32_t)got;
			return (g & 0x7f800000u) == 0x7f800000u && (g & 0x7fffffu);
		}
		return (got & 0x7ff0000000000000ull) == 0x7ff0000000000000ull && (got & 0xfffffffffffffull);
	}
	return got == b->expect[i];
}

static void format_value(const struct buf *b, uint64_t v, char *out, size_t n)
{
	if (!strcmp(b->type, "f32")) {
		uint32_t r = (uint32_t)v;
		float f;
		memcpy(&f, &r, 4);
		snprintf(out, n, "%.9g (bits:0x%08x)", f, r);
	} else if (!strcmp(b->type, "f64")) {
		double d;
		memcpy(&d, &v, 8);
		snprintf(out, n, "%.17g (bits:0x%016llx)", d, (unsigned long long)v);
	} else if (b->type[0] == 's') {
		unsigned bits = type_bytes(b->type) * 8;
		int64_t s = bits < 64 ? (int64_t)(v << (64 - bits)) >> (64 - bits) : (int64_t)v;
		snprintf(out, n, "%lld", (long long)s);
	} else {
		snprintf(out, n, "0x%llx", (unsigned long long)v);
	}
}

static int run_case(struct backend *be, struct tcase *tc, char *err, size_t errlen)
{
	int r = be->load(be->h, tc->ptx, err, errlen);
	if (r < 0)
		return r;
	struct spirv_arg args[MAXB];
	uint64_t addrs[MAXB], scal[MAXB][64];
	for (unsigned i = 0; i < tc->nbufs; i++) {
		struct buf *b = &tc->bufs[i];
		unsigned eb = type_bytes(b->type);
		if (b->is_scalar) { /* a scalar, or a struct's bytes packed from its values */
			for (unsigned k = 0; k < b->n; k++)
				memcpy((unsigned char *)scal[i] + (size_t)k * eb, &b->vals[k], eb);
			args[i] = (struct spirv_arg){scal[i], (size_t)eb * b->n};
			continue;
		}
		size_t size = (size_t)eb * (b->n ? b->n : 1);
		unsigned char *host = calloc(1, size);
		for (unsigned k = 0; k < b->n; k++)
			memcpy(host + (size_t)k * eb, &b->vals[k], eb);
		r = be->alloc(be->h, size, &addrs[i], err, errlen);
		if (!r)
			r = be->write(be->h, addrs[i], host, size, err, errlen);
		free(host);
		if (r < 0)
			return r;
		args[i] = (struct spirv_arg){&addrs[i], 8};
	}
	for (unsigned k = 0; k < tc->nptrs; k++) /* a buffer's device address into another's bytes */
		if ((r = be->write(be->h, addrs[tc->ptrs[k].dst] + tc->ptrs[k].off, &addrs[tc->ptrs[k].src], 8, err, errlen)) < 0)
			return r;
	if ((r = be->launch(be->h, tc->kernel, tc->grid, tc->block, args, tc->nbufs, err, errlen)) < 0)
		return r;
	for (unsigned i = 0; i < tc->nbufs; i++) {
		struct buf *b = &tc->bufs[i];
		if (!b->has_expect)
			continue;
		unsigned eb = type_bytes(b->type);
		unsigned char *host = calloc(b->nexpect ? b->nexpect : 1, eb);
		r = be->read(be->h, addrs[i], host, (size_t)eb * b->nexpect, err, errlen);
		if (r < 0) {
			free(host);
			return r;
		}
		for (unsigned k = 0; k < b->nexpect; k++) {
			uint64_t got = 0;
			memcpy(&got, host + (size_t)k * eb, eb);
			if (!value_matches(b, k, got)) {
				char g[64], x[64];
				format_value(b, got, g, sizeof(g));
				format_value(b, b->expect[k], x, sizeof(x));
				if (b->expect_nan[k])
					snprintf(x, sizeof(x), "nan");
				snprintf(err, errlen, "%s[%u] = %s, expected %s", b->name, k, g, x);
				free(host);
				return 1;
			}
		}
		free(host);
	}
	return 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv)
{
	const char *backend = "opencl";
	bool verbose = false;
	const char *dump = NULL; /* write each case's PTX there (for ptxas checks) */
	char **paths = calloc((size_t)argc * 512 + 1, sizeof(char *));
	size_t npaths = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--backend") && i + 1 < argc) {
			backend = argv[++i];
		} else if (!strcmp(argv[i], "--dump") && i + 1 < argc) {
			dump = argv[++i];
		} else if (!strcmp(argv[i], "-v")) {
			verbose = true;
		} else {
			DIR *d = opendir(argv[i]);
			if (!d) {
				paths[npaths++] = strdup(argv[i]);
				continue;
			}
			for (struct dirent *e; (e = readdir(d));) {
				size_t l = strlen(e->d_name);
				if (l > 5 && !strcmp(e->d_name + l - 5, ".case") && npaths < (size_t)argc * 512) {
					char *p = malloc(strlen(argv[i]) + l + 2);
					sprintf(p, "%s/%s", argv[i], e->d_name);
					paths[npaths++] = p;
				}
			}
			closedir(d);
		}
	}
	qsort(paths, npaths, sizeof(*paths), cmp_str);
	char err[1024];
	struct backend be;
	if (!strcmp(backend, "opencl")) {
		spirv_cl *cl;
		if (spirv_cl__open(&cl, err, sizeof(err)) < 0) {
			printf("SKIP: %s\n", err);
			return 77;
		}
		printf("backend: OpenCL device %s, SPIR-V route %s\n", spirv_cl__device_name(cl), spirv_cl__route(cl));
		printf("sub-groups: %s; warp collectives are emulated with work-group memory\n", spirv_cl__subgroups(cl));
		be = (struct backend){"opencl", ocl_load, ocl_alloc, ocl_write, ocl_read, ocl_launch, cl};
	} else if (!strcmp(backend, "cuda")) {
		if (cuda_open(err, sizeof(err)) < 0) {
			printf("SKIP: %s\n", err);
			return 77;
		}
		printf("backend: CUDA driver, PTX loaded as is\n");
		be = (struct backend){"cuda", cuda_load, cuda_alloc, cuda_write, cuda_read, cuda_launch, NULL};
	} else {
		fprintf(stderr, "spirv_conformance: unknown backend %s (opencl or cuda)\n", backend);
		return 2;
	}
	unsigned pass = 0, fail = 0;
	for (size_t i = 0; i < npaths; i++) {
		struct tcase *tc = calloc(1, sizeof(*tc));
		int r = load_case(paths[i], tc, err, sizeof(err));
		if (r == 0 && dump) {
			char p[512];
			snprintf(p, sizeof(p), "%s/%s.ptx", dump, tc->name);
			FILE *f = fopen(p, "w");
			if (f) {
				fputs(tc->ptx, f);
				fclose(f);
			}
		}
		if (r == 0 && tc->only[0] && strcmp(tc->only, be.name)) {
			printf("SKIP %s: for the %s backend only\n", tc->name, tc->only);
			free(tc->ptx);
			free(tc);
			free(paths[i]);
			continue;
		}
		if (r == 0)
			r = run_case(&be, tc, err, sizeof(err));
		if (r == 0) {
			pass++;
			printf("PASS %s\n", tc->name);
		} else {
			fail++;
			printf("FAIL %s: %s\n", tc->name, err);
			if (verbose && tc->ptx)
				printf("%s\n", tc->ptx);
		}
		free(tc->ptx);
		free(tc);
		free(paths[i]);
	}
	free(paths);
	if (!strcmp(be.name, "opencl"))
		spirv_cl__close(be.h);
	printf("%u passed, %u failed\n", pass, fail);
	return fail ? 1 : 0;
}
