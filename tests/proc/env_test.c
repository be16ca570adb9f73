/* common/env.c as a unit: ranges, overflow, garbage, alignment, the secure-mode rule, and one
 * line per bad variable (stderr is captured in a file and compared at the end). */
#include "common/env.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fails;
#define CHECK(c, ...) do { if (!(c)) { fails++; printf("FAIL %s:%d: ", __FILE__, __LINE__); \
	printf(__VA_ARGS__); printf("\n"); } } while (0)

static void addr(const char *v, int want_rc, unsigned long long want)
{
	uint64_t got = 1;
	setenv("GPUPROBE_MAP_VA", v, 1);
	int rc = gp_env_uint_get(GP_VAR_MAP_VA, &got);
	CHECK(rc == want_rc && got == want, "GPUPROBE_MAP_VA=%s: rc %d value %#llx", v, rc,
	      (unsigned long long)got);
}

static void growth(const char *v, int want_rc, unsigned long long want)
{
	uint64_t got = 1;
	setenv("GPUPROBE_INLINE_GROWTH", v, 1);
	int rc = gp_env_uint_get(GP_VAR_INLINE_GROWTH, &got);
	CHECK(rc == want_rc && got == want, "GPUPROBE_INLINE_GROWTH=%s: rc %d value %llu", v, rc,
	      (unsigned long long)got);
}

int main(void)
{
	char errpath[] = "/tmp/gp-env-XXXXXX";
	int efd = mkstemp(errpath);
	int saved = dup(2);
	dup2(efd, 2);
	const unsigned long long dflt = 0x600000000000ull;

	addr("0x600000000000", 1, dflt);
	addr("0x7ef000000000", 1, 0x7ef000000000ull);      /* the highest: host range ends at 2^47 */
	addr("0", 1, 0);
	addr("0x600000001000", -EINVAL, dflt);             /* page-aligned, not 2 MiB */
	addr("0x600000000001", -EINVAL, dflt);             /* not even page-aligned */
	addr("0xffffffffffe00000", -EINVAL, dflt);         /* the ranges would wrap */
	addr("0x7ef000200000", -EINVAL, dflt);             /* host range beyond user space */
	addr("0x10000000000000000", -EINVAL, dflt);        /* more than 64 bits */
	addr("-0x200000", -EINVAL, dflt);
	addr(" 0x600000000000", -EINVAL, dflt);
	addr("0x", -EINVAL, dflt);
	addr("high", -EINVAL, dflt);
	unsetenv("GPUPROBE_MAP_VA");
	uint64_t v = 1;
	CHECK(gp_env_uint_get(GP_VAR_MAP_VA, &v) == 0 && v == dflt, "unset MAP_VA");

	growth("16", 1, 16);
	growth("1000", 1, 1000);
	growth("abc", -EINVAL, 2);                          /* garbage is an error, not 0 */
	growth("0", -EINVAL, 2);
	growth("12abc", -EINVAL, 2);
	growth("-3", -EINVAL, 2);
	growth("99999999999999999999999", -EINVAL, 2);      /* overflow */
	growth("9223372036854775807", -EINVAL, 2);          /* would overflow k * size */
	unsetenv("GPUPROBE_INLINE_GROWTH");
	CHECK(gp_env_uint(GP_VAR_INLINE_GROWTH) == 2, "unset growth");

	setenv("GPUPROBE_LOG", "yes", 1);
	CHECK(gp_env_flag(GP_VAR_LOG) == 1, "LOG=yes");
	setenv("GPUPROBE_LOG", "maybe", 1);
	CHECK(gp_env_flag(GP_VAR_LOG) == 0, "LOG=maybe");
	setenv("GPUPROBE_PRECOMPILE", "link", 1);
	CHECK(gp_env_choice(GP_VAR_PRECOMPILE) == 1, "PRECOMPILE=link");
	setenv("GPUPROBE_PRECOMPILE", "fast", 1);
	CHECK(gp_env_choice(GP_VAR_PRECOMPILE) == 2, "PRECOMPILE=fast gives 0");

	/* as in a setuid process: no path, no driver, nothing of ours */
	setenv("GPUPROBE_REAL_LIBCUDA", "/tmp/evil/libcuda.so.1", 1);
	setenv("GPUPROBE_CACHE_DIR", "/tmp/evil", 1);
	CHECK(gp_env_str(GP_VAR_REAL_LIBCUDA) != NULL, "REAL_LIBCUDA honoured normally");
	setenv("GPUPROBE_TEST_SECURE", "1", 1);
	CHECK(gp_env_secure(), "secure");
	CHECK(gp_env_str(GP_VAR_REAL_LIBCUDA) == NULL, "REAL_LIBCUDA in secure mode");
	CHECK(gp_env_str(GP_VAR_CACHE_DIR) == NULL, "CACHE_DIR in secure mode");
	CHECK(gp_env_str(GP_VAR_HOME) == NULL, "HOME in secure mode");
	CHECK(gp_env_flag(GP_VAR_LOG) == 0, "LOG in secure mode");

	fflush(stderr);
	dup2(saved, 2);
	char buf[4096] = "";
	lseek(efd, 0, SEEK_SET);
	ssize_t n = read(efd, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = 0;
	close(efd);
	unlink(errpath);
	/* one line per variable and process, the first bad value's */
	const char *want =
		"gpuprobe: GPUPROBE_MAP_VA=0x600000001000: expected 0 or a 2 MiB-aligned address up to "
		"0x7ef000000000; using 0x600000000000\n"
		"gpuprobe: GPUPROBE_INLINE_GROWTH=abc: expected a whole number from 1 to 1000; using 2\n"
		"gpuprobe: GPUPROBE_LOG=maybe: expected 1 or 0; using 0\n"
		"gpuprobe: GPUPROBE_PRECOMPILE=fast: expected check, link or 0; using 0\n"
		"gpuprobe: GPUPROBE_REAL_LIBCUDA ignored: a setuid or setgid process honours no gpuprobe "
		"setting\n"
		"gpuprobe: GPUPROBE_CACHE_DIR ignored: a setuid or setgid process honours no gpuprobe "
		"setting\n";
	CHECK(!strcmp(buf, want), "lines:\n%s--- expected\n%s", buf, want);
	printf("%s\n", fails ? "FAIL" : "ok env");
	return fails != 0;
}
