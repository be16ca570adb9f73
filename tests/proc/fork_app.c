/* The ways real programs fork, exec and get signals, under the shim (tests/proc/proc.sh).
 * usage: fork_app SHIM PTX MODE
 * Loads SHIM (gpuprobe's libcuda.so.1, over tests/shim_jit's fake driver), loads PTX through it
 * (the probe runtime sets up: count.bpf.o counts cuCtxSynchronize calls), synchronises 3 times,
 * then does what MODE says. A process that uses CUDA as a child synchronises 5 times, so each
 * report says whose it is.
 *   plain            exit
 *   fork-exit        fork; the child leaves through exit()
 *   fork-_exit       fork; the child leaves through _exit()
 *   fork-many        20 children through exit(), one after another, while the output thread polls
 *   fork-exec        fork; the child execs this program (same environment), which uses CUDA
 *   fork-exec-idle   fork; the child execs this program, which does not use CUDA
 *   fork-cuda        fork before using CUDA; the child and then the parent use it
 *   spawn            posix_spawn of this program (same environment), which uses CUDA
 *   sigterm          SIGTERM to itself (no handler of its own)
 *   sigterm-app      its own SIGTERM handler (exit(3)), then SIGTERM to itself
 *   sleep            sleeps 30 s (the script kills it)
 *   child            (exec'd) use CUDA as a child: 5 synchronisations
 *   idle             (exec'd) exit without using CUDA; names any descriptor it inherited that
 *                    is not 0, 1 or 2 ("fork_app: inherited fd N -> PATH") */
#include <dirent.h>
#include <dlfcn.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

typedef int CUresult;
static CUresult (*p_load)(void **, const void *);
static CUresult (*p_sync)(void);
static char *ptx;
static const char *self, *shim_path, *ptx_path;

static void *sym(void *h, const char *name)
{
	void *p = dlsym(h, name);
	if (!p) {
		fprintf(stderr, "fork_app: dlsym %s: %s\n", name, dlerror());
		exit(90);
	}
	return p;
}

static char *read_text(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		exit(90);
	}
	static char buf[1 << 16];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	return buf;
}

static void open_shim(void)
{
	void *shim = dlopen(shim_path, RTLD_NOW | RTLD_LOCAL);
	if (!shim) {
		fprintf(stderr, "fork_app: dlopen: %s\n", dlerror());
		exit(90);
	}
	CUresult (*init)(unsigned) = sym(shim, "cuInit");
	p_load = sym(shim, "cuModuleLoadData");
	p_sync = sym(shim, "cuCtxSynchronize");
	if (init(0)) {
		fprintf(stderr, "fork_app: cuInit failed\n");
		exit(90);
	}
}

static void use_cuda(int syncs)
{
	void *m;
	if (p_load(&m, ptx)) {
		fprintf(stderr, "fork_app: module load failed\n");
		_exit(91);
	}
	for (int i = 0; i < syncs; i++)
		p_sync();
}

static int wait_child(pid_t pid)
{
	int st = 0;
	if (pid < 0 || waitpid(pid, &st, 0) != pid) {
		perror("fork_app: fork/wait");
		return 92;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "fork_app: child %d ended with status %#x\n", (int)pid, st);
		return 93;
	}
	return 0;
}

static void exec_self(const char *mode)
{
	execl(self, self, shim_path, ptx_path, mode, (char *)NULL);
	perror("fork_app: exec");
	_exit(94);
}

/* What an exec'd child inherited beyond stdin, stdout and stderr. */
static void inherited(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int self_fd = d ? dirfd(d) : -1;
	while (d && (e = readdir(d))) {
		int fd = atoi(e->d_name);
		if (e->d_name[0] == '.' || fd <= 2 || fd == self_fd)
			continue;
		char link[64], target[512];
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		ssize_t n = readlink(link, target, sizeof(target) - 1);
		target[n > 0 ? n : 0] = 0;
		fprintf(stderr, "fork_app: inherited fd %d -> %s\n", fd, target);
	}
	if (d)
		closedir(d);
}

static void on_term(int sig)
{
	(void)sig;
	exit(3);
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: fork_app SHIM PTX MODE\n");
		return 2;
	}
	self = argv[0], shim_path = argv[1], ptx_path = argv[2];
	const char *mode = argv[3];
	if (!strcmp(mode, "idle"))
		inherited();   /* before this process opens anything itself */
	ptx = read_text(ptx_path);
	open_shim();
	if (!strcmp(mode, "idle"))
		return 0;
	if (!strcmp(mode, "child")) {
		use_cuda(5);
		return 0;
	}
	if (!strcmp(mode, "fork-cuda")) {
		pid_t pid = fork();
		if (pid == 0) {
			use_cuda(5);
			exit(0);
		}
		int rc = wait_child(pid);
		use_cuda(3);
		return rc;
	}
	if (!strcmp(mode, "sigterm-app"))
		signal(SIGTERM, on_term);
	use_cuda(3);
	if (!strcmp(mode, "plain"))
		return 0;
	if (!strcmp(mode, "fork-exit") || !strcmp(mode, "fork-_exit")) {
		pid_t pid = fork();
		if (pid == 0) {
			if (mode[5] == '_')
				_exit(0);
			exit(0);
		}
		return wait_child(pid);
	}
	if (!strcmp(mode, "fork-many")) {
		for (int i = 0; i < 20; i++) {
			pid_t pid = fork();
			if (pid == 0)
				exit(0);
			if (wait_child(pid))
				return 93;
			usleep(7000);   /* the output thread polls every 50 ms: fork at every phase */
		}
		return 0;
	}
	if (!strcmp(mode, "fork-exec") || !strcmp(mode, "fork-exec-idle")) {
		pid_t pid = fork();
		if (pid == 0)
			exec_self(mode[9] ? "idle" : "child");
		return wait_child(pid);
	}
	if (!strcmp(mode, "spawn")) {
		pid_t pid;
		char *args[] = {(char *)self, (char *)shim_path, (char *)ptx_path, "child", NULL};
		if (posix_spawn(&pid, self, NULL, NULL, args, environ))
			return 92;
		return wait_child(pid);
	}
	if (!strcmp(mode, "sigterm") || !strcmp(mode, "sigterm-app")) {
		kill(getpid(), SIGTERM);
		sleep(10);
		fprintf(stderr, "fork_app: SIGTERM did not end the process\n");
		return 95;
	}
	if (!strcmp(mode, "sleep")) {
		sleep(30);
		return 0;
	}
	fprintf(stderr, "fork_app: unknown mode %s\n", mode);
	return 2;
}
