/* gpuprobe show PROG.bpf.o: what a probe object holds, as bpftool's `prog show` and `map show`
 * would say it: each program (name, section, attach point, instruction count), each map (name,
 * type, key and value size, max_entries, how `gpuprobe run` prints it) and the BTF types of keys
 * and values. Text or --json. Exit status: 0 shown, 1 the object does not open, 2 bad usage. */
#include "cli/attach_names.h"
#include "cli/cli.h"
#include "cli/file_kind.h"

#include "ebpf/object.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
	fputs("usage: gpuprobe show [--json] [-o FILE] PROG.bpf.o\n\n"
	      "What a probe object holds: its programs (name, section, attach point, instruction\n"
	      "count), its maps (name, type, key and value size, max_entries, how 'gpuprobe run'\n"
	      "prints it and why) and the BTF types of map keys and values.\n\n"
	      "  --json             one JSON object instead of text\n"
	      "  -o, --output FILE  write there instead of standard output\n"
	      "  -h, --help         this text\n\n"
	      "Exit status: 0 shown, 1 the object cannot be opened, 2 bad usage or not a BPF object.\n",
	      out);
}

/* "struct key", "__u64", "gp_kernel_id_t" for a BTF type id: the name as C declares it */
static void btf_dump_printf(void *ctx, const char *fmt, va_list args)
{
	char *buf = ctx;
	size_t n = strlen(buf);
	if (n < 255)
		vsnprintf(buf + n, 256 - n, fmt, args);
}

static void type_name(const struct btf *btf, __u32 id, char *out)
{
	out[0] = 0;
	if (!btf || !id)
		return;
	struct btf_dump *d = btf_dump__new(btf, btf_dump_printf, out, NULL);
	if (!d)
		return;
	LIBBPF_OPTS(btf_dump_emit_type_decl_opts, o, .field_name = "");
	if (btf_dump__emit_type_decl(d, id, &o))
		out[0] = 0;
	btf_dump__free(d);
}

struct btf_types {
	struct bpf_object *bo;
	const struct btf *btf;
};

static void map_types(struct btf_types *t, const char *name, char *key, char *value)
{
	key[0] = value[0] = 0;
	if (!t->bo || !t->btf || !name)
		return;
	struct bpf_map *m = bpf_object__find_map_by_name(t->bo, name);
	if (!m)
		return;
	type_name(t->btf, bpf_map__btf_key_type_id(m), key);
	type_name(t->btf, bpf_map__btf_value_type_id(m), value);
}

static libbpf_print_fn_t old_print;
static int quiet(enum libbpf_print_level l, const char *f, va_list a)
{
	(void)l, (void)f, (void)a;
	return 0;
}

int cmd_show(int argc, char **argv)
{
	const char *path = NULL, *out_path = NULL;
	bool json = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "--json")) {
			json = true;
		} else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
			if (++i == argc)
				return cli_usage_error("show: %s needs a file name", a);
			out_path = argv[i];
		} else if (a[0] == '-' && a[1]) {
			return cli_usage_error("show: unknown option '%s' (see 'gpuprobe show --help')", a);
		} else if (path) {
			return cli_usage_error("show: one object file at a time ('%s' and '%s')", path, a);
		} else {
			path = a;
		}
	}
	if (!path) {
		usage(stderr);
		return 2;
	}
	int rc = cli_expect_kind("show", path, CLI_READS(CLI_FILE_BPF), "a BPF object (clang -target bpf)", NULL);
	if (rc)
		return rc;
	char err[512] = "";
	struct gp_object *obj = NULL;
	if (gp_object__open_file(path, &obj, err, sizeof(err)))
		return cli_error("%s", err[0] ? err : "cannot open BPF object");
	/* The BTF names of key and value types: libbpf's own reading of the same file. */
	struct btf_types t = {0};
	old_print = libbpf_set_print(quiet);
	t.bo = bpf_object__open_file(path, NULL);
	libbpf_set_print(old_print);
	if (libbpf_get_error(t.bo))
		t.bo = NULL;
	else
		t.btf = bpf_object__btf(t.bo);
	FILE *f = out_path ? fopen(out_path, "w") : stdout;
	if (!f) {
		rc = cli_error("show: cannot create %s: %m", out_path);
		goto out;
	}
	size_t np = gp_object__program_count(obj), nm = gp_object__map_count(obj);
	json_object *root = json ? json_object_new_object() : NULL, *jp = NULL, *jm = NULL;
	if (json) {
		json_object_object_add(root, "file", json_object_new_string(path));
		json_object_object_add(root, "license", json_object_new_string(gp_object__license(obj) ? gp_object__license(obj) : ""));
		json_object_object_add(root, "programs", jp = json_object_new_array());
		json_object_object_add(root, "maps", jm = json_object_new_array());
	} else {
		fprintf(f, "%s: BPF object, %zu program%s, %zu map%s%s%s\n", path, np, np == 1 ? "" : "s", nm,
			nm == 1 ? "" : "s", t.btf ? ", BTF" : ", no BTF",
			gp_object__license(obj) && *gp_object__license(obj) ? "" : "");
		fprintf(f, "programs:\n");
	}
	for (size_t i = 0; i < np; i++) {
		const struct gp_program *p = gp_object__program(obj, i);
		const char *tk = cli_attach_target_kind(p->attach);
		const char *target = p->target && *p->target ? p->target : "*";
		if (json) {
			json_object *o = json_object_new_object();
			json_object_object_add(o, "name", json_object_new_string(p->name));
			json_object_object_add(o, "section", json_object_new_string(p->section));
			json_object_object_add(o, "attach", json_object_new_string(cli_attach_name(p->attach)));
			if (tk) {
				json_object_object_add(o, "target_kind", json_object_new_string(tk));
				json_object_object_add(o, "target", json_object_new_string(target));
			}
			json_object_object_add(o, "insns", json_object_new_int64((int64_t)p->ninsns));
			json_object_array_add(jp, o);
		} else if (tk) {
			fprintf(f, "  %-24s %-28s %s, %s %s, %zu insns\n", p->name, p->section, cli_attach_name(p->attach),
				tk, target, p->ninsns);
		} else {
			fprintf(f, "  %-24s %-28s %s, %zu insns\n", p->name, p->section, cli_attach_name(p->attach),
				p->ninsns);
		}
	}
	if (!json)
		fprintf(f, "maps:%s\n", nm ? "" : " none");
	for (size_t i = 0; i < nm; i++) {
		const struct gp_map *m = gp_object__map(obj, i);
		char tb[32], pb[64], key[256], value[256];
		const char *by;
		const char *type = cli_map_type_name(m->type, tb, sizeof(tb));
		const char *print = cli_map_print_name(m, pb, sizeof(pb), &by);
		map_types(&t, m->name, key, value);
		if (json) {
			json_object *o = json_object_new_object();
			json_object_object_add(o, "name", json_object_new_string(m->name ? m->name : ""));
			json_object_object_add(o, "type", json_object_new_string(type));
			json_object_object_add(o, "key_size", json_object_new_int64(m->key_size));
			json_object_object_add(o, "value_size", json_object_new_int64(m->value_size));
			json_object_object_add(o, "max_entries", json_object_new_int64(m->max_entries));
			json_object_object_add(o, "prints_as", json_object_new_string(print));
			json_object_object_add(o, "decided_by", json_object_new_string(by));
			if (key[0])
				json_object_object_add(o, "key_type", json_object_new_string(key));
			if (value[0])
				json_object_object_add(o, "value_type", json_object_new_string(value));
			json_object_array_add(jm, o);
		} else {
			fprintf(f, "  %-24s %-12s key %u value %u max_entries %u  prints as %s (by %s)\n",
				m->name ? m->name : "?", type, m->key_size, m->value_size, m->max_entries, print, by);
			if (key[0] || value[0])
				fprintf(f, "  %-24s key: %s  value: %s\n", "", key[0] ? key : "-", value[0] ? value : "-");
		}
	}
	if (json) {
		fprintf(f, "%s\n", json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(root);
	}
	if (out_path ? fclose(f) : fflush(f))
		rc = cli_error("show: write failed%s%s", out_path ? " on " : "", out_path ? out_path : "");
out:
	if (t.bo)
		bpf_object__close(t.bo);
	gp_object__close(obj);
	return rc;
}
