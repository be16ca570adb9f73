/* Runs the verifier's fuzz target (fuzz/verifier_fuzz.c) without libFuzzer: every seed under the
 * given folder, then N pseudo-random inputs in both modes (fixed seed, so a failure reproduces).
 * Under -DGPUPROBE_SANITIZE=ON this is the fuzz target's bounded CI run.
 * usage: fuzz_replay SEED_DIR [N] */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
extern unsigned long verifier_fuzz_accepted_runs;

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s SEED_DIR [N]\n", argv[0]);
		return 2;
	}
	long n = argc > 2 ? strtol(argv[2], NULL, 10) : 2000;
	DIR *d = opendir(argv[1]);
	if (!d) {
		fprintf(stderr, "cannot open %s\n", argv[1]);
		return 2;
	}
	struct dirent *e;
	int seeds = 0;
	static uint8_t buf[1 << 16];
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", argv[1], e->d_name);
		FILE *f = fopen(path, "rb");
		if (!f)
			continue;
		size_t len = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		LLVMFuzzerTestOneInput(buf, len);
		buf[0] |= 1;   /* the same bytes in structured mode */
		LLVMFuzzerTestOneInput(buf, len);
		seeds++;
	}
	closedir(d);
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	for (long i = 0; i < n; i++) {
		size_t len = 2 + 8 * (1 + (size_t)(i % 200));
		for (size_t k = 0; k < len; k++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			buf[k] = (uint8_t)x;
		}
		buf[0] = (uint8_t)((buf[0] & ~1) | (i & 1));
		LLVMFuzzerTestOneInput(buf, len);
	}
	printf("fuzz replay: %d seeds (raw and structured) and %ld random inputs, no crash; %lu verified "
	       "programs ran on the interpreter without a fault\n", seeds, n, verifier_fuzz_accepted_runs);
	return 0;
}
