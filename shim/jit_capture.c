/* The record store of PTX behind JIT-made cubins (jit_capture.h). */
#include "shim/jit_capture.h"
#include "shim/cubin_cache.h"
#include "shim/sha256.h"
#include "common/safe_open.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define RECORD_MAGIC "gpuprobe jit ptx 1\n"
#define RECORD_MAX ((size_t)1 << 30)

static void hex(const uint8_t h[32], char out[65])
{
	for (int i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", h[i]);
}

void jit_capture_hash(const void *cubin, size_t size, uint8_t out[32])
{
	struct gp_sha256 s;
	gp_sha256_init(&s);
	gp_sha256_update(&s, cubin, size);
	gp_sha256_final(&s, out);
}

void jit_record_free(struct jit_record *r)
{
	free(r->options);
	free(r->ptx);
	r->options = r->ptx = NULL;
}

static int open_dir(char *dir, size_t len, char *why, size_t whylen)
{
	char w[256] = "";
	int rc = cubin_cache_dir(dir, len, w, sizeof(w));
	if (rc) {
		snprintf(why, whylen, "cache directory %s: %s", dir[0] ? dir : "(none)", w);
		return rc;
	}
	int fd = gp_dir_open(dir, 0, w, sizeof(w));
	if (fd < 0)
		snprintf(why, whylen, "cache directory %s: %s", dir, w);
	return fd;
}

int jit_capture_put(const uint8_t hash[32], const struct jit_record *r, char *why, size_t whylen)
{
	char tmp[1];
	if (!why) {
		why = tmp;
		whylen = sizeof(tmp);
	}
	if (!r->ptx || !r->ptx_len || r->ptx_len > RECORD_MAX) {
		snprintf(why, whylen, "no PTX");
		return -EINVAL;
	}
	char dir[PATH_MAX];
	int dfd = open_dir(dir, sizeof(dir), why, whylen);
	if (dfd < 0)
		return dfd;
	uint8_t ph[32];
	char phex[65], khex[65];
	jit_capture_hash(r->ptx, r->ptx_len, ph);
	hex(ph, phex);
	hex(hash, khex);
	/* One line of options: newlines (an --input-as-string PTX) become spaces. */
	char opts[2048] = "";
	if (r->options)
		snprintf(opts, sizeof(opts), "%s", r->options);
	for (char *c = opts; *c; c++)
		if (*c == '\n' || *c == '\r')
			*c = ' ';
	char head[3072];
	int n = snprintf(head, sizeof(head),
			 RECORD_MAGIC "source %s\narch %s\nopt %d\nmaxrregcount %d\nlineinfo %d\n"
			 "debug %d\nrelocatable %d\noptions %s\nptx_bytes %zu\nptx_sha256 %s\n\n",
			 r->source, r->arch, r->opt, r->maxrregcount, r->lineinfo, r->debug,
			 r->relocatable, opts, r->ptx_len, phex);
	if (n < 0 || (size_t)n >= sizeof(head)) {
		close(dfd);
		snprintf(why, whylen, "header too long");
		return -ENAMETOOLONG;
	}
	char name[80];
	snprintf(name, sizeof(name), "%s.jitptx", khex);
	struct iovec iov[2] = {{head, (size_t)n}, {r->ptx, r->ptx_len}};
	int rc = gp_write_file_at(dfd, name, iov, 2);
	close(dfd);
	if (rc)
		snprintf(why, whylen, "%s/%s: %s", dir, name, strerror(-rc));
	return rc;
}

/* "key value\n" at *p: the value (NUL-terminated in place), *p past the line; NULL when the
 * line is not key's. */
static char *field(char **p, char *end, const char *key)
{
	size_t kl = strlen(key);
	char *nl = memchr(*p, '\n', (size_t)(end - *p));
	if (!nl || (size_t)(nl - *p) < kl + 1 || memcmp(*p, key, kl) || (*p)[kl] != ' ')
		return NULL;
	*nl = 0;
	char *v = *p + kl + 1;
	*p = nl + 1;
	return v;
}

static int num(const char *v, int *out)
{
	char *e;
	long x = v ? strtol(v, &e, 10) : 0;
	if (!v || e == v || *e || x < -1 || x > INT_MAX)
		return -1;
	*out = (int)x;
	return 0;
}

int jit_capture_get(const uint8_t hash[32], struct jit_record *r, char *path, size_t pathlen)
{
	memset(r, 0, sizeof(*r));
	char dir[PATH_MAX], why[256];
	int dfd = open_dir(dir, sizeof(dir), why, sizeof(why));
	if (dfd < 0)
		return dfd;
	char khex[65], name[80];
	hex(hash, khex);
	snprintf(name, sizeof(name), "%s.jitptx", khex);
	if (path)
		snprintf(path, pathlen, "%s/%s", dir, name);
	int fd = gp_openat_read(dfd, name, NULL, 0);   /* no link, regular, the user's own */
	close(dfd);
	if (fd < 0)
		return fd;
	void *buf = NULL;
	size_t len = 0;
	int rc = gp_read_all(fd, RECORD_MAX + 4096, &buf, &len);
	close(fd);
	if (rc)
		return rc;
	char *p = buf, *end = p + len;
	char *v;
	int ok = len > sizeof(RECORD_MAGIC) && !memcmp(p, RECORD_MAGIC, sizeof(RECORD_MAGIC) - 1);
	p += sizeof(RECORD_MAGIC) - 1;
	size_t bytes = 0;
	char *ptxsha = NULL;
	if (ok && (ok = (v = field(&p, end, "source")) != NULL))
		snprintf(r->source, sizeof(r->source), "%s", v);
	if (ok && (ok = (v = field(&p, end, "arch")) != NULL))
		snprintf(r->arch, sizeof(r->arch), "%s", v);
	ok = ok && !num(field(&p, end, "opt"), &r->opt);
	ok = ok && !num(field(&p, end, "maxrregcount"), &r->maxrregcount);
	ok = ok && !num(field(&p, end, "lineinfo"), &r->lineinfo);
	ok = ok && !num(field(&p, end, "debug"), &r->debug);
	ok = ok && !num(field(&p, end, "relocatable"), &r->relocatable);
	if (ok && (ok = (v = field(&p, end, "options")) != NULL))
		r->options = strdup(v);
	if (ok && (ok = (v = field(&p, end, "ptx_bytes")) != NULL))
		bytes = strtoull(v, NULL, 10);
	ok = ok && (ptxsha = field(&p, end, "ptx_sha256")) != NULL;
	ok = ok && p < end && *p == '\n' && (size_t)(end - p - 1) == bytes && bytes;
	if (ok) {
		p++;
		uint8_t ph[32];
		char phex[65];
		jit_capture_hash(p, bytes, ph);
		hex(ph, phex);
		ok = !strcmp(phex, ptxsha);
	}
	if (ok && (r->ptx = malloc(bytes + 1))) {
		memcpy(r->ptx, p, bytes);
		r->ptx[bytes] = 0;
		r->ptx_len = bytes;
	}
	free(buf);
	if (!ok || !r->ptx) {
		jit_record_free(r);
		return ok ? -ENOMEM : -EBADMSG;
	}
	return 0;
}

/* ---- options ------------------------------------------------------------------------------ */

/* An "-O3", "-arch=sm_90", "--maxrregcount 64" style option (name without dashes, its value or
 * NULL) into r. */
static void take(struct jit_record *r, const char *name, const char *val)
{
	if (!strcmp(name, "O") || !strcmp(name, "opt-level")) {
		if (val && *val >= '0' && *val <= '9')
			r->opt = atoi(val);
	} else if (!strcmp(name, "arch") || !strcmp(name, "gpu-name") || !strcmp(name, "gpu-architecture")) {
		if (val)
			snprintf(r->arch, sizeof(r->arch), "%s", val);
	} else if (!strcmp(name, "maxrregcount")) {
		if (val && *val >= '0' && *val <= '9')
			r->maxrregcount = atoi(val);
	} else if (!strcmp(name, "lineinfo") || !strcmp(name, "generate-line-info")) {
		r->lineinfo = 1;
	} else if (!strcmp(name, "g") || !strcmp(name, "device-debug") || !strcmp(name, "G")) {
		r->debug = 1;
	} else if (!strcmp(name, "c") || !strcmp(name, "compile-only")) {
		r->relocatable = 1;
	}
}

/* ptxas options that take the next argument as their value (unless given as NAME=VALUE). */
static const char *const with_value[] = {
	"Ofast-compile", "Ofc", "allow-expensive-optimizations", "device-function-maxrregcount",
	"func-maxrregcount", "device-stack-protector", "entry", "e", "fmad", "gpu-name", "arch",
	"input-as-string", "ias", "machine", "m", "maxntid", "maxrregcount", "minnctapersm",
	"opt-level", "O", "options-file", "optf", "output-file", "o", "position-independent-code",
	"pic", "register-usage-level", "regUsageLevel", "sanitize", "split-compile",
	"def-load-cache", "dlcm", "def-store-cache", "dscm", "force-load-cache", "flcm",
	"force-store-cache", "fscm",
};

static int takes_value(const char *name)
{
	for (size_t i = 0; i < sizeof(with_value) / sizeof(with_value[0]); i++)
		if (!strcmp(name, with_value[i]))
			return 1;
	return 0;
}

static char *join(int argc, char *const argv[])
{
	size_t n = 1;
	for (int i = 0; i < argc; i++)
		n += strlen(argv[i]) + 1;
	char *s = malloc(n), *p = s;
	if (!s)
		return NULL;
	*p = 0;
	for (int i = 0; i < argc; i++)
		p += sprintf(p, "%s%s", i ? " " : "", argv[i]);
	return s;
}

int jit_capture_parse_ptxas(int argc, char *const argv[], struct jit_record *r, const char **input,
			    const char **ptx_string, const char **output)
{
	*input = *ptx_string = NULL;
	*output = "elf.o";
	r->opt = -1;
	int bad = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (a[0] != '-' || !a[1]) {
			if (*input)
				bad = 1;   /* two inputs: not a line we follow */
			*input = a;
			continue;
		}
		const char *name = a + (a[1] == '-' ? 2 : 1);
		char nm[64];
		const char *eq = strchr(name, '=');
		const char *val = NULL;
		size_t nl = eq ? (size_t)(eq - name) : strlen(name);
		if (nl >= sizeof(nm))
			continue;
		memcpy(nm, name, nl);
		nm[nl] = 0;
		if (eq) {
			val = eq + 1;
		} else if (nm[0] == 'O' && nm[1] >= '0' && nm[1] <= '9') {   /* -O3 */
			val = name + 1;
			nm[1] = 0;
		} else if (takes_value(nm)) {
			if (i + 1 >= argc)
				return -1;
			val = argv[++i];
		}
		if (!strcmp(nm, "o") || !strcmp(nm, "output-file"))
			*output = val;
		else if (!strcmp(nm, "input-as-string") || !strcmp(nm, "ias"))
			*ptx_string = val;
		else if (!strcmp(nm, "options-file") || !strcmp(nm, "optf"))
			bad = 1;   /* options we do not see */
		else if (!strcmp(nm, "version") || !strcmp(nm, "V") || !strcmp(nm, "help") ||
			 !strcmp(nm, "h") || !strcmp(nm, "list-version") || !strcmp(nm, "version-ls"))
			bad = 1;   /* no compile */
		else
			take(r, nm, val);
	}
	if (*input && *ptx_string)
		bad = 1;
	r->options = join(argc - 1, argv + 1);
	snprintf(r->source, sizeof(r->source), "ptxas");
	return bad || (!*input && !*ptx_string) ? -1 : 0;
}

void jit_capture_parse_opts(int n, const char *const *opts, struct jit_record *r)
{
	r->opt = -1;
	size_t len = 1;
	for (int i = 0; i < n; i++)
		len += (opts[i] ? strlen(opts[i]) : 0) + 1;
	free(r->options);
	r->options = malloc(len);
	if (r->options)
		r->options[0] = 0;
	for (int i = 0; i < n; i++) {
		const char *a = opts[i];
		if (!a)
			continue;
		if (r->options)
			strcat(strcat(r->options, i ? " " : ""), a);
		if (a[0] != '-')
			continue;
		const char *name = a + (a[1] == '-' ? 2 : 1);
		char nm[64];
		const char *eq = strchr(name, '=');
		size_t nl = eq ? (size_t)(eq - name) : strlen(name);
		if (nl >= sizeof(nm))
			continue;
		memcpy(nm, name, nl);
		nm[nl] = 0;
		const char *val = eq ? eq + 1 : NULL;
		if (!eq && nm[0] == 'O' && nm[1] >= '0' && nm[1] <= '9') {
			val = name + 1;
			nm[1] = 0;
		}
		/* NVRTC: -arch=sm_90 / --gpu-architecture=; nvJitLink: -arch=sm_90, -O3, -lineinfo,
		 * -g; NVRTC's -lineinfo, -G. Its -maxrregcount=N too. */
		take(r, nm, val);
	}
}
