/* The host's clock for kernels on our own driver (own.h: own_clock_start). OpenCL gives a kernel
 * no clock, so %globaltimer and %clock64 read a word of host memory (spirv_options.clock_word)
 * that a thread of ours keeps at CLOCK_REALTIME (NVIDIA's %globaltimer counts nanoseconds of
 * the same epoch), every 100 us. Started by the first kernel built that reads a clock, so a
 * program and probes without one pay nothing; ktime's durations then have the thread's period
 * as their grain, where before every kernel lasted 0 ns. On a busy CPU the thread writes late, a
 * block that starts then reads an old time, and its launch looks longer by that delay
 * (timed_spin under ktime on 2 shared cores: 176 ms of GPU time for 168 ms the host saw). */
#include "shim/own.h"

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <time.h>

#define PERIOD_NS 100000L

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int running;   /* in this process: a fork's child has no thread (atfork below) */

static void tick(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	__atomic_store_n((uint64_t *)(uintptr_t)own.clock_word, ns, __ATOMIC_RELAXED);
}

static void *keep(void *arg)
{
	(void)arg;
	sigset_t all;   /* the application's signals go to its own threads */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	struct timespec period = {0, PERIOD_NS};
	for (;;) {
		tick();
		nanosleep(&period, NULL);
	}
	return NULL;
}

static void child(void)
{
	running = 0;
	pthread_mutex_init(&lock, NULL);   /* a fork while a parent thread held it */
}

static void register_child(void) { pthread_atfork(NULL, NULL, child); }

void own_clock_start(void)
{
	if (!own.clock_word || __atomic_load_n(&running, __ATOMIC_ACQUIRE))
		return;
	static pthread_once_t atfork = PTHREAD_ONCE_INIT;
	pthread_once(&atfork, register_child);
	pthread_mutex_lock(&lock);
	if (!running) {
		tick();   /* a kernel enqueued right away reads a time, not 0 */
		pthread_attr_t a;
		pthread_t t;
		pthread_attr_init(&a);
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		pthread_attr_setstacksize(&a, 64 << 10);
		if (pthread_create(&t, &a, keep, NULL) == 0)
			__atomic_store_n(&running, 1, __ATOMIC_RELEASE);
		pthread_attr_destroy(&a);
	}
	pthread_mutex_unlock(&lock);
}
