/* Finding CUDA's device runtime library (device_runtime.h). */
#include "shim/device_runtime.h"
#include "common/env.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int ptx_uses_device_runtime(const char *ptx)
{
	return ptx && (strstr(ptx, "__cudaCDP2") || strstr(ptx, "cudaLaunchDevice") ||
		       strstr(ptx, "cudaGetParameterBuffer"));
}

#if defined(__x86_64__)
#define TARGET_DIR "targets/x86_64-linux/lib"
#elif defined(__aarch64__)
#define TARGET_DIR "targets/sbsa-linux/lib"
#else
#define TARGET_DIR "lib64"
#endif

static char found[PATH_MAX];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static int readable(const char *dir, const char *sub)
{
	if (!dir || !*dir)
		return 0;
	int n = sub ? snprintf(found, sizeof(found), "%s/%s/libcudadevrt.a", dir, sub)
		    : snprintf(found, sizeof(found), "%s", dir);
	if (n <= 0 || (size_t)n >= sizeof(found) || access(found, R_OK)) {
		found[0] = 0;
		return 0;
	}
	return 1;
}

static void look(void)
{
	const char *named = gp_env_str(GP_VAR_CUDADEVRT);
	if (!named)
		return;   /* off unless asked for (device_runtime.h says why) */
	if (strcmp(named, "auto")) {   /* a path: the user's choice stands, no other is looked for */
		readable(named, NULL);
		return;
	}
	const char *homes[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda"};
	for (size_t i = 0; i < sizeof(homes) / sizeof(homes[0]); i++)
		if (readable(homes[i], "lib64") || readable(homes[i], TARGET_DIR))
			return;
}

const char *shim_device_runtime_library(void)
{
	pthread_once(&once, look);
	return found[0] ? found : NULL;
}
