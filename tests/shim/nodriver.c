/* The shim with no real driver behind it: every entry returns an error, nothing crashes.
 * usage: nodriver SHIM   (run with GPUPROBE_REAL_LIBCUDA naming something that is no driver)
 * Prints each call's result; nodriver.sh checks them and the shim's one line on stderr. */
#include <dlfcn.h>
#include <stdio.h>

typedef int CUresult;

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: nodriver SHIM\n");
		return 2;
	}
	void *shim = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!shim) {
		printf("dlopen: %s\n", dlerror());
		return 1;
	}
	void *p = (void *)1;
	int status = -1, version = -1;
	void *mod = NULL;
	printf("cuInit %d\n", ((CUresult (*)(unsigned))dlsym(shim, "cuInit"))(0));
	printf("cuInit again %d\n", ((CUresult (*)(unsigned))dlsym(shim, "cuInit"))(0));
	/* Each call before the printf: argument evaluation order is unspecified. */
	CUresult rc = ((CUresult (*)(const char *, void **, int, unsigned long long, int *))
		       dlsym(shim, "cuGetProcAddress_v2"))("cuInit", &p, 13000, 0, &status);
	printf("cuGetProcAddress_v2 %d pfn %s status %d\n", rc, p ? "set" : "NULL", status);
	p = (void *)1;
	rc = ((CUresult (*)(const char *, void **, int, unsigned long long))
	      dlsym(shim, "cuGetProcAddress"))("cuInit", &p, 13000, 0);
	printf("cuGetProcAddress %d pfn %s\n", rc, p ? "set" : "NULL");
	rc = ((CUresult (*)(int *))dlsym(shim, "cuDriverGetVersion"))(&version);
	printf("cuDriverGetVersion %d version %d\n", rc, version);
	printf("cuModuleLoadData %d\n",
	       ((CUresult (*)(void **, const void *))dlsym(shim, "cuModuleLoadData"))(&mod, "x"));
	printf("cuLaunchKernel %d\n",
	       ((CUresult (*)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			      unsigned, void *, void **, void **))dlsym(shim, "cuLaunchKernel"))(
		       NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
	const char *name = NULL, *text = NULL;
	rc = ((CUresult (*)(CUresult, const char **))dlsym(shim, "cuGetErrorName"))(100, &name);
	printf("cuGetErrorName %d %s\n", rc, name ? name : "NULL");
	rc = ((CUresult (*)(CUresult, const char **))dlsym(shim, "cuGetErrorString"))(3, &text);
	printf("cuGetErrorString %d %s\n", rc, text ? text : "NULL");
	rc = ((CUresult (*)(CUresult, const char **))dlsym(shim, "cuGetErrorName"))(999, &name);
	printf("cuGetErrorName(999) %d %s\n", rc, name ? name : "NULL");
	printf("cuMemcpyHtoD_v2_ptds %d\n",
	       ((CUresult (*)(unsigned long long, const void *, size_t))
		dlsym(shim, "cuMemcpyHtoD_v2_ptds"))(0, "x", 1));
	return 0;
}
