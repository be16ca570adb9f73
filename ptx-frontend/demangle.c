/* Demangling through libstdc++'s __cxa_demangle (the Itanium ABI demangler every C++ toolchain on
 * Linux ships); declared here so this stays a C file. Links against libstdc++. */
#include "ptx-frontend/demangle.h"

#include <stddef.h>
#include <stdlib.h>

char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

char *demangle(const char *name)
{
	if (!name || name[0] != '_' || name[1] != 'Z')
		return NULL;
	int status = 0;
	char *out = __cxa_demangle(name, NULL, NULL, &status);
	if (status != 0) {
		free(out);
		return NULL;
	}
	return out;
}
