/* Shared by the gpuprobe subcommands. */
#ifndef GPUPROBE_CLI_H
#define GPUPROBE_CLI_H

#include <stddef.h>
#include <stdio.h>

#define COMMAND(name, fn, summary) int fn(int argc, char **argv);
#include "cli/commands.def"
#undef COMMAND

/* Print "gpuprobe: " + message to stderr and return 1 (the exit status for bad input). The
 * message is escaped (bytes outside printable ASCII as \xNN): names in it come from files. */
int cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The same for bad usage (an unknown option, a missing argument): returns 2, the exit status every
 * command gives for it. */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Read a whole file into a malloc'd buffer with a trailing NUL (not counted in *len).
 * On failure prints one clear line naming the file and returns NULL. */
char *cli_read_file(const char *path, size_t *len);

/* Distinct kernel (or device function) names of a GPU-code file (cmd_list.c). */
struct cli_names {
	char **v;
	size_t n;
};
/* 0, or the exit status (1 damaged, 2 wrong kind; the line is printed). */
int cli_gpu_names(const char *path, struct cli_names *kernels, struct cli_names *funcs);
void cli_names_free(struct cli_names *n);
/* 1 when a host/entry glob names a host API host probes see (cmd_list.c) */
int cli_host_api_known(const char *glob);

#endif
