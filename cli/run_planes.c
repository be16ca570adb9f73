/* The `gpuprobe` process's plane of "Two planes" (docs/architecture.md): it makes a folder for
 * the run's segments, hands it to the shim (GPUPROBE_SEGMENT_DIR), reads every segment that
 * appears there (one per process of the run with probes: the application, its forked or exec'd
 * children, workers), and prints what they hold with the formatter of maps/output.h: events as
 * they come, the maps every -i N seconds, the final report when a process wrote its last
 * snapshot, and, for a process that ended without one (SIGKILL), its last snapshot. The metrics
 * endpoint (run_metrics.c) serves the latest snapshot of each. */
#include "cli/run.h"
#include "cli/cli.h"
#include "common/env.h"
#include "common/safe_open.h"
#include "maps/config.h"
#include "maps/output.h"
#include "maps/segment.h"
#include "maps/snapshot.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct seg {
	char name[64];
	struct gp_seg_reader *r;
	struct gp_output *out;
	FILE *file;                /* its JSON file, when not stdout */
	long pid, ppid;
	uint32_t flags;
	int is_app;                /* the application gpuprobe started (not a child of it) */
	int done;                  /* final report printed (or the segment given up) */
	uint64_t gaps;             /* times the event log went round before it was read */
	uint64_t dropped;          /* records the process could not put in its segment */
	int has_snap;
	struct gp_snap snap;       /* the latest, for the metrics endpoint */
};

static struct {
	char dir[4096];
	int dirfd;
	int json;                  /* JSON lines instead of text */
	const char *json_path;     /* "-": stdout */
	unsigned interval_ms, top_n;
	struct seg **segs;
	size_t nsegs;
	char *probes;              /* the probe objects (-p, tools: ':'-separated), whose BTF */
	char *cfg_probes[64];      /* types ring records; then the configuration's */
	size_t ncfg_probes;
	pthread_mutex_t lock;      /* segs and their snapshots (the metrics thread reads them) */
	pthread_t thread;
	int running, stop;
	int active;
	struct timespec started;   /* when the run began: output files newer than this are its own */
} P = {.dirfd = -1, .lock = PTHREAD_MUTEX_INITIALIZER};

static void on_event(void *user, enum gp_seg_record type, const char *map, unsigned ring,
		     const void *data, size_t size)
{
	struct seg *s = user;
	if (type == GP_SEG_LINE) {   /* as the shim said it: one line on stderr */
		fprintf(stderr, "gpuprobe: %.*s\n", (int)size, (const char *)data);
		fflush(stderr);
	} else if (s->out) {
		gp_output__record(s->out, type == GP_SEG_PRINTK, map, ring, data, size);
	}
}

/* Its output: stderr (text), or JSON lines into the run's file (the application's) or FILE.PID
 * (any other process), as the shim would have written them. */
static void open_output(struct seg *s)
{
	struct gp_output_opts o = {.out = stderr, .json = P.json, .interval_ms = P.interval_ms,
				   .top_n = P.top_n};
	if (P.json && strcmp(P.json_path, "-")) {
		char err[1024];
		s->file = gp_output_file_open_for("--json ", P.json_path, s->is_app, s->pid, s->ppid,
						  NULL, 0, err, sizeof(err));
		if (!s->file)
			cli_error("run: %s; printing to stderr", err);
		o.out = s->file;
		o.json = s->file != NULL;
	} else if (P.json) {
		o.out = stdout;
	}
	if (gp_output__open(&o, &s->out))
		s->out = NULL;
	if (!s->out)   /* typed ring records; an object without BTF prints words, as before */
		return;
	gp_output__add_types_list(s->out, P.probes);
	for (size_t i = 0; i < P.ncfg_probes; i++)
		gp_output__add_types(s->out, P.cfg_probes[i]);
}

static void print_final(struct seg *s, int whole)
{
	if (s->out && !s->has_snap && !whole)
		cli_error("run: process %ld ended before the first snapshot of its maps", s->pid);
	if (!s->out || !s->has_snap)
		return;
	if (!P.json && !s->is_app)
		fprintf(stderr, "gpuprobe: report of process %ld (parent %ld):\n", s->pid, s->ppid);
	if (!whole)
		cli_error("run: process %ld ended without its final report: its maps as of its last "
			  "snapshot, %.1f s after its probes started", s->pid,
			  (double)s->snap.time_ms / 1000.0);
	gp_output__print_final(s->out);
	fflush(stderr);
}

static void finish(struct seg *s)
{
	if (s->done)
		return;
	s->done = 1;
	if (s->file)
		fclose(s->file);
	s->file = NULL;
}

/* Read what is new in s; print its final report when it has one. */
static void read_seg(struct seg *s)
{
	if (s->done)
		return;
	char err[512] = "";
	struct gp_seg_state st;
	if (!s->out) {
		/* whose it is first: its header alone (no events consumed) */
		int rc = gp_seg_ident(s->r, &st, err, sizeof(err));
		if (rc == -EBADMSG)
			goto bad;
		if (rc)
			return;
		s->pid = (long)st.pid;
		s->ppid = (long)st.ppid;
		s->is_app = st.ppid == getpid() && !(st.flags & GP_SEG_FORKED);
		open_output(s);
		if (!s->out) {
			finish(s);
			return;
		}
	}
	int rc = gp_seg_read(s->r, on_event, s, &st, err, sizeof(err));
	if (rc == -EBADMSG)
		goto bad;
	if (rc && rc != -EAGAIN)
		return;
	s->flags = st.flags;
	if (st.events_dropped > s->dropped) {
		cli_error("run: process %ld could not hand %llu ring records to gpuprobe (its segment "
			  "stayed full): they are lost, beside the rings' own counts", s->pid,
			  (unsigned long long)(st.events_dropped - s->dropped));
		s->dropped = st.events_dropped;
	}
	if (st.events_lost > s->gaps) {
		cli_error("run: process %ld wrote events faster than they were read: some were lost",
			  s->pid);
		s->gaps = st.events_lost;
	}
	if (st.new_snapshot && st.blob) {
		struct gp_snap snap;
		if (gp_snap_parse(st.blob, st.blob_len, &snap, err, sizeof(err)) ||
		    gp_output__use_snapshot(s->out, st.blob, st.blob_len, err, sizeof(err))) {
			cli_error("run: segment %s: %s", s->name, err);
			s->done = 1;
			return;
		}
		pthread_mutex_lock(&P.lock);
		gp_snap_free(&s->snap);
		s->snap = snap;
		s->has_snap = 1;
		pthread_mutex_unlock(&P.lock);
	}
	if (s->has_snap)
		gp_output__poll(s->out);   /* the maps every -i N seconds */
	if (st.flags & GP_SEG_FINAL) {
		print_final(s, 1);
		finish(s);
	}
	return;
bad:
	cli_error("run: %s", err);
	finish(s);
}

/* New segments in the folder. */
static void scan(void)
{
	int fd = dup(P.dirfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	rewinddir(d);
	for (struct dirent *e; (e = readdir(d));) {
		if (strncmp(e->d_name, "seg.", 4) || strlen(e->d_name) >= sizeof(((struct seg *)0)->name))
			continue;
		int known = 0;
		for (size_t i = 0; i < P.nsegs && !known; i++)
			known = !strcmp(P.segs[i]->name, e->d_name);
		if (known)
			continue;
		struct seg *s = calloc(1, sizeof(*s));
		pthread_mutex_lock(&P.lock);
		struct seg **n = s ? realloc(P.segs, (P.nsegs + 1) * sizeof(*n)) : NULL;
		if (n)
			P.segs = n;
		pthread_mutex_unlock(&P.lock);
		if (!n) {
			free(s);
			break;
		}
		snprintf(s->name, sizeof(s->name), "%s", e->d_name);
		char err[512];
		if (gp_seg_open(P.dirfd, s->name, &s->r, err, sizeof(err))) {
			cli_error("run: %s", err);
			s->done = 1;
		}
		pthread_mutex_lock(&P.lock);
		P.segs[P.nsegs++] = s;
		pthread_mutex_unlock(&P.lock);
	}
	closedir(d);
}

static void poll_all(void)
{
	scan();
	for (size_t i = 0; i < P.nsegs; i++)
		read_seg(P.segs[i]);
}

/* The reader polls every 50 ms, and run_planes_end wakes it at once: a sleep it had to sit out
 * was up to 50 ms added to every run's wall time (a short program's 1.2x on the GPU). */
static pthread_mutex_t wake_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake_cond = PTHREAD_COND_INITIALIZER;

static void *reader(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&P.stop, __ATOMIC_ACQUIRE)) {
		poll_all();
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 50 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_mutex_lock(&wake_lock);
		if (!__atomic_load_n(&P.stop, __ATOMIC_ACQUIRE))
			pthread_cond_timedwait(&wake_cond, &wake_lock, &ts);
		pthread_mutex_unlock(&wake_lock);
	}
	return NULL;
}

/* Folders of runs whose gpuprobe is gone (killed before it could tidy up). */
static void tidy_stale(const char *priv)
{
	DIR *d = opendir(priv);
	if (!d)
		return;
	for (struct dirent *e; (e = readdir(d));) {
		long pid;
		char c;
		if (sscanf(e->d_name, "run.%ld%c", &pid, &c) != 1 || pid <= 0 ||
		    !(kill((pid_t)pid, 0) && errno == ESRCH))
			continue;
		char path[4200];
		snprintf(path, sizeof(path), "%s/%s", priv, e->d_name);
		int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		DIR *sd = fd >= 0 ? fdopendir(fd) : NULL;
		for (struct dirent *f; sd && (f = readdir(sd));)
			if (!strncmp(f->d_name, "seg.", 4))
				unlinkat(fd, f->d_name, 0);
		if (sd)
			closedir(sd);
		else if (fd >= 0)
			close(fd);
		rmdir(path);
	}
	closedir(d);
}

int run_planes_begin(const struct run_planes_opts *o)
{
	char priv[4096];
	int rc = run_private_dir(priv, sizeof(priv));
	if (rc) {
		cli_error("run: no private folder for the maps' segments (%s): %s; the application's "
			  "process prints them", priv, strerror(-rc));
		return RUN_EXIT_USAGE;
	}
	tidy_stale(priv);
	snprintf(P.dir, sizeof(P.dir), "%s/run.%ld", priv, (long)getpid());
	if (mkdir(P.dir, 0700)) {
		cli_error("run: %s: %s; the application's process prints the maps", P.dir,
			  strerror(errno));
		return RUN_EXIT_USAGE;
	}
	char why[512] = "";
	P.dirfd = gp_dir_open(P.dir, 0, why, sizeof(why));
	if (P.dirfd < 0) {
		cli_error("run: %s: %s; the application's process prints the maps", P.dir, why);
		rmdir(P.dir);
		return RUN_EXIT_USAGE;
	}
	/* What the shim would have printed by: -i, --json, GPUPROBE_TOP, then the configuration. */
	struct gp_config cfg = {0};
	char err[1024];
	int have_cfg = o->config && !gp_config__load(o->config, &cfg, err, sizeof(err));
	uint64_t top = 0, interval = 0;
	gp_env_uint_get(GP_VAR_TOP, &top);
	P.top_n = top ? (unsigned)top : have_cfg ? cfg.top_n : 0;
	if (o->interval)
		interval = strtoul(o->interval, NULL, 10);
	else if (!gp_env_uint_get(GP_VAR_INTERVAL, &interval) && have_cfg)
		interval = cfg.interval_s;
	P.interval_ms = (unsigned)interval * 1000u;
	static char json[4096];
	if (o->json)
		snprintf(json, sizeof(json), "%s", o->json);
	else if (have_cfg && cfg.json_path)
		snprintf(json, sizeof(json), "%s", cfg.json_path);
	P.json = json[0] != 0;
	P.json_path = json;
	P.probes = o->probes ? strdup(o->probes) : NULL;
	for (size_t i = 0; have_cfg && i < cfg.nprobes && P.ncfg_probes < 64; i++)
		if ((P.cfg_probes[P.ncfg_probes] = strdup(cfg.probes[i].path)))
			P.ncfg_probes++;
	if (have_cfg)
		gp_config__free(&cfg);
	if (setenv("GPUPROBE_SEGMENT_DIR", P.dir, 1)) {
		cli_error("run: cannot set the environment: %s", strerror(errno));
		close(P.dirfd);
		rmdir(P.dir);
		return RUN_EXIT_USAGE;
	}
	/* the reader takes no signal: run_child's handlers pass them on to the application */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&P.thread, NULL, reader, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		cli_error("run: cannot start the segment reader: %s", strerror(rc));
		unsetenv("GPUPROBE_SEGMENT_DIR");
		close(P.dirfd);
		rmdir(P.dir);
		return RUN_EXIT_USAGE;
	}
	P.running = 1;
	P.active = 1;
	clock_gettime(CLOCK_REALTIME_COARSE, &P.started);   /* the clock of file times */
	return 0;
}

static int alive_unfinished(void)
{
	for (size_t i = 0; i < P.nsegs; i++) {
		struct seg *s = P.segs[i];
		if (!s->done && s->pid > 0 && !kill((pid_t)s->pid, 0))
			return 1;
	}
	return 0;
}

/* No process of the run set up probes: say so, rather than end as if they had counted nothing,
 * and give --json FILE its file (one "none" record) so that what reads it finds one. */
static void report_none(void)
{
	/* a process of the run that printed its maps itself (without the segment folder, as
	 * without gpuprobe run) wrote --json's file during the run: it reported, and its file stays */
	struct stat st;
	if (P.json && strcmp(P.json_path, "-") && !stat(P.json_path, &st) && st.st_size > 0 &&
	    (st.st_mtim.tv_sec > P.started.tv_sec ||
	     (st.st_mtim.tv_sec == P.started.tv_sec && st.st_mtim.tv_nsec >= P.started.tv_nsec)))
		return;
	static const char why[] = "no process of the application set up probes: none loaded a GPU module "
				  "through gpuprobe's libcuda.so.1 (it made no CUDA call, or reached a driver "
				  "another way)";
	cli_error("run: %s; nothing to report", why);
	if (!P.json || !strcmp(P.json_path, "-"))
		return;   /* stdout is the application's too: the line above says it */
	char err[1024];
	int fd = gp_open_output(P.json_path, GP_OUTPUT_OWN, NULL, 0, err, sizeof(err));
	if (fd < 0) {
		cli_error("run: --json %s", err);
		return;
	}
	char line[512];
	int n = snprintf(line, sizeof(line), "{\"type\":\"none\",\"why\":\"%s\"}\n", why);
	if (write(fd, line, (size_t)n) != n)
		cli_error("run: --json %s: %s", P.json_path, strerror(errno));
	close(fd);
}

void run_planes_end(void)
{
	if (!P.active)
		return;
	if (P.running) {
		pthread_mutex_lock(&wake_lock);
		__atomic_store_n(&P.stop, 1, __ATOMIC_RELEASE);
		pthread_cond_signal(&wake_cond);
		pthread_mutex_unlock(&wake_lock);
		pthread_join(P.thread, NULL);
		P.running = 0;
	}
	poll_all();
	poll_all();   /* events a final snapshot's header named after the first read */
	/* processes of the run still at work (a child the application left running) get a
	 * moment to write their final report */
	for (int i = 0; i < 40 && alive_unfinished(); i++) {
		struct timespec ts = {0, 50 * 1000000L};
		nanosleep(&ts, NULL);
		poll_all();
	}
	for (size_t i = 0; i < P.nsegs; i++) {
		struct seg *s = P.segs[i];
		if (!s->done)
			print_final(s, 0);
		finish(s);
	}
	if (!P.nsegs)
		report_none();
	run_metrics_stop();
	for (size_t i = 0; i < P.nsegs; i++) {
		struct seg *s = P.segs[i];
		unlinkat(P.dirfd, s->name, 0);
		gp_seg_reader_close(s->r);
		gp_output__close(s->out);
		gp_snap_free(&s->snap);
		free(s);
	}
	free(P.segs);
	P.segs = NULL;
	P.nsegs = 0;
	close(P.dirfd);
	rmdir(P.dir);
	P.active = 0;
}

void run_planes_each(void (*fn)(void *user, const struct gp_snap *s, long pid, int is_app),
		     void *user)
{
	for (size_t i = 0; i < P.nsegs; i++)
		if (P.segs[i]->has_snap)
			fn(user, &P.segs[i]->snap, P.segs[i]->pid, P.segs[i]->is_app);
}

void run_planes_lock(int lock)
{
	if (lock)
		pthread_mutex_lock(&P.lock);
	else
		pthread_mutex_unlock(&P.lock);
}
