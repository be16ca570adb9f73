/* Host API probes without a GPU (nvidia/host.h): the probe set opened on host memory, its host
 * programs run as the shim runs them around cuLaunchKernel; the map they share with the device
 * program holds exactly what they counted. usage: e2e_host_test host.bpf.o */
#include "nvidia/host.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static uint64_t realtime_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
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
	if (argc != 2 && argc != 3)
		return 2;
	if (argc == 3)
		fail |= launchlate(argv[2]);
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
