/* gpuprobe report FILE [-o OUT]: one self-contained HTML file from a trace (Perfetto or Chrome
 * JSON, as gpuprobe run --trace writes them) or a --json capture: the timeline, tables per kernel
 * and per driver call, the maps (histograms as bars). The page is report_template.html
 * (embedded at build time) with the trace's data as JSON in place of its placeholder; its
 * script draws everything, nothing is fetched. -o OUT.pftrace / OUT.json converts instead. */
#include "cli/cli.h"
#include "cli/trace.h"
#include "cli/trace_run.h"

#include "report_template.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REPORT_MAX_EVENTS 500000   /* more are left out of the page (it says so) */
#define PLACEHOLDER "/*GPUPROBE_DATA*/null"

static void usage(FILE *f)
{
	fputs("usage: gpuprobe report [-o OUT] [-p PROG.bpf.o]... FILE\n\n"
	      "An HTML report of FILE: a trace of 'gpuprobe run --trace' (FILE.pftrace, Perfetto's\n"
	      "format, or FILE.json, Chrome's) or a 'gpuprobe run --json' capture (JSON lines). One\n"
	      "self-contained file (no network): the timeline (host threads' driver calls, kernels\n"
	      "per GPU, blocks per SM, flows from launches to kernels; drag to pan, wheel to zoom),\n"
	      "tables per kernel and per driver call, the maps with histograms as bars.\n\n"
	      "options:\n"
	      "  -o, --output OUT  where to write (default: FILE with its ending replaced by .html);\n"
	      "                    OUT.pftrace or OUT.json writes that trace format instead\n"
	      "  -p, --probe FILE  for a --json capture: the probe objects of the run, whose BTF\n"
	      "                    types ring records (their fields become arguments)\n"
	      "  -h, --help        this help\n", f);
}

/* Which input: a Perfetto trace starts with field 1 (a packet), a Chrome trace is one JSON
 * value, a capture is JSON lines. */
static int load(struct tr_model *m, const char *path, char *err, size_t errlen)
{
	size_t len;
	char *text = cli_read_file(path, &len);
	if (!text)
		return -2;   /* said */
	int rc;
	size_t i = 0;
	while (i < len && (text[i] == ' ' || text[i] == '\n' || text[i] == '\r' || text[i] == '\t'))
		i++;
	if (!len) {
		snprintf(err, errlen, "empty file");
		rc = -1;
	} else if ((unsigned char)text[0] == 0x0a) {
		rc = tr_read_pftrace(m, (const uint8_t *)text, len, err, errlen);
	} else if (i < len && (text[i] == '[' || text[i] == '{')) {
		/* one JSON value (a Chrome trace), else lines */
		json_tokener *tok = json_tokener_new();
		json_object *j = tok ? json_tokener_parse_ex(tok, text + i, (int)(len - i)) : NULL;
		int whole = j && json_tokener_get_error(tok) == json_tokener_success;
		size_t used = tok ? json_tokener_get_parse_end(tok) : 0;
		int chrome = whole && (json_object_is_type(j, json_type_array) ||
				       json_object_object_get_ex(j, "traceEvents", NULL));
		size_t rest = i + used;
		while (rest < len && (text[rest] == ' ' || text[rest] == '\n' || text[rest] == '\r'))
			rest++;
		if (tok)
			json_tokener_free(tok);
		json_object_put(j);
		int looks_chrome = !whole && memmem(text + i, len - i < 200 ? len - i : 200, "\"traceEvents\"", 13);
		if (looks_chrome) {
			snprintf(err, errlen, "a Chrome JSON trace that does not parse (cut short or damaged?)");
			rc = -1;
		} else if (chrome && rest == len) {
			rc = tr_read_chrome(m, text, len, err, errlen);
		} else if (text[i] == '{' && !(chrome && rest < len)) {
			rc = tr_model_add_jsonl(m, path, text, len, err, errlen);
			if (!rc)
				tr_model_finish(m);
			if (!rc && !m->nevents) {
				snprintf(err, errlen, "no trace records and no maps in it (a --json capture "
					 "of gpuprobe run?)");
				rc = -1;
			}
			if (rc && !strncmp(err, path, strlen(path)) && err[strlen(path)] == ':') {
				/* "PATH:LINE: ..." -> "line LINE: ..." (the path is said already) */
				char rest2[8192];
				snprintf(rest2, sizeof(rest2), "line %s", err + strlen(path) + 1);
				snprintf(err, errlen, "%s", rest2);
			}
		} else {
			snprintf(err, errlen, "not a trace: the JSON does not parse%s",
				 chrome ? " (data after the trace)" : "");
			rc = -1;
		}
	} else {
		snprintf(err, errlen, "not a trace (neither a Perfetto trace, a Chrome JSON trace nor "
			 "JSON lines of gpuprobe run --json)");
		rc = -1;
	}
	free(text);
	return rc;
}

static const char *kind_name(enum tr_track_kind k)
{
	switch (k) {
	case TR_PROCESS: return "process";
	case TR_THREAD: return "thread";
	case TR_GPU: return "gpu";
	case TR_SM: return "sm";
	default: return "maps";
	}
}

/* The page's data: tracks, events (times from the first event), maps. */
static json_object *page_data(struct tr_model *m, const char *title)
{
	size_t *order = tr_model_order(m);
	uint64_t base = m->nevents ? m->events[order[0]].ts : 0;
	json_object *d = json_object_new_object();
	json_object_object_add(d, "title", json_object_new_string(title));
	/* a trace read back names its clock on its kernels (tr_model_finish) */
	const char *clock = m->clock ? m->clock : "";
	for (size_t i = 0; i < m->nevents && !strncmp(clock, "as recorded", 11); i++) {
		json_object *c;
		if (m->events[i].cat && !strcmp(m->events[i].cat, "kernel") && m->events[i].args &&
		    json_object_object_get_ex(m->events[i].args, "clock", &c) &&
		    json_object_is_type(c, json_type_string))
			clock = json_object_get_string(c);
	}
	json_object_object_add(d, "clock", json_object_new_string(clock));
	json_object_object_add(d, "base_ns", json_object_new_uint64(base));
	json_object *tracks = json_object_new_array();
	for (size_t i = 0; i < m->ntracks; i++) {
		const struct tr_track *t = &m->tracks[i];
		json_object *o = json_object_new_object();
		json_object_object_add(o, "name", json_object_new_string(t->name));
		json_object_object_add(o, "kind", json_object_new_string(kind_name(t->kind)));
		int64_t parent = -1;
		for (size_t k = 0; t->parent && k < m->ntracks; k++)
			if (m->tracks[k].uuid == t->parent)
				parent = (int64_t)k;
		json_object_object_add(o, "parent", json_object_new_int64(parent));
		json_object_object_add(o, "num", json_object_new_int64(t->kind == TR_THREAD ? t->tid
								       : t->kind == TR_PROCESS ? t->pid : t->tid));
		json_object_array_add(tracks, o);
	}
	json_object_object_add(d, "tracks", tracks);
	json_object *evs = json_object_new_array(), *maps = json_object_new_array();
	size_t kept = 0;
	for (size_t i = 0; i < m->nevents; i++) {
		const struct tr_event *e = &m->events[order[i]];
		if (e->cat && !strcmp(e->cat, "map")) {
			json_object *rec;
			if (e->args && json_object_object_get_ex(e->args, "record", &rec)) {
				json_object *r = json_tokener_parse(json_object_get_string(rec));
				if (r)
					json_object_array_add(maps, r);
			}
			continue;
		}
		if (kept++ >= REPORT_MAX_EVENTS)
			continue;
		json_object *o = json_object_new_array();
		json_object_array_add(o, json_object_new_int64((int64_t)e->track));
		json_object_array_add(o, json_object_new_int64((int64_t)(e->ts - base)));
		json_object_array_add(o, json_object_new_int64(e->instant ? -1 : (int64_t)e->dur));
		json_object_array_add(o, json_object_new_string(e->name));
		json_object_array_add(o, json_object_new_string(e->cat ? e->cat : "other"));
		json_object_array_add(o, e->args ? json_object_get(e->args) : NULL);
		char id[24];
		snprintf(id, sizeof(id), "%llx", (unsigned long long)e->flow_out);
		json_object_array_add(o, e->flow_out ? json_object_new_string(id) : NULL);
		snprintf(id, sizeof(id), "%llx", (unsigned long long)e->flow_in);
		json_object_array_add(o, e->flow_in ? json_object_new_string(id) : NULL);
		json_object_array_add(evs, o);
	}
	free(order);
	json_object_object_add(d, "events", evs);
	json_object_object_add(d, "maps", maps);
	json_object_object_add(d, "left_out", json_object_new_int64(
		kept > REPORT_MAX_EVENTS ? (int64_t)(kept - REPORT_MAX_EVENTS) : 0));
	return d;
}

static int write_html(struct tr_model *m, const char *title, const char *out, char *err,
		      size_t errlen)
{
	const char *tpl = (const char *)report_template;
	const char *at = strstr(tpl, PLACEHOLDER);
	if (!at) {
		snprintf(err, errlen, "the report template has no data placeholder (a build problem)");
		return -1;
	}
	json_object *d = page_data(m, title);
	/* default flags escape '/', so "</script>" cannot appear inside the data */
	const char *js = json_object_to_json_string_ext(d, JSON_C_TO_STRING_PLAIN);
	FILE *f = fopen(out, "w");
	if (!f) {
		snprintf(err, errlen, "%s: cannot write it: %s", out, strerror(errno));
		json_object_put(d);
		return -1;
	}
	fwrite(tpl, 1, (size_t)(at - tpl), f);
	fputs(js, f);
	fputs(at + strlen(PLACEHOLDER), f);
	json_object_put(d);
	if (ferror(f) | fclose(f)) {
		snprintf(err, errlen, "%s: write failed", out);
		return -1;
	}
	return 0;
}

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},
		{"probe", required_argument, NULL, 'p'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *out = NULL;
	const char *probes[64];
	size_t nprobes = 0;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:p:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'p':
			if (nprobes == sizeof(probes) / sizeof(probes[0]))
				return cli_usage_error("report: more than 64 -p objects");
			if (access(optarg, R_OK))
				return cli_usage_error("report: -p %s: cannot read it: %s", optarg, strerror(errno));
			probes[nprobes++] = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case ':':
			return cli_usage_error("report: option '%s' needs an argument", argv[optind - 1]);
		default:
			return cli_usage_error("report: unknown option '%s' (see 'gpuprobe report --help')",
					       argv[optind - 1]);
		}
	}
	if (optind + 1 != argc)
		return cli_usage_error("report: one FILE (usage: gpuprobe report [-o OUT] FILE)");
	const char *in = argv[optind];
	char def[4096];
	if (!out) {
		const char *slash = strrchr(in, '/'), *dot = strrchr(in, '.');
		size_t n = dot && (!slash || dot > slash) ? (size_t)(dot - in) : strlen(in);
		if (n + 6 > sizeof(def))
			return cli_usage_error("report: %s: name too long; give -o", in);
		snprintf(def, sizeof(def), "%.*s.html", (int)n, in);
		out = def;
	}
	enum tr_format fmt = tr_format_of(out);
	if (fmt != TR_FORMAT_HTML && fmt != TR_FORMAT_PFTRACE && fmt != TR_FORMAT_CHROME)
		return cli_usage_error("report: -o %s: name OUT.html, OUT.pftrace or OUT.json", out);
	if (!strcmp(in, out))
		return cli_usage_error("report: -o %s is the input", out);
	struct tr_model m;
	tr_model_init(&m);
	for (size_t i = 0; i < nprobes; i++)
		tr_model_add_object(&m, probes[i]);
	char err[8192] = "";
	int rc = load(&m, in, err, sizeof(err));
	if (rc == -2) {
		tr_model_free(&m);
		return 1;
	}
	if (rc) {
		tr_model_free(&m);
		return cli_error("report: %s: %s", in, err);
	}
	rc = fmt == TR_FORMAT_HTML ? write_html(&m, in, out, err, sizeof(err))
		: fmt == TR_FORMAT_PFTRACE ? tr_write_pftrace(&m, out, err, sizeof(err))
					   : tr_write_chrome(&m, out, err, sizeof(err));
	size_t ntracks = m.ntracks, nevents = m.nevents;
	tr_model_free(&m);
	if (rc)
		return cli_error("report: %s", err);
	fprintf(stderr, "gpuprobe: report: %s (%zu tracks, %zu events)\n", out, ntracks, nevents);
	return 0;
}
