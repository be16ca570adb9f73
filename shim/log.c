/* Messages and the environment the shim reads once at load time. */
#include "shim/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int shim_log_enabled;

__attribute__((constructor)) static void shim_log_init(void)
{
	const char *v = getenv("GPUPROBE_LOG");
	shim_log_enabled = v && *v && strcmp(v, "0") != 0;
}

void shim_msg(const char *fmt, ...)
{
	char line[1024];
	int n = snprintf(line, sizeof(line), "gpuprobe: ");
	va_list ap;
	va_start(ap, fmt);
	int m = vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	va_end(ap);
	if (m < 0)
		return;
	n += m;
	if (n > (int)sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	ssize_t w = write(STDERR_FILENO, line, n);
	(void)w;
}
