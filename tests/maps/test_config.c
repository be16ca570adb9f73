/* The probe configuration file: the documented example parses to what it says, every kind of
 * mistake gives its exact message, and files others could write are refused. */
#include "maps/config.h"
#include "check.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef EXAMPLE_CONFIG
#define EXAMPLE_CONFIG "examples/config.yaml"
#endif

static void expect_error(const char *text, const char *msg)
{
	struct gp_config cfg;
	char err[512] = "";
	int rc = gp_config__parse(text, strlen(text), "t.yaml", NULL, &cfg, err, sizeof(err));
	CHECK_EQ(rc, -EINVAL);
	CHECK_STR(err, msg);
}

static char tmpdir[] = "/tmp/gp_config_XXXXXX";

static void write_file(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
	chmod(path, mode);
}

int main(void)
{
	struct gp_config cfg;
	char err[512] = "";
	/* parsed from its text: a checkout made with umask 002 leaves it group-writable, which
	 * gp_config__load rightly refuses (tested below on a file of our own) */
	char text[8192];
	FILE *ef = fopen(EXAMPLE_CONFIG, "r");
	size_t tlen = ef ? fread(text, 1, sizeof(text), ef) : 0;
	if (ef)
		fclose(ef);
	char base[1024];
	snprintf(base, sizeof(base), "%.*s", (int)(strrchr(EXAMPLE_CONFIG, '/') - EXAMPLE_CONFIG), EXAMPLE_CONFIG);
	int rc = gp_config__parse(text, tlen, EXAMPLE_CONFIG, base, &cfg, err, sizeof(err));
	if (rc)
		fprintf(stderr, "%s\n", err);
	CHECK_EQ(rc, 0);
	CHECK_EQ(cfg.nprobes, 2);
	if (cfg.nprobes == 2) {
		const char *slash = strrchr(EXAMPLE_CONFIG, '/');
		char want[1024];
		snprintf(want, sizeof(want), "%.*s/mem_trace.bpf.o",
			 (int)(slash - EXAMPLE_CONFIG), EXAMPLE_CONFIG);
		CHECK_STR(cfg.probes[1].path, want);
		CHECK_EQ(cfg.probes[0].nkernels, 0);
		CHECK_EQ(cfg.probes[1].nkernels, 2);
	}
	CHECK_EQ(cfg.interval_s, 5);
	CHECK_EQ(cfg.top_n, 20);
	CHECK_EQ(cfg.printk_ring_bytes, 65536);
	CHECK_EQ(gp_config__placement(&cfg, "launches_by_kernel"), GP_MAP_PLACE_HOST);
	CHECK_EQ(gp_config__placement(&cfg, "counts"), GP_MAP_PLACE_DEVICE);
	CHECK_EQ(gp_config__placement(&cfg, "other"), GP_MAP_PLACE_DEVICE);
	/* kernel filters: global exclude, per-probe list, mangled or demangled */
	CHECK_EQ(gp_config__kernel_selected(&cfg, 0, "_Z4ncclAllReducev", "ncclAllReduce()"), 0);
	CHECK_EQ(gp_config__kernel_selected(&cfg, 0, "_Z3foov", "foo()"), 1);
	CHECK_EQ(gp_config__kernel_selected(&cfg, 1, "_Z3foov", "foo()"), 0);
	CHECK_EQ(gp_config__kernel_selected(&cfg, 1, "_Z6vecAddPKfS0_Pfi", NULL), 1);
	CHECK_EQ(gp_config__kernel_selected(&cfg, 1, "_Z5sgemmv", "sgemm()"), 1);
	CHECK_EQ(gp_config__kernel_selected(&cfg, -1, "_ZN3cub6kernelEv", "cub::kernel()"), 0);
	gp_config__free(&cfg);

	/* a probe as a plain path, and an empty file */
	const char *plain = "probes:\n  - a.bpf.o\n";
	CHECK_EQ(gp_config__parse(plain, strlen(plain), "t.yaml", "/cfg", &cfg, err, sizeof(err)), 0);
	CHECK_STR(cfg.probes[0].path, "/cfg/a.bpf.o");
	gp_config__free(&cfg);
	CHECK_EQ(gp_config__parse("", 0, "t.yaml", NULL, &cfg, err, sizeof(err)), 0);
	CHECK_EQ(cfg.nprobes, 0);
	gp_config__free(&cfg);

	expect_error("foo: 1\n", "t.yaml:1:1: unknown section 'foo' (expected probes, kernels, maps, output, limits)");
	expect_error("- a\n", "t.yaml:1:1: the configuration must be a mapping (probes:, kernels:, maps:, output:, limits:)");
	expect_error("output:\n  interval: -3\n", "t.yaml:2:13: output.interval must be a whole number");
	expect_error("output:\n  interval: 5s\n", "t.yaml:2:13: output.interval must be a whole number from 0 to 86400, not '5s'");
	expect_error("output:\n  colour: red\n", "t.yaml:2:3: unknown key 'colour' in output (expected interval, json, top)");
	expect_error("maps:\n  counts:\n    placement: gpu\n", "t.yaml:3:16: placement of map counts must be device or host, not 'gpu'");
	expect_error("maps:\n  counts: host\n", "t.yaml:2:11: a map's settings must be a mapping");
	expect_error("probes:\n  - kernels: [a]\n", "t.yaml:2:5: a probe needs a path");
	expect_error("probes:\n  - path: a.o\n    kernel: [a]\n", "t.yaml:3:5: unknown key 'kernel' in a probe (expected path, kernels)");
	expect_error("probes: a.o\n", "t.yaml:1:9: probes must be a list");
	expect_error("kernels:\n  include: [[a]]\n", "t.yaml:2:13: each entry of include must be a value");
	expect_error("output: {interval: 1\n", "t.yaml:2:1: did not find expected ',' or '}'");
	expect_error("limits:\n  perthread_slots: 99999999\n", "t.yaml:2:20: limits.perthread_slots must be a whole number from 0 to 16777216, not '99999999'");

	/* files others could write are refused, with the reason and the fix */
	CHECK(mkdtemp(tmpdir) != NULL);
	char path[256];
	snprintf(path, sizeof(path), "%s/c.yaml", tmpdir);
	write_file(path, "output:\n  interval: 1\n", 0664);
	char want[1024];
	snprintf(want, sizeof(want),
		 "%s: refusing a probe configuration that its group can write (mode 0664); run: chmod go-w %s",
		 path, path);
	CHECK_EQ(gp_config__load(path, &cfg, err, sizeof(err)), -EPERM);
	CHECK_STR(err, want);
	chmod(path, 0602);
	snprintf(want, sizeof(want),
		 "%s: refusing a probe configuration that everyone can write (mode 0602); run: chmod go-w %s",
		 path, path);
	CHECK_EQ(gp_config__load(path, &cfg, err, sizeof(err)), -EPERM);
	CHECK_STR(err, want);
	chmod(path, 0644);
	CHECK_EQ(gp_config__load(path, &cfg, err, sizeof(err)), 0);
	CHECK_EQ(cfg.interval_s, 1);
	gp_config__free(&cfg);
	CHECK_EQ(gp_config__check_file(tmpdir, "a probe object", err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s: a probe object is not a regular file", tmpdir);
	CHECK_STR(err, want);
	snprintf(path, sizeof(path), "%s/missing.yaml", tmpdir);
	CHECK_EQ(gp_config__load(path, &cfg, err, sizeof(err)), -ENOENT);
	snprintf(want, sizeof(want), "%s: cannot read a probe configuration: No such file or directory", path);
	CHECK_STR(err, want);
	snprintf(path, sizeof(path), "%s/c.yaml", tmpdir);
	unlink(path);
	rmdir(tmpdir);
	CHECK_DONE();
}
