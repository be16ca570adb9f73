/* GPUPROBE_TEST_FAULT (fault.h): read once at load time. */
/* secure_getenv (_GNU_SOURCE comes from the build): nothing honoured in a setuid process */
#include "shim/fault.h"
#include "common/env.h"
#include "shim/log.h"

#include <stdlib.h>
#include <string.h>

unsigned shim_faults;

static const char *const names[SHIM_FAULT_COUNT] = {
	[SHIM_FAULT_MEMORY] = "memory",         [SHIM_FAULT_DESCRIPTOR] = "descriptor",
	[SHIM_FAULT_CONFIG] = "config",         [SHIM_FAULT_OBJECTS] = "objects",
	[SHIM_FAULT_OUTPUT] = "output",         [SHIM_FAULT_CAPTURE] = "capture",
	[SHIM_FAULT_INSTRUMENT] = "instrument", [SHIM_FAULT_COMPILE] = "compile",
	[SHIM_FAULT_LOAD] = "load",             [SHIM_FAULT_FUNCTION] = "function",
};

const char *shim_fault_name(enum shim_fault_step s)
{
	return s < SHIM_FAULT_COUNT ? names[s] : "?";
}

__attribute__((constructor)) static void shim_fault_env(void)
{
	const char *v = gp_env_str(GP_VAR_TEST_FAULT);   /* common/env.c */
	if (!v || !*v)
		return;
	const char *p = v;
	while (*p) {
		size_t n = strcspn(p, ",");
		int found = 0;
		for (unsigned s = 0; s < SHIM_FAULT_COUNT; s++)
			if (strlen(names[s]) == n && !strncmp(p, names[s], n)) {
				shim_faults |= 1u << s;
				found = 1;
			}
		if (!found && n)
			shim_msg("GPUPROBE_TEST_FAULT: unknown step '%.*s' (steps: memory, descriptor, "
				 "config, objects, output, capture, instrument, compile, load, function)",
				 (int)n, p);
		p += n;
		if (*p == ',')
			p++;
	}
}
