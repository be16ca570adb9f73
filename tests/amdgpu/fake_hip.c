/* A stand-in libamdhip64 for testing the HIP backend without an AMD GPU: memory is host memory,
 * streams and events complete at once, hipModuleLoadData checks that it gets an AMDGPU code
 * object (ELF64, EM_AMDGPU, a shared object) and learns its kernels from the NAME.kd symbols,
 * hipModuleLaunchKernel runs nothing but records the launch. Every call that matters is written
 * to FAKE_HIP_LOG, one line each. FAKE_HIP_VERSION: what hipRuntimeGetVersion says
 * (default 60200000, HIP 6.2). */
#include <elf.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void logf_(const char *fmt, ...)
{
	const char *p = getenv("FAKE_HIP_LOG");
	if (!p)
		return;
	FILE *f = fopen(p, "a");
	if (!f)
		return;
	va_list ap;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fclose(f);
}

int hipInit(unsigned f) { (void)f; logf_("hipInit"); return 0; }
int hipGetDeviceCount(int *n) { *n = 1; return 0; }
int hipSetDevice(int d) { return d == 0 ? 0 : 101; }
int hipDeviceGetName(char *s, int n, int d) { snprintf(s, (size_t)n, "Fake AMD GPU"); return 0; }
int hipRuntimeGetVersion(int *v)
{
	const char *e = getenv("FAKE_HIP_VERSION");
	*v = e ? atoi(e) : 60200000;
	return 0;
}
int hipMemGetInfo(size_t *fr, size_t *total) { *fr = *total = (size_t)64 << 30; return 0; }
const char *hipGetErrorString(int e) { return e == 2 ? "hipErrorOutOfMemory" : e == 500 ? "hipErrorNotFound" : "hipError"; }
int hipMalloc(void **p, size_t n) { *p = calloc(1, n); logf_("hipMalloc %zu", n); return *p ? 0 : 2; }
int hipFree(void *p) { free(p); logf_("hipFree"); return 0; }
int hipHostMalloc(void **p, size_t n, unsigned fl) { *p = calloc(1, n); logf_("hipHostMalloc %zu flags %u", n, fl); return *p ? 0 : 2; }
int hipHostFree(void *p) { free(p); logf_("hipHostFree"); return 0; }
int hipMemcpyAsync(void *d, const void *s, size_t n, int kind, void *st)
{
	memmove(d, s, n);
	logf_("hipMemcpyAsync %zu kind %d", n, kind);
	return 0;
}
int hipMemsetD8Async(void *d, unsigned char v, size_t n, void *s) { memset(d, v, n); logf_("hipMemsetD8Async %zu", n); return 0; }
int hipMemsetD16Async(void *d, unsigned short v, size_t n, void *s)
{
	for (size_t i = 0; i < n; i++)
		((unsigned short *)d)[i] = v;
	logf_("hipMemsetD16Async %zu", n);
	return 0;
}
int hipMemsetD32Async(void *d, int v, size_t n, void *s)
{
	for (size_t i = 0; i < n; i++)
		((int *)d)[i] = v;
	logf_("hipMemsetD32Async %zu", n);
	return 0;
}
static int nstreams, nevents;
int hipStreamCreate(void **s) { *s = (void *)(uintptr_t)(0x5000 + ++nstreams); logf_("hipStreamCreate"); return 0; }
int hipStreamDestroy(void *s) { logf_("hipStreamDestroy"); return 0; }
int hipStreamSynchronize(void *s) { logf_("hipStreamSynchronize"); return 0; }
int hipStreamWaitEvent(void *s, void *e, unsigned f) { logf_("hipStreamWaitEvent"); return 0; }
int hipEventCreate(void **e) { *e = calloc(1, sizeof(double)); ++nevents; return 0; }
int hipEventRecord(void *e, void *s) { *(double *)e = 0.25 * nevents; logf_("hipEventRecord"); return 0; }
int hipEventQuery(void *e) { return 0; }
int hipEventSynchronize(void *e) { return 0; }
int hipEventElapsedTime(float *ms, void *a, void *b) { *ms = (float)(*(double *)b - *(double *)a); return 0; }
int hipEventDestroy(void *e) { free(e); return 0; }

struct mod { char kernels[16][128]; int n; };
struct fn { struct mod *m; char name[128]; };

int hipModuleLoadData(void **out, const void *image)
{
	const unsigned char *p = image;
	const Elf64_Ehdr *eh = image;
	if (memcmp(p, ELFMAG, SELFMAG) || p[EI_CLASS] != ELFCLASS64 || eh->e_machine != 224 || eh->e_type != ET_DYN) {
		logf_("hipModuleLoadData: not an AMDGPU code object");
		return 200;   /* hipErrorInvalidImage */
	}
	struct mod *m = calloc(1, sizeof(*m));
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(p + eh->e_shoff);
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != SHT_DYNSYM)
			continue;
		const char *strs = (const char *)p + sh[sh[i].sh_link].sh_offset;
		const Elf64_Sym *sym = (const Elf64_Sym *)(p + sh[i].sh_offset);
		for (size_t k = 0; k < sh[i].sh_size / sizeof(Elf64_Sym); k++) {
			const char *nm = strs + sym[k].st_name;
			size_t l = strlen(nm);
			if (l > 3 && !strcmp(nm + l - 3, ".kd") && m->n < 16)
				snprintf(m->kernels[m->n++], 128, "%.*s", (int)(l - 3), nm);
		}
	}
	logf_("hipModuleLoadData: AMDGPU code object, ABI version %u, flags 0x%x, %d kernel(s)%s%s", p[EI_ABIVERSION],
	      eh->e_flags, m->n, m->n ? ", first " : "", m->n ? m->kernels[0] : "");
	*out = m;
	return 0;
}
int hipModuleUnload(void *m) { free(m); logf_("hipModuleUnload"); return 0; }
int hipModuleGetFunction(void **f, void *mod, const char *name)
{
	struct mod *m = mod;
	for (int i = 0; i < m->n; i++)
		if (!strcmp(m->kernels[i], name)) {
			struct fn *n = calloc(1, sizeof(*n));
			n->m = m;
			snprintf(n->name, sizeof(n->name), "%s", name);
			*f = n;
			return 0;
		}
	return 500;   /* hipErrorNotFound */
}
int hipModuleLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
			  unsigned shared, void *stream, void **params, void **extra)
{
	struct fn *fn = f;
	logf_("launch %s grid %u %u %u block %u %u %u shared %u first-arg 0x%llx", fn->name, gx, gy, gz, bx, by, bz,
	      shared, params && params[0] ? (unsigned long long)*(uint64_t *)params[0] : 0ull);
	return 0;
}
