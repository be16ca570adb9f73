/* Shared by the gpuprobe subcommands. */
#ifndef GPUPROBE_CLI_H
#define GPUPROBE_CLI_H

#include <stdio.h>

#define COMMAND(name, fn, summary) int fn(int argc, char **argv);
#include "cli/commands.def"
#undef COMMAND

/* Print "gpuprobe: " + message to stderr and return 1 (the exit status for bad input). The
 * message is escaped (bytes outside printable ASCII as \xNN): names in it come from files. */
int cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Read a whole file into a malloc'd buffer with a trailing NUL (not counted in *len).
 * On failure prints one clear line naming the file and returns NULL. */
char *cli_read_file(const char *path, size_t *len);

#endif
