/* gpuprobe run --trace FILE [--trace-api GLOB]... (trace_run.h): a private folder for the shim's
 * trace records (GPUPROBE_TRACE, shim/api_trace.c) and, unless --json names a file, the --json
 * stream's records (GPUPROBE_JSON); after the application, the trace built from both. */
#include "cli/trace_run.h"
#include "cli/cli.h"
#include "cli/run.h"
#include "cli/trace.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum tr_format tr_format_of(const char *path)
{
	size_t n = strlen(path);
#define ENDS(s) (n > strlen(s) && !strcmp(path + n - strlen(s), s))
	if (ENDS(".json"))
		return TR_FORMAT_CHROME;
	if (ENDS(".pftrace") || ENDS(".perfetto-trace") || ENDS(".pb"))
		return TR_FORMAT_PFTRACE;
	if (ENDS(".html") || ENDS(".htm"))
		return TR_FORMAT_HTML;
	if (ENDS(".jsonl"))
		return TR_FORMAT_JSONL;
#undef ENDS
	return TR_FORMAT_UNKNOWN;
}

int trace_run_check(const char *out)
{
	enum tr_format f = tr_format_of(out);
	if (f != TR_FORMAT_CHROME && f != TR_FORMAT_PFTRACE) {
		cli_error("run: --trace %s: name a Perfetto trace (FILE.pftrace) or a Chrome JSON trace "
			  "(FILE.json)", out);
		return RUN_EXIT_USAGE;
	}
	if (f == TR_FORMAT_PFTRACE && !tr_have_pftrace()) {
		cli_error("run: --trace %s: this gpuprobe was built without protobuf-c; write FILE.json "
			  "(Chrome's format) instead", out);
		return RUN_EXIT_USAGE;
	}
	FILE *f2 = fopen(out, "ab");
	if (!f2) {
		cli_error("run: --trace %s: cannot write it: %s", out, strerror(errno));
		return RUN_EXIT_USAGE;
	}
	fclose(f2);
	return 0;
}

int trace_run_prepare(struct trace_run *t, const char *api_globs, const char *json)
{
	char base[4096];
	if (run_private_dir(base, sizeof(base))) {
		cli_error("run: --trace: no private folder for the trace records");
		return RUN_EXIT_USAGE;
	}
	snprintf(t->dir, sizeof(t->dir), "%s/trace-XXXXXX", base);
	if (!mkdtemp(t->dir)) {
		cli_error("run: --trace: cannot make a folder in %s: %s", base, strerror(errno));
		t->dir[0] = 0;
		return RUN_EXIT_USAGE;
	}
	if (setenv("GPUPROBE_TRACE", t->dir, 1) ||
	    (api_globs && setenv("GPUPROBE_TRACE_API", api_globs, 1)))
		return RUN_EXIT_USAGE;
	if (json && strcmp(json, "-")) {
		snprintf(t->json, sizeof(t->json), "%s", json);
	} else if (!json) {
		/* the maps and ring records go into the trace (and the report) */
		snprintf(t->json, sizeof(t->json), "%s/events.jsonl", t->dir);
		if (setenv("GPUPROBE_JSON", t->json, 1))
			return RUN_EXIT_USAGE;
	}
	return 0;
}

static int add_file(struct tr_model *m, const char *path, char *err, size_t errlen)
{
	size_t len;
	FILE *f = fopen(path, "rb");
	if (!f)
		return 0;   /* no such output: nothing of it */
	fclose(f);
	char *text = cli_read_file(path, &len);
	if (!text)
		return -1;
	int rc = tr_model_add_jsonl(m, path, text, len, err, errlen);
	free(text);
	return rc;
}

int trace_run_finish(struct trace_run *t, const char *out, const char *probes)
{
	struct tr_model m;
	char err[8192] = "";
	int rc = 0;
	tr_model_init(&m);
	if (probes) {
		char *copy = strdup(probes), *save = NULL;
		for (char *p = copy ? strtok_r(copy, ":", &save) : NULL; p; p = strtok_r(NULL, ":", &save))
			tr_model_add_object(&m, p);
		free(copy);
	}
	DIR *d = opendir(t->dir);
	struct dirent *de;
	char path[8192];
	while (d && !rc && (de = readdir(d))) {
		if (strncmp(de->d_name, "api-", 4))
			continue;
		snprintf(path, sizeof(path), "%s/%s", t->dir, de->d_name);
		rc = add_file(&m, path, err, sizeof(err));
	}
	if (d)
		closedir(d);
	if (!rc && t->json[0])
		rc = add_file(&m, t->json, err, sizeof(err));
	if (!rc) {
		tr_model_finish(&m);
		rc = tr_format_of(out) == TR_FORMAT_CHROME ? tr_write_chrome(&m, out, err, sizeof(err))
							  : tr_write_pftrace(&m, out, err, sizeof(err));
	}
	if (rc)
		cli_error("run: --trace: %s", err);
	else
		fprintf(stderr, "gpuprobe: trace: %s (%zu tracks, %zu events; 'gpuprobe report %s' "
			"makes an HTML report of it)\n", out, m.ntracks, m.nevents, out);
	tr_model_free(&m);
	/* the records are in the trace now */
	d = opendir(t->dir);
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", t->dir, de->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(t->dir);
	return rc ? 1 : 0;
}
