/* Kernel names for humans: the Itanium C++ ABI demangler of the C++ runtime (libstdc++ exports
 * it with C linkage), so tables show "vecAdd(float const*, int)" instead of "_Z6vecAddPKfi". */
#include "maps/output.h"

#include <stdlib.h>
#include <string.h>

char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

char *gp_output_demangle(const char *name)
{
	if (!name)
		return NULL;
	if (!strncmp(name, "_Z", 2)) {
		int status = 0;
		char *d = __cxa_demangle(name, NULL, NULL, &status);
		if (d && !status)
			return d;
		free(d);
	}
	return strdup(name);
}
