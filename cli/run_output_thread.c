/* The output's own polling thread, and its options from the environment (run_output.h). */
#include "cli/run_output_internal.h"

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
		gp_output__poll(o);
		if (o->o.tick)
			o->o.tick(o->o.clock_user);
		pthread_mutex_lock(&o->stop_lock);
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += (long)(o->poll_ms % 1000) * 1000000L;
		ts.tv_sec += o->poll_ms / 1000 + ts.tv_nsec / 1000000000L;
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

static int env_uint(const char *name, unsigned max, unsigned *out, char *err, size_t errlen)
{
	const char *s = getenv(name);
	if (!s || !*s)
		return 0;
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (*end || errno || *s == '-' || v > max) {
		snprintf(err, errlen, "%s=%s: expected a whole number from 0 to %u", name, s, max);
		return -EINVAL;
	}
	*out = (unsigned)v;
	return 0;
}

int gp_output_opts__from_env(struct gp_output_opts *opts, FILE **opened, char *err, size_t errlen)
{
	*opened = NULL;
	unsigned interval = 0, top = 0;
	int rc = env_uint(GP_ENV_INTERVAL, 86400, &interval, err, errlen);
	if (!rc)
		rc = env_uint(GP_ENV_TOP, 1000000, &top, err, errlen);
	if (rc)
		return rc;
	opts->interval_ms = interval * 1000;
	if (top)
		opts->top_n = top;
	const char *json = getenv(GP_ENV_JSON);
	if (json && *json) {
		opts->json = 1;
		if (strcmp(json, "-")) {
			/* the user's file only: 0600, no following a planted symlink */
			int fd = open(json, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
			FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
			if (!f) {
				int e = errno;
				if (fd >= 0)
					close(fd);
				snprintf(err, errlen, "%s=%s: cannot write it: %s", GP_ENV_JSON, json, strerror(e));
				return -e;
			}
			opts->out = *opened = f;
		}
	}
	return 0;
}
