/* gpuprobe run --metrics [ADDR:]PORT: every map of every process's latest snapshot (run_planes.c)
 * as OpenMetrics text over HTTP (libmicrohttpd), at /metrics (any path answers the same). It runs
 * in the `gpuprobe` process, never in the application (docs/architecture.md, "Two planes"), and
 * listens on 127.0.0.1 unless ADDR names another address ("[::1]:9400" for IPv6).
 *
 * A map becomes the family gpuprobe_<map name> (characters other than [A-Za-z0-9_] as '_'):
 *   - log2 and linear histograms (gp_log2_key_t, gp_lhist_key_t, or the name rules of
 *     include/gpuprobe/output.h): a histogram, one cumulative bucket per bucket holding values,
 *     le = the largest integer it holds (as --json's "max"), then le="+Inf" and _count;
 *   - every other table or scalar: a counter when the verifier saw its values changed only by
 *     atomic adds (the maps it shards: counting probes), else a gauge; labels from the key's
 *     type: kernel="vecAdd(float*, int)" (demangled), api="cuLaunchKernel", a tuple's members
 *     (kernel, api, key<i>), key="..." for other keys; a value of several 8-byte words gets
 *     word="<i>"; per-CPU maps one series per SM with sm="<i>";
 *   - rings: gpuprobe_<name>_lost, a counter of the records lost because a ring was full.
 * Every series has pid="<process>". */
#include "cli/run.h"
#include "cli/cli.h"
#include "gpuprobe/api.h"
#include "maps/output.h"
#include "maps/output_internal.h"
#include "maps/snapshot.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

static struct MHD_Daemon *daemon_;

union addr {
	struct sockaddr sa;
	struct sockaddr_in v4;
	struct sockaddr_in6 v6;
};

/* [ADDR:]PORT: 0, or -1 with the reason in why. */
static int parse_spec(const char *spec, union addr *a, char *why, size_t whylen)
{
	char host[256] = "127.0.0.1";
	const char *port = spec;
	const char *colon = strrchr(spec, ':');
	if (spec[0] == '[') {
		const char *close = strchr(spec, ']');
		if (!close || close[1] != ':' || (size_t)(close - spec - 1) >= sizeof(host)) {
			snprintf(why, whylen, "an IPv6 address is written [ADDR]:PORT");
			return -1;
		}
		memcpy(host, spec + 1, (size_t)(close - spec - 1));
		host[close - spec - 1] = 0;
		port = close + 2;
	} else if (colon) {
		if ((size_t)(colon - spec) >= sizeof(host) || colon == spec) {
			snprintf(why, whylen, "no address before ':'");
			return -1;
		}
		memcpy(host, spec, (size_t)(colon - spec));
		host[colon - spec] = 0;
		port = colon + 1;
	}
	char *end;
	errno = 0;
	unsigned long p = *port >= '0' && *port <= '9' ? strtoul(port, &end, 10) : 0;
	if (*port < '0' || *port > '9' || *end || errno || p < 1 || p > 65535) {
		snprintf(why, whylen, "the port must be a number from 1 to 65535");
		return -1;
	}
	memset(a, 0, sizeof(*a));
	if (inet_pton(AF_INET, host, &a->v4.sin_addr) == 1) {
		a->v4.sin_family = AF_INET;
		a->v4.sin_port = htons((uint16_t)p);
	} else if (inet_pton(AF_INET6, host, &a->v6.sin6_addr) == 1) {
		a->v6.sin6_family = AF_INET6;
		a->v6.sin6_port = htons((uint16_t)p);
	} else {
		snprintf(why, whylen, "'%s' is not an IPv4 or IPv6 address", host);
		return -1;
	}
	return 0;
}

int run_metrics_check(const char *spec)
{
	union addr a;
	char why[256];
	if (parse_spec(spec, &a, why, sizeof(why))) {
		cli_error("run: --metrics %s: %s ([ADDR:]PORT, e.g. 9400 or 0.0.0.0:9400)", spec, why);
		return RUN_EXIT_USAGE;
	}
	return 0;
}

/* ---- the text ---------------------------------------------------------------------------- */

struct fam {                   /* one map of one process: a family member */
	char name[160];
	enum gp_show show;
	uint64_t step;
	const struct gp_snap *snap;
	const struct gp_snap_map *m;
	long pid;
};

struct text {
	FILE *f;
	struct fam *fams;
	size_t n, cap;
};

static void family_name(char *out, size_t len, const char *map, const char *suffix)
{
	size_t o = (size_t)snprintf(out, len, "gpuprobe_");
	while (*map == '.')   /* .printk: gpuprobe_printk_lost */
		map++;
	for (const char *p = map; *p && o + 1 < len; p++)
		out[o++] = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			(*p >= '0' && *p <= '9') || *p == '_' ? *p : '_';
	out[o] = 0;
	if (suffix)
		snprintf(out + o, len - o, "%s", suffix);
}

static void collect(void *user, const struct gp_snap *s, long pid, int is_app)
{
	(void)is_app;
	struct text *t = user;
	for (size_t i = 0; i < s->nmaps; i++) {
		const struct gp_snap_map *m = &s->maps[i];
		uint64_t step = 0;
		enum gp_show show = gp_output_classify(m->name, m->kind, m->key_size, m->print_as,
						       m->print_step, &step);
		if (show == GP_SHOW_NONE || show == GP_SHOW_GLOBAL)
			continue;
		if (t->n == t->cap) {
			size_t cap = t->cap ? t->cap * 2 : 64;
			struct fam *f = realloc(t->fams, cap * sizeof(*f));
			if (!f)
				return;
			t->fams = f;
			t->cap = cap;
		}
		struct fam *f = &t->fams[t->n++];
		f->show = show;
		f->step = step;
		f->snap = s;
		f->m = m;
		f->pid = pid;
		family_name(f->name, sizeof(f->name), m->name,
			    show == GP_SHOW_RING || show == GP_SHOW_PRINTK ? "_lost" : NULL);
	}
}

static int by_name(const void *a, const void *b)
{
	const struct fam *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : (x->pid > y->pid) - (x->pid < y->pid);
}

static const char *type_of(const struct fam *f)
{
	if (f->show == GP_SHOW_LOG2 || f->show == GP_SHOW_LINEAR)
		return "histogram";
	if (f->show == GP_SHOW_RING || f->show == GP_SHOW_PRINTK)
		return "counter";
	return f->m->flags & GP_MAPF_SHARDED ? "counter" : "gauge";
}

/* A label value, escaped as the text format says (\\, \", \n). */
static void put_value(FILE *out, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fputc('\\', out);
		if (*v == '\n')
			fputs("\\n", out);
		else
			fputc(*v, out);
	}
}

static void put_label(FILE *out, int *first, const char *name, const char *value)
{
	fprintf(out, "%s%s=\"", *first ? "" : ",", name);
	put_value(out, value);
	fputc('"', out);
	*first = 0;
}

static uint64_t as_int(const uint8_t *p, uint32_t size)
{
	uint64_t v = 0;
	memcpy(&v, p, size < 8 ? size : 8);   /* little endian hosts */
	return v;
}

static void kernel_label(const struct fam *f, uint64_t id, char *buf, size_t len)
{
	const char *mangled = gp_snap_kernel_name(f->snap, id);
	char *d = mangled ? gp_output_demangle(mangled) : NULL;
	if (d)
		snprintf(buf, len, "%s", d);
	else
		snprintf(buf, len, "kernel#%" PRIu64, id);
	free(d);
}

/* The labels of one key (without braces). */
static void key_labels(FILE *out, int *first, const struct fam *f, const uint8_t *k)
{
	const struct gp_snap_map *m = f->m;
	char buf[1024];
	switch (f->show) {
	case GP_SHOW_KERNEL:
		kernel_label(f, as_int(k, m->key_size), buf, sizeof(buf));
		put_label(out, first, "kernel", buf);
		return;
	case GP_SHOW_API: {
		uint64_t id = as_int(k, m->key_size);
		const char *n = id <= UINT32_MAX ? gp_api_name((unsigned)id) : NULL;
		if (n)
			snprintf(buf, sizeof(buf), "%s", n);
		else
			snprintf(buf, sizeof(buf), "api#%" PRIu64, id);
		put_label(out, first, "api", buf);
		return;
	}
	case GP_SHOW_SCALAR:
		if (!as_int(k, m->key_size))
			return;
		break;
	case GP_SHOW_TUPLE: {
		size_t at = 0;
		for (int i = 0; i < GP_TUPLE_MAX; i++) {
			unsigned b = (unsigned)(f->step >> (8 * i)) & 0xff;
			if (!(b & GP_TUPLE_PRESENT))
				break;
			size_t size = (size_t)1 << (b & 3);
			at = (at + size - 1) / size * size;
			if (at + size > m->key_size)
				break;
			uint64_t v = as_int(k + at, (uint32_t)size);
			at += size;
			char name[16];
			if ((b >> 2 & 3) == GP_TUPLE_KERNEL) {
				kernel_label(f, v, buf, sizeof(buf));
				snprintf(name, sizeof(name), "kernel");
			} else if ((b >> 2 & 3) == GP_TUPLE_API) {
				const char *n = v <= UINT32_MAX ? gp_api_name((unsigned)v) : NULL;
				snprintf(buf, sizeof(buf), n ? "%s" : "api#%s", n ? n : "?");
				snprintf(name, sizeof(name), "api");
			} else {
				snprintf(buf, sizeof(buf), "%" PRIu64, v);
				snprintf(name, sizeof(name), "key%d", i);
			}
			put_label(out, first, name, buf);
		}
		return;
	}
	default:
		break;
	}
	/* counts: an integer, a printable string, or hex bytes */
	uint32_t ks = m->key_size;
	if (ks == 1 || ks == 2 || ks == 4 || ks == 8) {
		snprintf(buf, sizeof(buf), "%" PRIu64, as_int(k, ks));
	} else {
		size_t sl = strnlen((const char *)k, ks);
		int printable = sl > 0 && sl < ks && sl < sizeof(buf);
		for (size_t i = 0; i < sl && printable; i++)
			printable = k[i] >= 0x20 && k[i] < 0x7f;
		if (printable) {
			memcpy(buf, k, sl);
			buf[sl] = 0;
		} else {
			size_t o = 0;
			for (uint32_t i = 0; i < ks && o + 3 < sizeof(buf); i++)
				o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%02x", k[i]);
		}
	}
	put_label(out, first, "key", buf);
}

static void put_histogram(FILE *out, const struct fam *f)
{
	const struct gp_snap_map *m = f->m;
	/* buckets by key (the snapshot's order is the map's: sort a copy of the indices) */
	size_t n = m->count;
	struct b { uint64_t key, count; } *b = calloc(n ? n : 1, sizeof(*b));
	if (!b)
		return;
	size_t nb = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t key = as_int(m->keys + i * m->key_size, m->key_size), count = 0;
		for (uint32_t c = 0; c < m->copies; c++)
			count += as_int(m->values + (i * m->copies + c) * m->value_size, m->value_size);
		if (!count || (f->show == GP_SHOW_LOG2 && key > 64))
			continue;
		b[nb++] = (struct b){key, count};
	}
	for (size_t i = 1; i < nb; i++)   /* a few dozen buckets: insertion sort */
		for (size_t j = i; j && b[j - 1].key > b[j].key; j--) {
			struct b t = b[j];
			b[j] = b[j - 1];
			b[j - 1] = t;
		}
	/* every bucket from 0 to the highest that holds values, when there are not too many: the
	 * empty ones below give histogram_quantile() its lower bounds */
	uint64_t top = nb ? b[nb - 1].key : 0;
	int contiguous = top <= 1000;
	uint64_t total = 0;
	size_t j = 0;
	for (uint64_t k = contiguous ? 0 : top + 1; contiguous ? k <= top && nb : j < nb; k++) {
		uint64_t key = contiguous ? k : b[j].key, hi;
		for (; j < nb && b[j].key <= key; j++)
			total += b[j].count;
		if (f->show == GP_SHOW_LOG2)
			hi = key <= 1 ? key : key >= 64 ? UINT64_MAX : (1ull << key) - 1;
		else
			hi = (key + 1) * f->step - 1;
		fprintf(out, "%s_bucket{pid=\"%ld\",le=\"%" PRIu64 "\"} %" PRIu64 "\n", f->name, f->pid,
			hi, total);
	}
	fprintf(out, "%s_bucket{pid=\"%ld\",le=\"+Inf\"} %" PRIu64 "\n", f->name, f->pid, total);
	fprintf(out, "%s_count{pid=\"%ld\"} %" PRIu64 "\n", f->name, f->pid, total);
	free(b);
}

static void put_table(FILE *out, const struct fam *f, const char *suffix)
{
	const struct gp_snap_map *m = f->m;
	uint32_t words = m->value_size == 1 || m->value_size == 2 || m->value_size == 4 ||
		m->value_size == 8 ? 1 : (m->value_size + 7) / 8;
	for (size_t i = 0; i < m->count; i++) {
		const uint8_t *k = m->keys + i * m->key_size;
		for (uint32_t c = 0; c < m->copies; c++) {
			const uint8_t *v = m->values + (i * m->copies + c) * m->value_size;
			for (uint32_t w = 0; w < words; w++) {
				uint64_t val = words == 1 ? as_int(v, m->value_size)
					: as_int(v + 8 * w, m->value_size - 8 * w < 8 ? m->value_size - 8 * w : 8);
				if (m->copies > 1 && !val)
					continue;   /* an SM that never touched it */
				fprintf(out, "%s%s{", f->name, suffix);
				int first = 0;
				fprintf(out, "pid=\"%ld\"", f->pid);
				key_labels(out, &first, f, k);
				char num[24];
				if (m->copies > 1) {
					snprintf(num, sizeof(num), "%u", c);
					put_label(out, &first, "sm", num);
				}
				if (words > 1) {
					snprintf(num, sizeof(num), "%u", w);
					put_label(out, &first, "word", num);
				}
				fprintf(out, "} %" PRIu64 "\n", val);
			}
		}
	}
}

static char *render(size_t *len)
{
	struct text t = {0};
	char *buf = NULL;
	FILE *out = open_memstream(&buf, len);
	if (!out)
		return NULL;
	run_planes_lock(1);   /* the snapshots stay while the text is made */
	run_planes_each(collect, &t);
	qsort(t.fams, t.n, sizeof(*t.fams), by_name);
	for (size_t i = 0; i < t.n; i++) {
		const struct fam *f = &t.fams[i];
		const char *type = type_of(f);
		int head = !i || strcmp(t.fams[i - 1].name, f->name);
		if (!head && strcmp(type_of(&t.fams[i - 1]), type))
			continue;   /* the same name in another shape: one family has one type */
		if (head) {
			fprintf(out, "# TYPE %s %s\n", f->name, type);
			fprintf(out, "# HELP %s %s map %s", f->name,
				f->show == GP_SHOW_RING || f->show == GP_SHOW_PRINTK
				? "records lost by the" : "the", f->m->name);
			fputs(f->show == GP_SHOW_LOG2 ? " (log2 histogram)\n"
			      : f->show == GP_SHOW_LINEAR ? " (linear histogram)\n" : "\n", out);
		}
		if (f->show == GP_SHOW_LOG2 || f->show == GP_SHOW_LINEAR)
			put_histogram(out, f);
		else if (f->show == GP_SHOW_RING || f->show == GP_SHOW_PRINTK)
			fprintf(out, "%s_total{pid=\"%ld\"} %" PRIu64 "\n", f->name, f->pid, f->m->lost);
		else
			put_table(out, f, !strcmp(type, "counter") ? "_total" : "");
	}
	fputs("# EOF\n", out);
	run_planes_lock(0);
	free(t.fams);
	fclose(out);
	return buf;
}

/* ---- HTTP -------------------------------------------------------------------------------- */

static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_len, void **state)
{
	(void)cls, (void)url, (void)version, (void)upload, (void)upload_len;
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return MHD_NO;
	if (!*state) {   /* the headers: answer on the next call */
		*state = (void *)1;
		return MHD_YES;
	}
	size_t len = 0;
	char *text = render(&len);
	if (!text)
		return MHD_NO;
	struct MHD_Response *r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(text);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type",
				"application/openmetrics-text; version=1.0.0; charset=utf-8");
	enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

int run_metrics_start(const char *spec)
{
	union addr a;
	char why[256];
	if (parse_spec(spec, &a, why, sizeof(why)))
		return run_metrics_check(spec);
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL;
	if (a.sa.sa_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	/* its thread takes no signal: run_child's handlers pass them on to the application */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	daemon_ = MHD_start_daemon(flags, 0, NULL, NULL, answer, NULL, MHD_OPTION_SOCK_ADDR, &a.sa,
				   MHD_OPTION_CONNECTION_TIMEOUT, 10u, MHD_OPTION_END);
	int e = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!daemon_) {
		cli_error("run: --metrics %s: cannot listen there (%s)", spec,
			  e ? strerror(e) : "libmicrohttpd refused");
		return RUN_EXIT_USAGE;
	}
	return 0;
}

void run_metrics_stop(void)
{
	if (daemon_)
		MHD_stop_daemon(daemon_);
	daemon_ = NULL;
}
