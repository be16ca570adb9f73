/* gpuprobe lower [--prog NAME] [-o OUT.ptx] [--json] [--target sm_XX] [-p] PROG.bpf.o: verify the programs of a BPF
 * object and print them lowered to PTX (ebpf/lower.h), one .func per program named after it, with
 * the maps runtime's helpers. For reading what a probe becomes; the maps are created in host
 * memory here, so the descriptor addresses in the output are placeholders.
 * Exit status: 0 printed, 1 a program is rejected or does not lower, 2 bad usage or file. */
#include "cli/cli.h"

#include "ebpf/lower.h"
#include "ebpf/object.h"
#include "ebpf/verifier.h"
#include "maps/map_device.h"
#include "maps/maps.h"

#include "cli/file_kind.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
	fputs("usage: gpuprobe lower [--prog NAME] [-o OUT.ptx] [--json] [--target sm_XX] [-p] PROG.bpf.o\n\n"
	      "Verify the programs of a BPF object and print them lowered to PTX: one\n"
	      "'.func (.param .b64 ret) NAME(.param .b64 ctx)' per program, with the map\n"
	      "helpers it calls. Map descriptor addresses are placeholders (host memory).\n\n"
	      "  -p, --probe FILE     the BPF object (the same as giving it without -p)\n"
	      "  --prog NAME          only this program (--program too)\n"
	      "  -o, --output FILE    write the PTX there instead of stdout\n"
	      "  --json               one JSON object: file, target, programs, ptx\n"
	      "  --target sm_XX       the .target line (default sm_75)\n"
	      "  -h, --help           this text\n\n"
	      "Exit status: 0 printed, 1 a program is rejected or does not lower (or the output cannot\n"
	      "be written), 2 bad usage or a file that is not a BPF object.\n",
	      out);
}

static void directive(ir_module *m, const char *text)
{
	ir_top *t = ir_top_new(m, IR_TOP_DIRECTIVE);
	t->text = ir_strdup(m, text);
	ir_top_append(m, t);
}

/* The last non-empty line of the verifier's log: the reason. */
static const char *last_line(char *log)
{
	size_t n = strlen(log);
	while (n && log[n - 1] == '\n')
		log[--n] = 0;
	char *nl = strrchr(log, '\n');
	return nl ? nl + 1 : log;
}

int cmd_lower(int argc, char **argv)
{
	const char *path = NULL, *only = NULL, *out_path = NULL, *target = "sm_75";
	bool json = false, p_given = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		}
		bool has_value = i + 1 < argc;
		if ((!strcmp(a, "--prog") || !strcmp(a, "--program")) && has_value) {
			only = argv[++i];
		} else if (!strcmp(a, "--json")) {
			json = true;
		} else if ((!strcmp(a, "-p") || !strcmp(a, "--probe")) && has_value && !path) {
			path = argv[++i];   /* -p is a probe file on every command */
			p_given = true;
		} else if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && has_value) {
			out_path = argv[++i];
		} else if (!strcmp(a, "--target") && has_value) {
			target = argv[++i];
			if (strncmp(target, "sm_", 3) || !target[3]) {
				cli_error("lower: --target wants sm_XX, not '%s'", target);
				return 2;
			}
		} else if (a[0] == '-' && a[1]) {
			cli_error("lower: unknown option or missing value '%s' (see 'gpuprobe lower --help')", a);
			return 2;
		} else if (path && p_given) {
			cli_error("lower: -p takes the probe file ('%s'), '%s' is extra; one program of it is "
				  "chosen with --prog NAME", path, a);
			return 2;
		} else if (path) {
			cli_error("lower: one object file at a time ('%s' and '%s')", path, a);
			return 2;
		} else {
			path = a;
		}
	}
	if (!path) {
		usage(stderr);
		return 2;
	}
	int krc = cli_expect_kind("lower", path, CLI_READS(CLI_FILE_BPF), "a BPF object (clang -target bpf)", NULL);
	if (krc)
		return krc;
	char err[512] = "";
	struct gp_object *obj = NULL;
	if (gp_object__open_file(path, &obj, err, sizeof(err))) {
		cli_error("%s", err[0] ? err : "cannot open BPF object");
		return 2;
	}
	size_t nprogs = gp_object__program_count(obj), nmaps = gp_object__map_count(obj);
	int found = 0;
	for (size_t p = 0; p < nprogs; p++)
		found |= !only || !strcmp(gp_object__program(obj, p)->name, only);
	if (!found) {
		cli_error("%s: no program named '%s' ('gpuprobe show %s' lists them)", path, only ? only : "", path);
		gp_object__close(obj);
		return 2;
	}

	int rc = 0;
	struct gp_map *maps = calloc(nmaps + 1, sizeof(*maps));
	uint8_t *atomic_only = calloc(nmaps + 1, 1), *prog_atomic = calloc(nmaps + 1, 1);
	unsigned *stack = calloc(nprogs + 1, sizeof(*stack));
	char *log = malloc(64u << 10);
	struct gp_map_allocator *alloc = NULL;
	struct gp_map_set *set = NULL;
	struct gp_maps_device dev = {0};
	ir_module *m = NULL;
	if (!maps || !atomic_only || !prog_atomic || !stack || !log) {
		rc = cli_error("out of memory");
		goto out;
	}
	for (size_t i = 0; i < nmaps; i++) {
		maps[i] = *gp_object__map(obj, i);
		atomic_only[i] = 1;
	}
	/* Verify first: the lowering trusts the verifier, and the maps' sharding depends on what
	 * the programs (all of them, or the one asked for) do to them. */
	for (size_t p = 0; p < nprogs; p++) {
		const struct gp_program *prog = gp_object__program(obj, p);
		if (only && strcmp(prog->name, only))
			continue;
		struct gp_verify_opts o = {.attach = prog->attach, .maps = maps, .nmaps = nmaps,
					   .ctx_size = gp_program__ctx_size(prog), .log = log,
					   .log_size = 64u << 10, .map_atomic_only = prog_atomic};
		log[0] = 0;
		if (gp_verify(prog->insns, prog->ninsns, &o)) {
			cli_error("%s: program %s is rejected by the verifier: %s", path, prog->name, last_line(log));
			rc = 1;
			goto out;
		}
		stack[p] = o.stack_depth;
		for (size_t i = 0; i < nmaps; i++)
			atomic_only[i] &= prog_atomic[i];
	}
	alloc = gp_map_allocator_host(1);
	struct gp_map_set_opts so = {.alloc = alloc, .atomic_only = atomic_only};
	if (!alloc || gp_map_set__create(maps, nmaps, &so, &set, err, sizeof(err)) ||
	    gp_maps_device__init_from_set(&dev, set)) {
		rc = cli_error("%s: maps: %s", path, err[0] ? err : "out of memory");
		goto out;
	}
	m = ir_module_new();
	directive(m, ".version 7.8");
	directive(m, ir_strfmt(m, ".target %s", target));
	directive(m, ".address_size 64");
	directive(m, ir_strfmt(m, "// gpuprobe lower %s (map descriptor addresses are placeholders)", path));
	const char *puts_fn = gp_maps_puts_func(&dev, m);
	for (size_t p = 0; p < nprogs; p++) {
		const struct gp_program *prog = gp_object__program(obj, p);
		if (only && strcmp(prog->name, only))
			continue;
		struct gp_lower_opts lo = {.emit_map_ref = gp_maps_emit_map_ref, .helper_func = gp_maps_helper_func,
					   .puts_func = puts_fn, .user = &dev,
					   .prefix = ir_strfmt(m, "__gp%zu_", p), .stack_size = stack[p],
					   .assume_aligned = 1};   /* verified */
		if (gp_lower_program(m, prog->insns, prog->ninsns, prog->name, &lo, err, sizeof(err))) {
			rc = cli_error("%s: program %s: %s", path, prog->name, err);
			goto out;
		}
	}
	size_t len;
	char *ptx = ptx_print(m, &len);
	FILE *f = out_path ? fopen(out_path, "w") : stdout;
	if (!f) {
		free(ptx);
		cli_error("%s: cannot write: %m", out_path);
		rc = 1;
		goto out;
	}
	if (json) {
		json_object *root = json_object_new_object(), *names = json_object_new_array();
		json_object_object_add(root, "file", json_object_new_string(path));
		json_object_object_add(root, "target", json_object_new_string(target));
		for (size_t p = 0; p < nprogs; p++)
			if (!only || !strcmp(gp_object__program(obj, p)->name, only))
				json_object_array_add(names, json_object_new_string(gp_object__program(obj, p)->name));
		json_object_object_add(root, "programs", names);
		json_object_object_add(root, "ptx", json_object_new_string_len(ptx, (int)len));
		fprintf(f, "%s\n", json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(root);
	} else {
		fwrite(ptx, 1, len, f);
	}
	if (out_path && fclose(f)) {
		cli_error("%s: write failed: %m", out_path);
		rc = 1;
	}
	free(ptx);
out:
	if (m)
		ir_module_free(m);
	gp_maps_device__release(&dev);
	if (set)
		gp_map_set__free(set);
	free(alloc);
	free(maps);
	free(atomic_only);
	free(prog_atomic);
	free(stack);
	free(log);
	gp_object__close(obj);
	return rc;
}
