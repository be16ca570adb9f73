/* Host API probes without a GPU (nvidia/host.h): the probe set opened on host memory, its host
 * programs run as the shim runs them around cuLaunchKernel; the map they share with the device
 * program holds exactly what they counted. usage: e2e_host_test host.bpf.o */
#include "nvidia/host.h"
#include "ebpf/object_internal.h"

#include <errno.h>
#include <stdlib.h>

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t realtime_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* A line into the char buffer user (the last one kept). */
static void note_line(void *user, const char *line)
{
	snprintf(user, 1024, "%s", line);
}

/* examples/launchlate: its host probe stores bpf_get_globaltimer() (CLOCK_REALTIME on the host)
 * at each launch and counts launches. */
static int launchlate(const char *path)
{
	char err[1024] = "";
	const char *paths[1] = {path};
	struct gp_nv_probes_opts o = {0};
	struct gp_nv_probes *ps;
	struct gp_nv_host *h;
	if (gp_nv_probes__open(paths, NULL, 1, &o, &ps, err, sizeof(err)) ||
	    gp_nv_host__open(ps, &h, err, sizeof(err)) || !h) {
		printf("FAIL launchlate open: %s\n", err);
		return 1;
	}
	uint64_t a[8] = {0x1000, 4, 1, 1, 32, 1, 1, 0};
	uint64_t t0 = realtime_ns();
	gp_nv_host__run(h, 0, "cuLaunchKernel", a, 8, 0, NULL, NULL, err, sizeof(err));
	gp_nv_host__run(h, 0, "cuLaunchKernelEx_ptsz", a, 8, 0, NULL, NULL, err, sizeof(err));
	uint64_t t1 = realtime_ns(), t = 0, n = 0;
	uint32_t k = 0;
	gp_map_inst__lookup(gp_map_set__find(gp_nv_probes__maps(ps, 0), "launch_ns"), &k, &t);
	gp_map_inst__lookup(gp_map_set__find(gp_nv_probes__maps(ps, 0), "launches"), &k, &n);
	int bad = n != 2 || t < t0 || t > t1;
	printf("%s launchlate host probe: launches %llu (expected 2), launch time %s\n", bad ? "FAIL" : "ok  ",
	       (unsigned long long)n, t >= t0 && t <= t1 ? "within the calls" : "outside the calls");
	gp_nv_host__close(h);
	gp_nv_probes__close(ps);
	return bad;
}


/* examples/launchlate/launchlate_bpftime.bpf.c: bpftime's section forms
 * (uprobe/./vec_add:<mangled cudaLaunchKernel<char>>, kprobe/<kernel>) load; the uprobe runs at
 * every cuLaunchKernel* the runtime's cudaLaunchKernel makes, and its BPF_KPROBE arguments
 * func, gridDim, blockDim (di, si, dx) hold what the x86-64 ABI puts there at the runtime call:
 * func, grid.x | grid.y << 32, grid.z. */
static int bpftime_launchlate(const char *path)
{
	char err[1024] = "";
	const char *paths[1] = {path};
	struct gp_nv_probes_opts o = {0};
	struct gp_nv_probes *ps;
	struct gp_nv_host *h;
	if (gp_nv_probes__open(paths, NULL, 1, &o, &ps, err, sizeof(err)) ||
	    gp_nv_host__open(ps, &h, err, sizeof(err)) || !h) {
		printf("FAIL bpftime launchlate open: %s\n", err);
		return 1;
	}
	int bad = 0;
#define BCHECK(what, expect, got)                                                                  \
	do {                                                                                       \
		unsigned long long e_ = (expect), g_ = (got);                                      \
		printf("%s bpftime launchlate %s: expected %llu, got %llu\n", e_ == g_ ? "ok  " : "FAIL", \
		       what, e_, g_);                                                              \
		bad |= e_ != g_;                                                                   \
	} while (0)
	BCHECK("device programs (kprobe)", 1, gp_nv_probes__device_programs(ps));
	BCHECK("uprobe runs at cuLaunchKernel", 1, gp_nv_host__wants(h, 0, "cuLaunchKernel"));
	BCHECK("uprobe runs at cuLaunchKernel_ptsz", 1, gp_nv_host__wants(h, 0, "cuLaunchKernel_ptsz"));
	BCHECK("uprobe runs at cuLaunchKernelEx", 1, gp_nv_host__wants(h, 0, "cuLaunchKernelEx"));
	BCHECK("not at cuLaunchCooperativeKernel", 0, gp_nv_host__wants(h, 0, "cuLaunchCooperativeKernel"));
	BCHECK("no exit program", 0, gp_nv_host__wants(h, 1, "cuLaunchKernel"));
	char note[1024] = "";
	BCHECK("notes", 1, gp_nv_host__notes(h, note_line, note));
	const char *want_note = "host probe uprobe_cuda_launch: uprobe/./vec_add:_Z16cudaLaunchKernelIcE9cudaErrorPT_"
				"4dim3S3_PPvmP11CUstream_st runs at entry of the driver's cuLaunchKernel* (binary "
				"path './vec_add' ignored; registers: cudaLaunchKernel's: di func (the CUfunction), si "
				"grid x|y<<32, dx grid z, cx block x|y<<32, r8 block z, r9 0, ax the CUresult at exit)";
	printf("%s bpftime launchlate note: %s\n", strcmp(note, want_note) ? "FAIL" : "ok  ", note);
	bad |= strcmp(note, want_note) != 0;
	/* vectorAdd<<<dim3(4, 3, 2), 32>>> then a launch through cuLaunchKernelEx_ptsz */
	uint64_t a1[8] = {0xf00d, 4, 3, 2, 32, 1, 1, 0}, a2[8] = {0xbeef, 7, 1, 1, 64, 1, 1, 128};
	char printed[1024] = "";
	uint64_t t0 = realtime_ns();
	BCHECK("run 1", 1, gp_nv_host__run(h, 0, "cuLaunchKernel", a1, 8, 0, note_line, printed, err, sizeof(err)));
	uint64_t t1 = realtime_ns();
	struct gp_map_set *ms = gp_nv_probes__maps(ps, 0);
	uint64_t v[3] = {0}, t = 0, n = 0;
	for (uint32_t k = 0; k < 3; k++)
		gp_map_inst__lookup(gp_map_set__find(ms, "last_launch"), &k, &v[k]);
	uint32_t k0 = 0;
	gp_map_inst__lookup(gp_map_set__find(ms, "launch_ns"), &k0, &t);
	BCHECK("func (PT_REGS_PARM1)", 0xf00d, v[0]);
	BCHECK("gridDim (PT_REGS_PARM2 = grid x | y << 32)", 4 | 3ull << 32, v[1]);
	BCHECK("blockDim (PT_REGS_PARM3 = grid z)", 2, v[2]);
	BCHECK("launch time within the call", 1, t >= t0 && t <= t1);
	char want_print[128];
	snprintf(want_print, sizeof(want_print), "cudaLaunchKernel from pid %u: grid.x 4", (unsigned)getpid());
	printf("%s bpftime launchlate printk: '%s'\n", strcmp(printed, want_print) ? "FAIL" : "ok  ", printed);
	bad |= strcmp(printed, want_print) != 0;
	BCHECK("run 2", 1, gp_nv_host__run(h, 0, "cuLaunchKernelEx_ptsz", a2, 8, 0, NULL, NULL, err, sizeof(err)));
	for (uint32_t k = 0; k < 3; k++)
		gp_map_inst__lookup(gp_map_set__find(ms, "last_launch"), &k, &v[k]);
	gp_map_inst__lookup(gp_map_set__find(ms, "host_launches"), &k0, &n);
	BCHECK("launches counted", 2, n);
	BCHECK("func of launch 2", 0xbeef, v[0]);
	BCHECK("gridDim of launch 2", 7 | 1ull << 32, v[1]);
	BCHECK("no run on cuCtxSynchronize", 0, gp_nv_host__run(h, 0, "cuCtxSynchronize", a1, 0, 0, NULL, NULL, err, sizeof(err)));
#undef BCHECK
	gp_nv_host__close(h);
	gp_nv_probes__close(ps);
	return bad;
}

/* Section forms of bpftime's host probes (ebpf/object_attach.c): what each becomes, or the one
 * error line it gets. */
static int uprobe_sections(void)
{
	static const struct {
		const char *section;
		enum gp_attach_kind kind;
		const char *target_or_error;
	} t[] = {
		{"uprobe/./vec_add:_Z16cudaLaunchKernelIcE9cudaErrorPT_4dim3S3_PPvmP11CUstream_st",
		 GP_ATTACH_HOST_ENTRY, "cuLaunchKernel*"},
		{"uretprobe//opt/app/bin/app:cudaLaunchKernel", GP_ATTACH_HOST_EXIT, "cuLaunchKernel*"},
		{"uprobe/libcudart.so.13:cudaLaunchKernel_ptsz", GP_ATTACH_HOST_ENTRY, "cuLaunchKernel*"},
		{"uprobe/cudaLaunchCooperativeKernel", GP_ATTACH_HOST_ENTRY, "cuLaunchCooperativeKernel*"},
		{"uretprobe/./app:cudaDeviceSynchronize", GP_ATTACH_HOST_EXIT, "cuCtxSynchronize"},
		{"uprobe/./app:cudaStreamSynchronize", GP_ATTACH_HOST_ENTRY, "cuStreamSynchronize"},
		{"uprobe/libcuda.so.1:cuMemcpyHtoD_v2", GP_ATTACH_HOST_ENTRY, "cuMemcpyHtoD_v2"},
		{"uprobe", GP_ATTACH_NONE,
		 "section 'uprobe' names no function (bpftime's loader attaches it at run time); gpuprobe needs"
		 " uprobe/<binary>:<function>, with <function> one of cudaLaunchKernel, cudaLaunchCooperativeKernel,"
		 " cudaDeviceSynchronize, cudaStreamSynchronize (also as C++ mangled names and _ptsz forms) or a"
		 " driver function cu*"},
		{"uprobe/./app:cudaMemcpy", GP_ATTACH_NONE,
		 "section 'uprobe/./app:cudaMemcpy': function 'cudaMemcpy' is not supported: gpuprobe runs uprobes"
		 " at the CUDA calls it sees: cudaLaunchKernel, cudaLaunchCooperativeKernel, cudaDeviceSynchronize,"
		 " cudaStreamSynchronize (also as C++ mangled names and _ptsz forms) or a driver function cu*"},
		{"uretprobe/./app:cudaLaunchKernel+16", GP_ATTACH_NONE,
		 "section 'uretprobe/./app:cudaLaunchKernel+16': uprobes at an offset into a function are not"
		 " supported (gpuprobe runs uprobes at CUDA calls, not at instructions)"},
		{"uprobe/./app:_Z3", GP_ATTACH_NONE, "section 'uprobe/./app:_Z3': cannot read a function name in '_Z3'"},
	};
	int bad = 0;
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		enum gp_attach_kind kind;
		char *target = NULL, err[512] = "";
		unsigned mf;
		int ba, rc = gp_parse_attach(t[i].section, &kind, &target, &mf, &ba, err, sizeof err);
		int ok = t[i].kind == GP_ATTACH_NONE ? rc == -EINVAL && !strcmp(err, t[i].target_or_error)
						    : !rc && kind == t[i].kind && target &&
							      !strcmp(target, t[i].target_or_error);
		printf("%s section %s -> %s\n", ok ? "ok  " : "FAIL", t[i].section, rc ? err : target ? target : "(none)");
		bad |= !ok;
		free(target);
	}
	return bad;
}

static int fail;
#define CHECK(what, expect, got)                                                           \
	do {                                                                               \
		long long e_ = (long long)(expect), g_ = (long long)(got);                \
		printf("%s %s: expected %lld, got %lld\n", e_ == g_ ? "ok  " : "FAIL", what, e_, g_); \
		fail |= e_ != g_;                                                          \
	} while (0)

int main(int argc, char **argv)
{
	char err[1024] = "";
	if (argc < 2 || argc > 4)
		return 2;
	fail |= uprobe_sections();
	if (argc >= 3)
		fail |= launchlate(argv[2]);
	if (argc >= 4)
		fail |= bpftime_launchlate(argv[3]);
	const char *paths[1] = {argv[1]};
	struct gp_nv_probes_opts o = {0};
	struct gp_nv_probes *ps;
	if (gp_nv_probes__open(paths, NULL, 1, &o, &ps, err, sizeof(err))) {
		printf("FAIL open: %s\n", err);
		return 1;
	}
	CHECK("device programs", 1, gp_nv_probes__device_programs(ps));
	struct gp_nv_host *h;
	CHECK("host open", 0, gp_nv_host__open(ps, &h, err, sizeof(err)));
	CHECK("wants cuLaunchKernel entry", 1, gp_nv_host__wants(h, 0, "cuLaunchKernel"));
	CHECK("wants cuLaunchKernel_ptsz entry (suffix stripped)", 1, gp_nv_host__wants(h, 0, "cuLaunchKernel_ptsz"));
	CHECK("no cuLaunchKernelEx entry", 0, gp_nv_host__wants(h, 0, "cuLaunchKernelEx"));
	CHECK("wants cuLaunchKernelEx exit (glob)", 1, gp_nv_host__wants(h, 1, "cuLaunchKernelEx"));
	CHECK("no cuMemcpyHtoD_v2 probe", 0, gp_nv_host__wants(h, 0, "cuMemcpyHtoD_v2"));
	uint64_t a1[8] = {0x1000, 4, 1, 1, 32, 1, 1, 0}, a2[8] = {0x1000, 2, 1, 1, 64, 1, 1, 0};
	CHECK("entry run 1", 1, gp_nv_host__run(h, 0, "cuLaunchKernel", a1, 8, 0, NULL, NULL, err, sizeof(err)));
	CHECK("entry run 2", 1, gp_nv_host__run(h, 0, "cuLaunchKernel_ptsz", a2, 8, 0, NULL, NULL, err, sizeof(err)));
	CHECK("exit run ok", 1, gp_nv_host__run(h, 1, "cuLaunchKernel", a1, 8, 0, NULL, NULL, err, sizeof(err)));
	CHECK("exit run failed launch", 1, gp_nv_host__run(h, 1, "cuLaunchKernelEx", a1, 8, 700, NULL, NULL, err, sizeof(err)));
	CHECK("no program on cuMemcpyHtoD_v2", 0, gp_nv_host__run(h, 0, "cuMemcpyHtoD_v2", a1, 3, 0, NULL, NULL, err, sizeof(err)));
	struct gp_map_inst *m = gp_map_set__find(gp_nv_probes__maps(ps, 0), "launches");
	uint64_t v[4] = {0};
	for (uint32_t k = 0; m && k < 4; k++)
		gp_map_inst__lookup(m, &k, &v[k]);
	CHECK("map found", 1, m != NULL);
	CHECK("launches (host entry)", 2, v[0]);
	CHECK("threads launched (host entry, 4x32 + 2x64)", 256, v[1]);
	CHECK("failed launches (host exit)", 1, v[2]);
	CHECK("device slot untouched", 0, v[3]);
	gp_nv_host__close(h);
	gp_nv_probes__close(ps);
	return fail;
}
