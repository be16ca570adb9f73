/* gpuprobe: the command. Dispatches to the subcommands listed in commands.def. */
#include "cli/cli.h"
#include "ptx-frontend/escape.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
#define COMMAND(name, fn, summary) {#name, fn, summary},
#include "cli/commands.def"
#undef COMMAND
};

static void usage(FILE *out)
{
	fputs("usage: gpuprobe COMMAND [ARGS]\n\n"
	      "Run eBPF probes inside the GPU kernels of unmodified CUDA applications.\n\n"
	      "commands:\n", out);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fputs("\nRun 'gpuprobe COMMAND --help' for a command's options. Every command: -p FILE is a\n"
	      "probe object, -o/--output FILE writes there, --json (list, show, verify, lower) prints\n"
	      "JSON; exit status 0 success, 1 failure, 2 bad usage (or a file of another kind).\n\n"
	      "Kernel globs (sections, run -k, list --match): a glob names a kernel when it matches its\n"
	      "mangled name (_Z5scaleILi512EEvPfi), its demangled name without return type\n"
	      "(scale<512>(float*, int)), that without parameters (scale<512>), or its base name\n"
	      "(scale). 'gpuprobe list --probes APP' lists them.\n", out);
}

int cli_error(const char *fmt, ...)
{
	/* Names in messages come from files (objects, sections, keys, kernels): one line of
	 * printable text, whatever bytes a file holds. */
	char line[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	gp_escape_line(line, sizeof(line));
	fprintf(stderr, "gpuprobe: %s\n", line);
	return 1;
}

int cli_usage_error(const char *fmt, ...)
{
	char line[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	gp_escape_line(line, sizeof(line));
	fprintf(stderr, "gpuprobe: %s\n", line);
	return 2;
}

char *cli_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		cli_error("cannot open %s: %s", path, strerror(errno));
		return NULL;
	}
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap + 1);
	for (;;) {
		if (!buf) {
			fclose(f);
			cli_error("%s: out of memory", path);
			return NULL;
		}
		n += fread(buf + n, 1, cap - n, f);
		if (n < cap)
			break;
		cap *= 2;
		char *nb = realloc(buf, cap + 1);
		if (!nb)
			free(buf);
		buf = nb;
	}
	int err = ferror(f);
	fclose(f);
	if (err) {
		free(buf);
		cli_error("cannot read %s", path);
		return NULL;
	}
	buf[n] = 0;
	*len = n;
	return buf;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		puts("gpuprobe " GPUPROBE_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	cli_error("unknown command '%s' (see 'gpuprobe --help')", argv[1]);
	return 2;
}
