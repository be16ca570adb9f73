/* gpuprobe run -e (cli/run_oneliner.h): the one-liner's object file, and --dry-run's listing. */
#include "cli/cli.h"
#include "cli/run.h"
#include "cli/run_oneliner.h"
#include "ebpf/oneliner.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *run_oneliner_file(const char *src)
{
	char err[512] = "";
	void *elf = NULL;
	size_t size = 0;
	if (gp_oneliner_compile(src, &elf, &size, err, sizeof err)) {
		cli_error("run: -e: %s", err[0] ? err : "cannot compile the one-liner");
		return NULL;
	}
	uint64_t h = 14695981039346656037ull;
	for (size_t i = 0; i < size; i++)
		h = (h ^ ((const uint8_t *)elf)[i]) * 1099511628211ull;
	char dir[PATH_MAX - 64], tmp[PATH_MAX], *path = NULL;
	int rc = run_private_dir(dir, sizeof dir);
	if (rc) {
		cli_error("run: -e: no private folder for the one-liner's object (%s): %s", dir, strerror(-rc));
		free(elf);
		return NULL;
	}
	snprintf(tmp, sizeof tmp, "%s/oneliner.XXXXXX", dir);
	int fd = mkstemp(tmp), ok = fd >= 0;
	ok = ok && write(fd, elf, size) == (ssize_t)size && !fchmod(fd, 0600);
	if (fd >= 0 && close(fd))
		ok = 0;
	ok = ok && asprintf(&path, "%s/oneliner-%016llx.bpf.o", dir, (unsigned long long)h) >= 0;
	if (!ok || rename(tmp, path)) {
		cli_error("run: -e: cannot write the one-liner's object in %s: %s", dir, strerror(errno));
		if (fd >= 0)
			unlink(tmp);
		if (ok)
			free(path);
		path = NULL;
	}
	free(elf);
	return path;
}

int run_oneliner_dump(const char *src)
{
	char err[512] = "";
	if (gp_oneliner_dump(src, stdout, err, sizeof err)) {
		cli_error("run: -e: %s", err[0] ? err : "cannot compile the one-liner");
		return RUN_EXIT_USAGE;
	}
	return 0;
}
