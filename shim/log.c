/* Messages and the environment the shim reads once at load time. */
#include "shim/log.h"
#include "shim/forward.h"
#include "ptx-frontend/escape.h"
#include "common/env.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int shim_log_enabled;

__attribute__((constructor)) static void shim_log_init(void)
{
	shim_log_enabled = gp_env_flag(GP_VAR_LOG);
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
	/* names in messages come from files (objects, sections, kernels, the configuration): one
	 * printable line, other bytes as \xNN, whatever a hostile file holds */
	gp_escape_line(line + n, sizeof(line) - n - 1);
	n = (int)strlen(line);
	line[n++] = '\n';
	ssize_t w = write(STDERR_FILENO, line, n);
	(void)w;
}

const char *shim_err_name(int rc)
{
	const char *s = NULL;
	shim_fnty_cuGetErrorName *gn = SHIM_REAL(cuGetErrorName);
	if (!gn || gn((CUresult)rc, &s) != CUDA_SUCCESS || !s)
		s = "unknown CUDA error";
	return s;
}
