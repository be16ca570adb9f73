/* Process events (process.h). Everything a signal handler does here is async-signal-safe:
 * getpid, write, sigaction, raise. The report itself runs on a thread of ours. */
#include "shim/process.h"
#include "shim/log.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const int watched[] = {SIGINT, SIGTERM, SIGHUP};
#define NWATCHED (sizeof(watched) / sizeof(watched[0]))

/* The process whose probes these are: a forked child inherits every variable here (and our
 * handlers) and must act as if none were set until it calls shim_process_watch itself. */
static pid_t owner;
static void (*final_fn)(void);
static void (*forked_fn)(void);
static int registered;           /* atexit/pthread_atfork: once per address space */
static int wake[2] = {-1, -1};   /* signal handler -> report thread */
static int signalled;

static int is_owner(void) { return owner && getpid() == owner; }

static void at_exit(void)
{
	if (is_owner() && final_fn)
		final_fn();
}

static void die_of(int sig)
{
	struct sigaction dfl;
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	raise(sig);   /* delivered when the handler returns (the signal is blocked until then) */
}

static void on_signal(int sig)
{
	int saved = errno;
	/* Not the owner (a forked child that never set probes up), no report thread, or a second
	 * signal: what the default action would have done. */
	if (!is_owner() || wake[1] < 0 || __atomic_exchange_n(&signalled, 1, __ATOMIC_RELAXED)) {
		die_of(sig);
	} else {
		unsigned char b = (unsigned char)sig;
		if (write(wake[1], &b, 1) != 1)
			die_of(sig);
	}
	errno = saved;
}

static void *report_thread(void *arg)
{
	(void)arg;
	unsigned char b = 0;
	ssize_t n;
	while ((n = read(wake[0], &b, 1)) < 0 && errno == EINTR)
		;
	if (n != 1)
		return NULL;
	if (final_fn)
		final_fn();
	/* Every signal is blocked on this thread: kill(), not raise(), lets another thread take
	 * it with the default action, and the process ends as the signal meant. */
	struct sigaction dfl;
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigaction(b, &dfl, NULL);
	kill(getpid(), b);
	return NULL;
}

/* Handlers only where the application left the default action: its own handler (Python's
 * SIGINT, a server's SIGTERM) and an ignored signal (nohup) stay as they are. */
static void watch_signals(void)
{
	int want = 0;
	for (size_t i = 0; i < NWATCHED; i++) {
		struct sigaction old;
		/* on_signal: ours, inherited from the parent of a fork */
		if (!sigaction(watched[i], NULL, &old) && !(old.sa_flags & SA_SIGINFO) &&
		    (old.sa_handler == SIG_DFL || old.sa_handler == on_signal))
			want |= 1 << i;
	}
	if (!want)
		return;
	if (pipe2(wake, O_CLOEXEC)) {
		wake[0] = wake[1] = -1;
		return;
	}
	/* The thread takes no signal: they go to the application's threads, as before. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	pthread_t t;
	int rc = pthread_create(&t, &at, report_thread, NULL);
	pthread_attr_destroy(&at);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		close(wake[0]);
		close(wake[1]);
		wake[0] = wake[1] = -1;
		return;
	}
	for (size_t i = 0; i < NWATCHED; i++) {
		if (!(want & (1 << i)))
			continue;
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_signal;
		sigemptyset(&sa.sa_mask);
		sa.sa_flags = SA_RESTART;
		sigaction(watched[i], &sa, NULL);
	}
}

/* In the child of a fork, before anything else runs there. The parent's report thread does not
 * exist here; its pipe is the parent's: dropped (closing our copies touches nothing of the
 * parent's). The handlers stay installed and act as the default action until the child sets
 * probes up itself. */
static void child_after_fork(void)
{
	if (wake[0] >= 0)
		close(wake[0]);
	if (wake[1] >= 0)
		close(wake[1]);
	wake[0] = wake[1] = -1;
	signalled = 0;
	if (owner && forked_fn)
		forked_fn();
}

void shim_process_watch(void (*final)(void), void (*forked)(void))
{
	final_fn = final;
	forked_fn = forked;
	__atomic_store_n(&owner, getpid(), __ATOMIC_RELEASE);
	if (!registered) {
		registered = 1;
		atexit(at_exit);
		pthread_atfork(NULL, NULL, child_after_fork);
	}
	watch_signals();
}
