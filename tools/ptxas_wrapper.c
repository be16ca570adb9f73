/* gpuprobe-ptxas: a drop-in ptxas that keeps the PTX of every cubin it makes (issue 16).
 *
 * Triton (TRITON_PTXAS_PATH) and XLA (ptxas on PATH or under --xla_gpu_cuda_data_dir) compile
 * their PTX with a ptxas program, then load only the cubin: the shim cannot instrument machine
 * code. This program runs the real ptxas with exactly the arguments it was given (stdin, stdout
 * and stderr are the real one's, its exit status is ours: the cubin is the real ptxas's, byte for
 * byte), and when it succeeded records the input PTX with the options that decide code under the
 * SHA-256 of the cubin it wrote (shim/jit_capture.h). The shim finds the record when that cubin is
 * loaded and instruments the PTX instead.
 *
 * The real ptxas: GPUPROBE_REAL_PTXAS; else the first `ptxas` on PATH that is not this program
 * (same file: a `ptxas` link to gpuprobe-ptxas, which is how XLA is pointed here); else
 * /usr/local/cuda/bin/ptxas. Recording never changes the result: a failure says one line only
 * under GPUPROBE_LOG=1. */
#include "shim/jit_capture.h"
#include "common/env.h"
#include "common/safe_open.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int same_file(const char *a, const struct stat *self)
{
	struct stat st;
	return !stat(a, &st) && st.st_dev == self->st_dev && st.st_ino == self->st_ino;
}

static int runnable(const char *p, const struct stat *self)
{
	struct stat st;
	return !stat(p, &st) && S_ISREG(st.st_mode) && !access(p, X_OK) && !same_file(p, self);
}

static int find_real(char *out, size_t len)
{
	struct stat self;
	if (stat("/proc/self/exe", &self))
		memset(&self, 0, sizeof(self));
	const char *env = gp_env_str(GP_VAR_REAL_PTXAS);
	if (env) {
		if (!runnable(env, &self)) {
			fprintf(stderr, "gpuprobe-ptxas: GPUPROBE_REAL_PTXAS=%s is not a program other "
				"than gpuprobe-ptxas\n", env);
			return -1;
		}
		snprintf(out, len, "%s", env);
		return 0;
	}
	const char *path = getenv("PATH");
	char *copy = path ? strdup(path) : NULL;
	for (char *save = NULL, *d = copy ? strtok_r(copy, ":", &save) : NULL; d;
	     d = strtok_r(NULL, ":", &save)) {
		if (!*d)
			continue;
		snprintf(out, len, "%s/ptxas", d);
		if (runnable(out, &self)) {
			free(copy);
			return 0;
		}
	}
	free(copy);
	snprintf(out, len, "/usr/local/cuda/bin/ptxas");
	if (runnable(out, &self))
		return 0;
	fprintf(stderr, "gpuprobe-ptxas: no ptxas found (GPUPROBE_REAL_PTXAS, PATH, "
		"/usr/local/cuda/bin/ptxas)\n");
	return -1;
}

static void say(const char *fmt, const char *a, const char *b)
{
	if (gp_env_flag(GP_VAR_LOG)) {
		fprintf(stderr, "gpuprobe-ptxas: ");
		fprintf(stderr, fmt, a, b);
		fputc('\n', stderr);
	}
}

static void *read_file(const char *path, size_t *len)
{
	int fd = gp_open_read(path, 0, NULL, 0);
	if (fd < 0)
		return NULL;
	void *buf = NULL;
	int rc = gp_read_all(fd, (size_t)1 << 31, &buf, len);
	close(fd);
	return rc ? NULL : buf;
}

/* After a successful compile: the record. Never fatal. */
static void record(int argc, char **argv)
{
	struct jit_record r = {0};
	const char *input, *ptx_string, *output;
	if (jit_capture_parse_ptxas(argc, argv, &r, &input, &ptx_string, &output)) {
		jit_record_free(&r);
		return;   /* --version, several inputs, an options file: nothing we can key */
	}
	size_t clen = 0;
	void *cubin = read_file(output, &clen);
	if (!cubin || !clen) {
		say("%s: cubin not readable%s: not recorded", output, "");
		free(cubin);
		jit_record_free(&r);
		return;
	}
	if (ptx_string) {
		r.ptx = strdup(ptx_string);
		r.ptx_len = r.ptx ? strlen(r.ptx) : 0;
	} else {
		r.ptx = read_file(input, &r.ptx_len);
	}
	/* A PTX file may end in NULs (fatbinary's habit): the text is what counts. */
	while (r.ptx && r.ptx_len && !r.ptx[r.ptx_len - 1])
		r.ptx_len--;
	if (!r.ptx || !r.ptx_len) {
		say("%s: PTX not readable%s: not recorded", input ? input : "(string)", "");
	} else {
		uint8_t h[32];
		char why[512] = "";
		jit_capture_hash(cubin, clen, h);
		if (jit_capture_put(h, &r, why, sizeof(why)))
			say("not recorded: %s%s", why, "");
	}
	free(cubin);
	jit_record_free(&r);
}

int main(int argc, char **argv)
{
	char real[PATH_MAX];
	if (find_real(real, sizeof(real)))
		return 127;
	char **args = malloc(sizeof(*args) * ((size_t)argc + 1));
	if (!args)
		return 127;
	args[0] = real;
	for (int i = 1; i < argc; i++)
		args[i] = argv[i];
	args[argc] = NULL;
	/* The real ptxas gets our terminal signals as a member of our process group; we wait. */
	pid_t pid;
	int rc = posix_spawn(&pid, real, NULL, NULL, args, environ);
	if (rc) {
		fprintf(stderr, "gpuprobe-ptxas: cannot run %s: %s\n", real, strerror(rc));
		return 127;
	}
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			fprintf(stderr, "gpuprobe-ptxas: waiting for %s: %s\n", real, strerror(errno));
			return 127;
		}
	free(args);
	if (WIFSIGNALED(status)) {
		/* The same death for our caller. */
		int sig = WTERMSIG(status);
		signal(sig, SIG_DFL);
		raise(sig);
		return 128 + sig;
	}
	int code = WEXITSTATUS(status);
	if (code == 0)
		record(argc, argv);
	return code;
}
