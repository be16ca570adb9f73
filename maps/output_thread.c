/* The output's own polling thread, and its options from the environment (output.h). */
#include "maps/output_internal.h"
#include "common/env.h"
#include "common/safe_open.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void *poller(void *arg)
{
	struct gp_output *o = arg;
	pthread_mutex_lock(&o->stop_lock);
	while (!o->stop) {
		pthread_mutex_unlock(&o->stop_lock);
		int printed = gp_output__poll(o);
		if (o->o.tick)
			o->o.tick(o->o.clock_user);
		pthread_mutex_lock(&o->stop_lock);
		/* Records came: come back in 1 ms, not poll_ms (a lossless ring's producer waits for
		 * the space this frees; a lossy one drops what does not fit). */
		unsigned wait_ms = printed > 0 ? 1 : o->poll_ms;
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += (long)(wait_ms % 1000) * 1000000L;
		ts.tv_sec += wait_ms / 1000 + ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		if (!o->stop)
			pthread_cond_timedwait(&o->stop_cond, &o->stop_lock, &ts);
	}
	pthread_mutex_unlock(&o->stop_lock);
	return NULL;
}

int gp_output__start_thread(struct gp_output *o, unsigned poll_ms)
{
	if (o->thread_running)
		return -EBUSY;
	o->poll_ms = poll_ms ? poll_ms : 50;
	o->stop = 0;
	pthread_mutex_init(&o->stop_lock, NULL);
	pthread_cond_init(&o->stop_cond, NULL);
	int rc = pthread_create(&o->thread, NULL, poller, o);
	if (rc)
		return -rc;
	o->thread_running = 1;
	return 0;
}

void gp_output__stop_thread(struct gp_output *o, int final)
{
	if (o->thread_running) {
		pthread_mutex_lock(&o->stop_lock);
		o->stop = 1;
		pthread_cond_signal(&o->stop_cond);
		pthread_mutex_unlock(&o->stop_lock);
		pthread_join(o->thread, NULL);
		o->thread_running = 0;
		pthread_cond_destroy(&o->stop_cond);
		pthread_mutex_destroy(&o->stop_lock);
	}
	if (final)
		gp_output__print_final(o);
}

int gp_output_opts__from_env(struct gp_output_opts *opts, FILE **opened, char *err, size_t errlen)
{
	*opened = NULL;
	uint64_t interval = 0, top = 0;
	/* the environment table (common/env.c) checks the ranges; the caller says the one line */
	int rc = gp_env_uint_try(GP_VAR_INTERVAL, &interval, err, errlen);
	if (rc >= 0)
		rc = gp_env_uint_try(GP_VAR_TOP, &top, err, errlen);
	if (rc < 0)
		return rc;
	opts->interval_ms = (unsigned)interval * 1000;
	if (top)
		opts->top_n = (unsigned)top;
	const char *json = gp_env_str(GP_VAR_JSON);
	if (json) {
		opts->json = 1;
		if (strcmp(json, "-")) {
			FILE *f = gp_output_file_open(GP_ENV_JSON "=", json, NULL, 0, err, errlen);
			if (!f)
				return -errno;
			opts->out = *opened = f;
		}
	}
	return 0;
}

/* path opened as how says, its first record the process's (pid, ppid). */
static FILE *open_for(const char *what, const char *path, enum gp_output_how how, long pid,
		      long ppid, char *used, size_t usedlen, char *err, size_t errlen)
{
	char why[512] = "", mine[4096];
	int fd = gp_open_output(path, how, mine, sizeof(mine), why, sizeof(why));
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		int e = fd < 0 ? -fd : errno;
		if (fd >= 0)
			close(fd);
		/* why starts with the path it names: keep what follows */
		size_t n = strlen(path);
		const char *r = !strncmp(why, path, n) && why[n] == ':' ? why + n + 2 : why;
		if (e == ENOENT || !*r)
			r = strerror(e);
		snprintf(err, errlen, "%s%s: cannot write it: %s", what, path, r);
		errno = e;
		return NULL;
	}
	/* No stdio buffer: each record reaches the file in one write (gp_output_json), so a kill
	 * leaves no torn record and a forked child has no copy of buffered records to flush. */
	setvbuf(f, NULL, _IONBF, 0);
	/* The first record says whose output this is: several processes of one run (workers,
	 * exec'd children) each write a file of their own. */
	char rec[128];
	int n = snprintf(rec, sizeof(rec), "{\"type\":\"process\",\"pid\":%ld,\"ppid\":%ld}\n",
			 pid, ppid);
	(void)!write(fileno(f), rec, (size_t)n);   /* a failure here fails the records too */
	if (used && usedlen)
		snprintf(used, usedlen, "%s", mine);
	return f;
}

FILE *gp_output_file_open(const char *what, const char *path, char *used, size_t usedlen,
			  char *err, size_t errlen)
{
	/* the user's own file only, 0600, no link followed, no FIFO, no one else's. Under
	 * `gpuprobe run` (GPUPROBE_RUN_PID: its PID) the application, its direct child, owns PATH
	 * and every other process of the run writes PATH.PID; without it, the first live process
	 * owns PATH (common/safe_open.h) */
	uint64_t run = 0;
	gp_env_uint_get(GP_VAR_RUN_PID, &run);
	enum gp_output_how how = !run ? GP_OUTPUT_FIRST
		: (uint64_t)getppid() == run ? GP_OUTPUT_OWN : GP_OUTPUT_OTHER;
	return open_for(what, path, how, (long)getpid(), (long)getppid(), used, usedlen, err, errlen);
}

FILE *gp_output_file_open_for(const char *what, const char *path, int own, long pid, long ppid,
			      char *used, size_t usedlen, char *err, size_t errlen)
{
	char mine[4096];
	if (!own) {
		if (snprintf(mine, sizeof(mine), "%s.%ld", path, pid) >= (int)sizeof(mine)) {
			snprintf(err, errlen, "%s%s: path too long", what, path);
			errno = ENAMETOOLONG;
			return NULL;
		}
		path = mine;
	}
	return open_for(what, path, GP_OUTPUT_OWN, pid, ppid, used, usedlen, err, errlen);
}
