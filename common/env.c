/* The environment table (env.h). One row per variable; every reader in gpuprobe goes through
 * here so that the secure-mode rule, the range checks and the one line about a bad value are
 * decided once. */
#include "common/env.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

enum type { T_FLAG, T_UINT, T_ADDR, T_PATH, T_STR, T_CHOICE };

struct var {
	const char *name;
	enum type type;
	const char *dflt;       /* value when unset (numbers, flags, choices) */
	const char *bad;        /* value when the given one is rejected (NULL: dflt) */
	uint64_t min, max;      /* numbers: inclusive range */
	uint64_t align;         /* addresses: alignment (0 is always accepted: "no fixed address") */
	const char *choices;    /* choices: '|'-separated */
	const char *expect;     /* what the one line says was expected */
};

/* The map ranges (shim/probes_alloc.c): device at ADDR (64 GiB), host 1 TiB above (64 GiB); both
 * must lie in the 47-bit user address space, which also rules out any value that wraps. */
#define MAP_VA_TOP ((1ull << 47) - (1ull << 40) - (64ull << 30))

static const struct var vars[GP_VAR__COUNT] = {
	[GP_VAR_LOG] = {"GPUPROBE_LOG", T_FLAG, "0"},
	[GP_VAR_REAL_LIBCUDA] = {"GPUPROBE_REAL_LIBCUDA", T_PATH},
	[GP_VAR_SHIM] = {"GPUPROBE_SHIM", T_PATH},
	[GP_VAR_PROBES] = {"GPUPROBE_PROBES", T_PATH},
	[GP_VAR_CONFIG] = {"GPUPROBE_CONFIG", T_PATH},
	[GP_VAR_JSON] = {"GPUPROBE_JSON", T_PATH},
	[GP_VAR_RUN_PID] = {"GPUPROBE_RUN_PID", T_UINT, "0", NULL, 1, 4194304, 0, NULL,
			    "a process ID"},
	[GP_VAR_INTERVAL] = {"GPUPROBE_INTERVAL", T_UINT, "0", NULL, 0, 86400, 0, NULL,
			     "a whole number from 0 to 86400"},
	[GP_VAR_TOP] = {"GPUPROBE_TOP", T_UINT, "0", NULL, 0, 1000000, 0, NULL,
			"a whole number from 0 to 1000000"},
	[GP_VAR_DUMP_DIR] = {"GPUPROBE_DUMP_DIR", T_PATH},
	[GP_VAR_CACHE] = {"GPUPROBE_CACHE", T_FLAG, "1"},
	[GP_VAR_CACHE_DIR] = {"GPUPROBE_CACHE_DIR", T_PATH},
	[GP_VAR_PRECOMPILE] = {"GPUPROBE_PRECOMPILE", T_CHOICE, "check", "0", 0, 0, 0,
			       "check|link|0", "check, link or 0"},
	[GP_VAR_MAP_VA] = {"GPUPROBE_MAP_VA", T_ADDR, "0x600000000000", NULL, 0, MAP_VA_TOP,
			   2u << 20, NULL, "0 or a 2 MiB-aligned address up to 0x7ef000000000"},
	[GP_VAR_ROUNDTRIP] = {"GPUPROBE_ROUNDTRIP", T_FLAG, "0"},
	[GP_VAR_TEST_FAULT] = {"GPUPROBE_TEST_FAULT", T_STR},   /* steps: shim/fault.c parses */
	[GP_VAR_LAZY] = {"GPUPROBE_LAZY", T_FLAG, "1"},
	[GP_VAR_CLOCK_INTERVAL] = {"GPUPROBE_CLOCK_INTERVAL", T_UINT, "5", NULL, 0, 86400, 0, NULL,
				   "seconds from 0 to 86400"},
	[GP_VAR_CLOCK] = {"GPUPROBE_CLOCK", T_FLAG, "1"},
	[GP_VAR_TEST_SECURE] = {"GPUPROBE_TEST_SECURE", T_FLAG, "0"},
	[GP_VAR_INLINE] = {"GPUPROBE_INLINE", T_FLAG, "1"},
	[GP_VAR_INLINE_GROWTH] = {"GPUPROBE_INLINE_GROWTH", T_UINT, "2", NULL, 1, 1000, 0, NULL,
				  "a whole number from 1 to 1000"},
	[GP_VAR_AGGREGATE] = {"GPUPROBE_AGGREGATE", T_FLAG, "1"},
	[GP_VAR_SHARED_CHECK] = {"GPUPROBE_SHARED_CHECK", T_FLAG, "0"},
	[GP_VAR_DEFER] = {"GPUPROBE_DEFER", T_FLAG, "1"},
	[GP_VAR_HASH_CACHE] = {"GPUPROBE_HASH_CACHE", T_FLAG, "1"},
	[GP_VAR_CL_DEVICE] = {"GPUPROBE_CL_DEVICE", T_UINT, "0", NULL, 0, 4096, 0, NULL,
			      "a device index from 0 to 4096"},
	[GP_VAR_CL_NO_IL] = {"GPUPROBE_CL_NO_IL", T_FLAG, "0"},
	[GP_VAR_SPIRV_NO_LOCKSTEP] = {"GPUPROBE_SPIRV_NO_LOCKSTEP", T_FLAG, "0"},
	[GP_VAR_LLVM_SPIRV] = {"GPUPROBE_LLVM_SPIRV", T_PATH},
	[GP_VAR_BACKEND] = {"GPUPROBE_BACKEND", T_CHOICE, "auto", "auto", 0, 0, 0, "auto|nvidia|opencl|levelzero|hip",
			    "auto, nvidia, opencl, levelzero or hip"},
	[GP_VAR_LAUNCH_SKIP] = {"GPUPROBE_LAUNCH_SKIP", T_UINT, "0", NULL, 0, 4294967295u, 0, NULL,
				"a whole number from 0 to 4294967295"},
	[GP_VAR_LAUNCH_COUNT] = {"GPUPROBE_LAUNCH_COUNT", T_UINT, "0", NULL, 0, 4294967295u, 0, NULL,
				 "a whole number from 0 to 4294967295"},
	[GP_VAR_XDG_CACHE_HOME] = {"XDG_CACHE_HOME", T_PATH},
	[GP_VAR_HOME] = {"HOME", T_PATH},
	[GP_VAR_REAL_PTXAS] = {"GPUPROBE_REAL_PTXAS", T_PATH},
	[GP_VAR_REAL_NVRTC] = {"GPUPROBE_REAL_NVRTC", T_PATH},
	[GP_VAR_REAL_NVJITLINK] = {"GPUPROBE_REAL_NVJITLINK", T_PATH},
	[GP_VAR_SEGMENT_DIR] = {"GPUPROBE_SEGMENT_DIR", T_PATH},
	[GP_VAR_CAPTURE] = {"GPUPROBE_CAPTURE", T_PATH},
	[GP_VAR_CAPTURE_WRITE] = {"GPUPROBE_CAPTURE_WRITE", T_CHOICE, "mapped", "mapped", 0, 0, 0, "mapped|pwritev",
				  "mapped or pwritev"},
	[GP_VAR_CUDADEVRT] = {"GPUPROBE_CUDADEVRT", T_STR},   /* "auto" or a path: device_runtime.c */
	[GP_VAR_LLVM_CACHE] = {"GPUPROBE_LLVM_CACHE", T_PATH},
	[GP_VAR_LLVM_LOWER] = {"GPUPROBE_LLVM_LOWER", T_PATH},
	[GP_VAR_LLVM_ARCH] = {"GPUPROBE_LLVM_ARCH", T_STR},
	[GP_VAR_LLVM_GENERIC] = {"GPUPROBE_LLVM_GENERIC", T_FLAG, "0"},
	[GP_VAR_LD_LLD] = {"GPUPROBE_LD_LLD", T_PATH},
	[GP_VAR_HIP_LIB] = {"GPUPROBE_HIP_LIB", T_PATH},
	[GP_VAR_HIP_ARCH] = {"GPUPROBE_HIP_ARCH", T_STR},
	[GP_VAR_HIP_COV] = {"GPUPROBE_HIP_COV", T_CHOICE, "auto", "auto", 0, 0, 0, "auto|4|5|6", "auto, 4, 5 or 6"},
	[GP_VAR_AMDGPU_LOWER] = {"GPUPROBE_AMDGPU_LOWER", T_PATH},
};

/* Each variable's line is said once per process (a bit per variable). */
static uint64_t said;
_Static_assert(GP_VAR__COUNT <= 64, "one bit of 'said' per variable: make it an array");

static void say_once(enum gp_var v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say_once(enum gp_var v, const char *fmt, ...)
{
	uint64_t bit = 1ull << v;
	if (__atomic_fetch_or(&said, bit, __ATOMIC_RELAXED) & bit)
		return;
	char line[512];
	int n = snprintf(line, sizeof(line), "gpuprobe: ");
	va_list ap;
	va_start(ap, fmt);
	int m = vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	va_end(ap);
	if (m < 0)
		return;
	n += m;
	if (n > (int)sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	ssize_t w = write(STDERR_FILENO, line, (size_t)n);   /* one write: lines never interleave */
	(void)w;
}

const char *gp_env_name(enum gp_var v) { return v < GP_VAR__COUNT ? vars[v].name : "?"; }

int gp_env_secure(void)
{
	if (getauxval(AT_SECURE))
		return 1;
	/* Read directly, not through gp_env_flag (which would recurse): a test knob that only ever
	 * makes gpuprobe stricter. */
	const char *t = secure_getenv("GPUPROBE_TEST_SECURE");
	return t && !strcmp(t, "1");
}

const char *gp_env_str(enum gp_var v)
{
	if (v >= GP_VAR__COUNT)
		return NULL;
	/* getenv only to tell the user a value was there: secure_getenv decides what is used. */
	const char *given = getenv(vars[v].name);
	if (!given || !*given)
		return NULL;
	if (gp_env_secure() && v != GP_VAR_HOME && v != GP_VAR_XDG_CACHE_HOME) {
		say_once(v, "%s ignored: a setuid or setgid process honours no gpuprobe setting",
			 vars[v].name);
		return NULL;
	}
	if (gp_env_secure())
		return NULL;
	return secure_getenv(vars[v].name);
}

static int parse_flag(const char *s)
{
	static const char *const on[] = {"1", "yes", "true", "on"}, *const off[] = {"0", "no", "false", "off"};
	for (int i = 0; i < 4; i++) {
		if (!strcasecmp(s, on[i]))
			return 1;
		if (!strcasecmp(s, off[i]))
			return 0;
	}
	return -1;
}

int gp_env_flag(enum gp_var v)
{
	if (v >= GP_VAR__COUNT || vars[v].type != T_FLAG)
		return 0;
	int dflt = parse_flag(vars[v].dflt);
	const char *s = gp_env_str(v);
	if (!s)
		return dflt;
	int f = parse_flag(s);
	if (f < 0) {
		say_once(v, "%s=%s: expected 1 or 0; using %d", vars[v].name, s, dflt);
		return dflt;
	}
	return f;
}

/* Decimal, or 0x hexadecimal for addresses; nothing else (no sign, no spaces, no suffix), and
 * no overflow: strtoull's own acceptance of "-1" and leading blanks is ruled out first. */
static int parse_u64(const char *s, int hex_ok, uint64_t *out)
{
	int base = 10;
	if (hex_ok && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (!*s)
		return -EINVAL;
	uint64_t v = 0;
	for (; *s; s++) {
		unsigned d;
		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = (unsigned)(*s - 'a' + 10);
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = (unsigned)(*s - 'A' + 10);
		else
			return -EINVAL;
		if (v > (UINT64_MAX - d) / (uint64_t)base)
			return -ERANGE;
		v = v * (uint64_t)base + d;
	}
	*out = v;
	return 0;
}

static int number_ok(const struct var *d, const char *s, uint64_t *out)
{
	uint64_t v;
	if (parse_u64(s, d->type == T_ADDR, &v))
		return -EINVAL;
	if (d->type == T_ADDR && v == 0) {
		*out = 0;
		return 0;
	}
	if (v < d->min || v > d->max || (d->align && v % d->align))
		return -EINVAL;
	*out = v;
	return 0;
}

int gp_env_uint_try(enum gp_var v, uint64_t *out, char *err, size_t errlen)
{
	const struct var *d = &vars[v < GP_VAR__COUNT ? v : 0];
	uint64_t dflt = 0;
	if (v >= GP_VAR__COUNT || (d->type != T_UINT && d->type != T_ADDR))
		return -EINVAL;
	number_ok(d, d->dflt, &dflt);
	*out = dflt;
	const char *s = gp_env_str(v);
	if (!s)
		return 0;
	if (number_ok(d, s, out)) {
		*out = dflt;
		if (err && errlen)
			snprintf(err, errlen, "%s=%s: expected %s", d->name, s, d->expect);
		__atomic_fetch_or(&said, 1ull << v, __ATOMIC_RELAXED);   /* the caller says it */
		return -EINVAL;
	}
	return 1;
}

int gp_env_uint_get(enum gp_var v, uint64_t *out)
{
	char err[256];
	uint64_t bit = 1ull << (v < GP_VAR__COUNT ? v : 0);
	int first = !(__atomic_load_n(&said, __ATOMIC_RELAXED) & bit);
	int rc = gp_env_uint_try(v, out, err, sizeof(err));
	if (rc < 0 && first) {
		__atomic_fetch_and(&said, ~bit, __ATOMIC_RELAXED);
		say_once(v, "%s; using %s", err, vars[v].dflt);
	}
	return rc;
}

uint64_t gp_env_uint(enum gp_var v)
{
	uint64_t x = 0;
	gp_env_uint_get(v, &x);
	return x;
}

static int choice_index(const char *list, const char *s)
{
	size_t n = strlen(s);
	int i = 0;
	for (const char *p = list;; i++) {
		const char *bar = strchr(p, '|');
		size_t len = bar ? (size_t)(bar - p) : strlen(p);
		if (len == n && !strncmp(p, s, n))
			return i;
		if (!bar)
			return -1;
		p = bar + 1;
	}
}

int gp_env_choice(enum gp_var v)
{
	if (v >= GP_VAR__COUNT || vars[v].type != T_CHOICE)
		return 0;
	const struct var *d = &vars[v];
	const char *s = gp_env_str(v);
	if (!s)
		return choice_index(d->choices, d->dflt);
	int i = choice_index(d->choices, s);
	if (i < 0) {
		const char *bad = d->bad ? d->bad : d->dflt;
		say_once(v, "%s=%s: expected %s; using %s", d->name, s, d->expect,
			 *bad ? bad : "nothing");
		return choice_index(d->choices, bad);
	}
	return i;
}
