/* The cubin cache (shim/cubin_cache.c) and its hash (shim/sha256.c), without a driver: SHA-256
 * against FIPS 180-4's test vectors, the key's stability (a pinned value: the same input must
 * find the same entry in every run and build) and its sensitivity to every input, hit and miss,
 * corrupt entries of each kind, file and directory modes, and the choice of directory.
 * One "ok" line per check; exit 1 at the first failure, naming it. */
#include "shim/cubin_cache.h"
#include "shim/sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHECK(cond, ...)                                                   \
	do {                                                               \
		if (!(cond)) {                                             \
			printf("FAIL line %d: ", __LINE__);                \
			printf(__VA_ARGS__);                               \
			printf("\n");                                      \
			exit(1);                                           \
		}                                                          \
	} while (0)

static void hex(const uint8_t *h, char *out)
{
	for (int i = 0; i < 32; i++)
		sprintf(out + 2 * i, "%02x", h[i]);
}

static void sha_check(const char *msg, size_t n, size_t chunk, const char *want)
{
	struct gp_sha256 s;
	uint8_t h[32];
	char got[65];
	gp_sha256_init(&s);
	for (size_t i = 0; i < n; i += chunk)
		gp_sha256_update(&s, msg + i, n - i < chunk ? n - i : chunk);
	gp_sha256_final(&s, h);
	hex(h, got);
	CHECK(!strcmp(got, want), "sha256 of %zu bytes in chunks of %zu: %s, want %s", n, chunk,
	      got, want);
}

static const int ids[] = {0, 13};
static const uint64_t vals[] = {40, 1};

static struct cubin_key_input base(void)
{
	return (struct cubin_key_input){.ptx = ".version 8.0\n.target sm_90\n", .ptx_len = 27,
					.sm = 90, .driver_version = 13000,
					.driver_id = "/usr/lib/libcuda.so.1 100 200", .nopts = 2,
					.opt_ids = ids, .opt_vals = vals};
}

static void key_of(const struct cubin_key_input *in, struct cubin_key *k)
{
	cubin_key_make(in, k);
}

static void differs(const char *what, const struct cubin_key_input *in, const struct cubin_key *ref)
{
	struct cubin_key k;
	key_of(in, &k);
	CHECK(memcmp(k.hash, ref->hash, 32), "the key ignores %s", what);
	printf("ok key changes with %s\n", what);
}

static void write_file(const char *path, const void *data, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0 && write(fd, data, n) == (ssize_t)n && !close(fd), "write %s", path);
}

static size_t read_file(const char *path, void *buf, size_t max)
{
	int fd = open(path, O_RDONLY);
	CHECK(fd >= 0, "open %s", path);
	ssize_t n = read(fd, buf, max);
	close(fd);
	CHECK(n >= 0, "read %s", path);
	return (size_t)n;
}

int main(void)
{
	/* FIPS 180-4 examples, and a message that fills a block exactly (the padding needs a
	 * second block), fed whole and in odd chunks. */
	sha_check("", 0, 1, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	sha_check("abc", 3, 1, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	sha_check(two, strlen(two), 56, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	sha_check(two, strlen(two), 7, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	char *million = malloc(1000000);
	CHECK(million, "malloc");
	memset(million, 'a', 1000000);
	sha_check(million, 1000000, 4093, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	sha_check(million, 64, 64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
	free(million);
	printf("ok sha256: FIPS 180-4 vectors, any chunking\n");

	/* Stability: the same input, the same key, today and in every later build (an entry
	 * written by one run must be found by the next). */
	struct cubin_key_input in = base();
	struct cubin_key k1, k2;
	key_of(&in, &k1);
	key_of(&in, &k2);
	CHECK(!memcmp(k1.hash, k2.hash, 32) && !strcmp(k1.hex, k2.hex), "same input, same key");
	CHECK(strlen(k1.hex) == 64, "hex key length");
	CHECK(!strcmp(k1.hex, "ec2e2db326ad74da413c11e4ee3378c3b3ab311cf86f9d503f4fb5063272fbf8"),
	      "the pinned key changed (%s): every cached entry would be missed", k1.hex);
	printf("ok key stable: %s\n", k1.hex);

	/* Sensitivity: each input changes the key. */
	struct cubin_key_input v = base();
	v.ptx = ".version 8.0\n.target sm_90\r";
	differs("one byte of PTX", &v, &k1);
	v = base();
	v.ptx_len = 26;
	differs("the PTX's length", &v, &k1);
	v = base();
	v.sm = 80;
	differs("the compute capability", &v, &k1);
	v = base();
	v.driver_version = 13010;
	differs("the driver version", &v, &k1);
	v = base();
	v.driver_id = "/usr/lib/libcuda.so.1 100 201";
	differs("the driver's file", &v, &k1);
	v = base();
	v.nopts = 1;
	differs("the number of options", &v, &k1);
	uint64_t vals2[] = {41, 1};
	v = base();
	v.opt_vals = vals2;
	differs("an option's value", &v, &k1);
	int ids2[] = {0, 11};
	v = base();
	v.opt_ids = ids2;
	differs("an option's id", &v, &k1);
	/* Fields are delimited: moving bytes from the driver id into nothing else collides not. */
	v = base();
	v.driver_id = "/usr/lib/libcuda.so.1 100 20";
	differs("a shorter driver id", &v, &k1);

	/* The directory: GPUPROBE_CACHE_DIR, then XDG_CACHE_HOME/gpuprobe, then ~/.cache/gpuprobe,
	 * created with parents, 0700. */
	char tmpl[] = "/tmp/gpuprobe-cache-test-XXXXXX";
	CHECK(mkdtemp(tmpl), "mkdtemp");
	char want[700], dir[512], why[256];
	struct stat st;
	snprintf(want, sizeof(want), "%s/home", tmpl);
	CHECK(mkdir(want, 0755) == 0, "mkdir home");
	setenv("HOME", want, 1);
	unsetenv("XDG_CACHE_HOME");
	unsetenv("GPUPROBE_CACHE_DIR");
	CHECK(cubin_cache_dir(dir, sizeof(dir), why, sizeof(why)) == 0, "HOME dir: %s", why);
	snprintf(want, sizeof(want), "%s/home/.cache/gpuprobe", tmpl);
	CHECK(!strcmp(dir, want), "HOME: %s", dir);
	CHECK(stat(dir, &st) == 0 && (st.st_mode & 0777) == 0700, "mode of %s: %o", dir,
	      st.st_mode & 0777);
	snprintf(want, sizeof(want), "%s/home/.cache", tmpl);
	CHECK(stat(want, &st) == 0 && (st.st_mode & 0777) == 0700, "parent created 0700");
	setenv("XDG_CACHE_HOME", "relative/path", 1);
	CHECK(cubin_cache_dir(dir, sizeof(dir), why, sizeof(why)) == 0 &&
	      !strncmp(dir, tmpl, strlen(tmpl)) && strstr(dir, "/home/.cache/gpuprobe"),
	      "a relative XDG_CACHE_HOME is ignored: %s", dir);
	snprintf(want, sizeof(want), "%s/xdg", tmpl);
	setenv("XDG_CACHE_HOME", want, 1);
	CHECK(cubin_cache_dir(dir, sizeof(dir), why, sizeof(why)) == 0, "XDG dir: %s", why);
	snprintf(want, sizeof(want), "%s/xdg/gpuprobe", tmpl);
	CHECK(!strcmp(dir, want), "XDG_CACHE_HOME: %s", dir);
	snprintf(want, sizeof(want), "%s/explicit/a/b", tmpl);
	setenv("GPUPROBE_CACHE_DIR", want, 1);
	CHECK(cubin_cache_dir(dir, sizeof(dir), why, sizeof(why)) == 0 && !strcmp(dir, want),
	      "GPUPROBE_CACHE_DIR first: %s", dir);
	printf("ok directory: GPUPROBE_CACHE_DIR, XDG_CACHE_HOME/gpuprobe, ~/.cache/gpuprobe, 0700\n");
	snprintf(want, sizeof(want), "%s/open", tmpl);
	CHECK(mkdir(want, 0700) == 0 && chmod(want, 0777) == 0, "mkdir open");
	setenv("GPUPROBE_CACHE_DIR", want, 1);
	CHECK(cubin_cache_dir(dir, sizeof(dir), why, sizeof(why)) == -EPERM &&
	      !strcmp(why, "is writable by others (chmod 700 it)"), "world-writable refused: %s", why);
	snprintf(want, sizeof(want), "%s/file", tmpl);
	write_file(want, "x", 1);
	setenv("GPUPROBE_CACHE_DIR", want, 1);
	CHECK(cubin_cache_dir(dir, sizeof(dir), why, sizeof(why)) < 0, "a file is no directory");
	printf("ok directory refused when writable by others or not a directory\n");
	unsetenv("GPUPROBE_CACHE");
	CHECK(cubin_cache_enabled(), "enabled by default");
	setenv("GPUPROBE_CACHE", "0", 1);
	CHECK(!cubin_cache_enabled(), "GPUPROBE_CACHE=0");
	setenv("GPUPROBE_CACHE", "1", 1);
	CHECK(cubin_cache_enabled(), "GPUPROBE_CACHE=1");
	printf("ok GPUPROBE_CACHE=0 turns the cache off\n");

	/* Miss, store, hit. */
	snprintf(want, sizeof(want), "%s/entries", tmpl);
	setenv("GPUPROBE_CACHE_DIR", want, 1);
	CHECK(cubin_cache_dir(dir, sizeof(dir), why, sizeof(why)) == 0, "entries dir");
	void *data = NULL;
	size_t size = 0;
	CHECK(cubin_cache_get(dir, &k1, &data, &size) == -ENOENT, "miss on an empty cache");
	unsigned char cubin[1000];
	for (size_t i = 0; i < sizeof(cubin); i++)
		cubin[i] = (unsigned char)(i * 7 + 3);
	CHECK(cubin_cache_put(dir, &k1, cubin, sizeof(cubin)) == 0, "put");
	CHECK(cubin_cache_get(dir, &k1, &data, &size) == 0 && size == sizeof(cubin) &&
	      !memcmp(data, cubin, size), "hit returns the bytes stored");
	free(data);
	char path[600];
	cubin_cache_path(dir, &k1, path, sizeof(path));
	snprintf(want, sizeof(want), "%s/%s.cubin", dir, k1.hex);
	CHECK(!strcmp(path, want), "entry path %s", path);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600, "entry mode %o", st.st_mode & 0777);
	CHECK(cubin_cache_get(dir, &k2, &data, &size) == 0, "same key, same entry");
	free(data);
	struct cubin_key_input other = base();
	other.sm = 80;
	struct cubin_key k3;
	key_of(&other, &k3);
	CHECK(cubin_cache_get(dir, &k3, &data, &size) == -ENOENT, "another key misses");
	printf("ok miss, put (0600), hit with the same bytes\n");

	/* Corrupt entries, each kind detected; a put replaces them. */
	unsigned char file[2000];
	size_t n = read_file(path, file, sizeof(file));
	CHECK(n > sizeof(cubin), "entry has a header (%zu bytes)", n);
	struct { const char *what; size_t len; size_t flip; } bad[] = {
		{"a flipped cubin byte", n, n - 10},
		{"a flipped magic byte", n, 0},
		{"a flipped key byte", n, 12},
		{"a truncated entry", n - 1, (size_t)-1},
		{"a header only", n - sizeof(cubin), (size_t)-1},
		{"an empty file", 0, (size_t)-1},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		unsigned char copy[2000];
		memcpy(copy, file, n);
		if (bad[i].flip != (size_t)-1)
			copy[bad[i].flip] ^= 0x40;
		write_file(path, copy, bad[i].len);
		CHECK(cubin_cache_get(dir, &k1, &data, &size) == -EBADMSG, "%s not detected",
		      bad[i].what);
		printf("ok corrupt entry detected: %s\n", bad[i].what);
	}
	/* An entry stored under another key's name (a copied file). */
	char path3[600];
	cubin_cache_path(dir, &k3, path3, sizeof(path3));
	write_file(path3, file, n);
	CHECK(cubin_cache_get(dir, &k3, &data, &size) == -EBADMSG, "entry under another key's name");
	printf("ok corrupt entry detected: another key's entry\n");
	CHECK(cubin_cache_put(dir, &k1, cubin, sizeof(cubin)) == 0, "rewrite");
	CHECK(cubin_cache_get(dir, &k1, &data, &size) == 0 && size == sizeof(cubin) &&
	      !memcmp(data, cubin, size), "hit after the rewrite");
	free(data);
	printf("ok a corrupt entry is rewritten by the next put\n");
	/* A directory in the entry's place: unreadable, not a crash; put fails cleanly. */
	unlink(path);
	CHECK(mkdir(path, 0700) == 0, "mkdir in the entry's place");
	CHECK(cubin_cache_get(dir, &k1, &data, &size) < 0, "a directory is no entry");
	CHECK(cubin_cache_put(dir, &k1, cubin, sizeof(cubin)) < 0, "put over a directory fails");
	rmdir(path);
	/* No temporary files left behind. */
	char cmd[700];
	snprintf(cmd, sizeof(cmd), "test -z \"$(ls -A %s | grep tmp)\"", dir);
	CHECK(system(cmd) == 0, "temporary files left in %s", dir);
	printf("ok unusable entries give errors; no temporary files left\n");
	snprintf(cmd, sizeof(cmd), "chmod -R u+rwx %s && rm -rf %s", tmpl, tmpl);
	CHECK(system(cmd) == 0, "cleanup");
	return 0;
}
