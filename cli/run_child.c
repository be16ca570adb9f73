/* The application under `gpuprobe run` (see run.h). gpuprobe stands between the user and the
 * application the way `timeout` and `env` do: signals sent to gpuprobe reach the application,
 * and the application's exit status is gpuprobe's.
 *
 * The application gets a process group of its own, so that a signal passed on reaches all of it
 * (a shell script and its children) and never gpuprobe's caller, which may share gpuprobe's
 * group. A group of its own would be a background job for the terminal (reading it would stop
 * the application with SIGTTIN), so when gpuprobe is in the terminal's foreground it hands the
 * terminal to the application's group, as a shell does for a job, and takes it back after; the
 * terminal's own Ctrl-C and Ctrl-\ then go to the application directly, and Ctrl-Z stops
 * gpuprobe together with it. If gpuprobe dies without passing anything on (SIGKILL), the
 * application gets SIGTERM from the kernel (PR_SET_PDEATHSIG) instead of running on under init. */
#include "cli/run.h"
#include "cli/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
#define NFORWARDED (sizeof(forwarded) / sizeof(forwarded[0]))

static volatile sig_atomic_t app_pgid;

static void forward(int sig)
{
	int e = errno;
	pid_t g = app_pgid;
	if (g > 0)
		kill(-g, sig);
	errno = e;
}

/* The controlling terminal, or -1 without one. */
static int controlling_tty(void)
{
	return open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);
}

/* Whether group pgid has the terminal. */
static int has_tty(int tty, pid_t pgid)
{
	return tty >= 0 && tcgetpgrp(tty) == pgid;
}

struct saved {
	struct sigaction act[NFORWARDED], ttou;
	sigset_t mask;
};

static void restore(const struct saved *s)
{
	for (size_t i = 0; i < NFORWARDED; i++)
		sigaction(forwarded[i], &s->act[i], NULL);
	sigaction(SIGTTOU, &s->ttou, NULL);
	sigprocmask(SIG_SETMASK, &s->mask, NULL);
}

static void start_app(char *const *argv, int tty, int fg, pid_t parent, const struct saved *s)
{
	setpgid(0, 0);
	/* Here as well as in the parent: the application may read the terminal before the parent
	 * runs again. SIGTTOU is still ignored, so a background group may take it. */
	if (fg)
		tcsetpgrp(tty, getpgrp());
	if (tty >= 0)
		close(tty);
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)   /* gpuprobe died before the line above */
		_exit(128 + SIGTERM);
	/* What gpuprobe inherited, the application inherits: ignored signals stay ignored (nohup),
	 * the mask as it was. */
	restore(s);
	execvp(argv[0], argv);
	int e = errno;
	cli_error("run: cannot start %s: %s", argv[0], strerror(e));
	_exit(e == ENOENT ? 127 : 126);
}

/* Wait for the application; with a terminal, follow its job-control stops as a shell's job
 * would. */
static int wait_app(pid_t pid, int tty)
{
	int st;
	for (;;) {
		if (waitpid(pid, &st, tty >= 0 ? WUNTRACED : 0) < 0) {
			if (errno == EINTR)
				continue;
			cli_error("run: waitpid: %s", strerror(errno));
			return 1;
		}
		if (!WIFSTOPPED(st))
			break;
		/* Ctrl-Z, or the application read or wrote the terminal from the background: take the
		 * terminal back and stop too, so that the user's shell sees a stopped job; on `fg` give
		 * the terminal to the application again, on `fg` or `bg` resume it. A SIGSTOP someone
		 * sent the application is theirs to undo: gpuprobe keeps waiting. */
		int sig = WSTOPSIG(st);
		if (sig != SIGTSTP && sig != SIGTTIN && sig != SIGTTOU)
			continue;
		if (has_tty(tty, pid))
			tcsetpgrp(tty, getpgrp());
		kill(getpid(), SIGSTOP);
		if (has_tty(tty, getpgrp()))
			tcsetpgrp(tty, pid);
		kill(-pid, SIGCONT);
	}
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return 1;
}

int run_child(char *const *argv)
{
	struct saved s;
	sigset_t block;
	sigemptyset(&block);
	for (size_t i = 0; i < NFORWARDED; i++)
		sigaddset(&block, forwarded[i]);
	/* Blocked until the application's group exists: a signal that comes before is held, then
	 * passed on, not lost. */
	sigprocmask(SIG_BLOCK, &block, &s.mask);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = forward;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	for (size_t i = 0; i < NFORWARDED; i++) {
		sigaction(forwarded[i], NULL, &s.act[i]);
		/* a signal gpuprobe was started ignoring (nohup) stays ignored, for both */
		if (s.act[i].sa_handler != SIG_IGN)
			sigaction(forwarded[i], &sa, NULL);
	}
	/* Giving the terminal back from the background must not stop gpuprobe. */
	struct sigaction ign;
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGTTOU, &ign, &s.ttou);

	int tty = controlling_tty();
	int fg = has_tty(tty, getpgrp());   /* gpuprobe is in the foreground: the app will be */
	pid_t self = getpid();
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0)
		start_app(argv, tty, fg, self, &s);
	int status;
	if (pid < 0) {
		cli_error("run: cannot start %s: fork: %s", argv[0], strerror(errno));
		status = 126;
	} else {
		setpgid(pid, pid);   /* both sides, whichever runs first */
		if (fg)
			tcsetpgrp(tty, pid);
		app_pgid = pid;
		sigprocmask(SIG_SETMASK, &s.mask, NULL);
		status = wait_app(pid, tty);
		app_pgid = 0;
	}
	if (tty >= 0) {
		if (pid > 0 && has_tty(tty, pid))
			tcsetpgrp(tty, getpgrp());
		close(tty);
	}
	restore(&s);
	return status;
}
