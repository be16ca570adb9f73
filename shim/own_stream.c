/* The own driver's streams and events. Every stream is the one in-order backend queue (own.h):
 * a stream's work runs in order, and also after all work enqueued before it on any stream, which
 * satisfies both the legacy and the per-thread default stream's rules. Events are markers in that
 * queue; their times come from the backend (OpenCL profiling), or the host clock. Host functions
 * run once the queue has drained, on the calling thread. */
#include "shim/own.h"
#define OWN(name, impl) shim_fnty_##name own_##impl;
#include "shim/own_list.h"
#undef OWN

#include <stdlib.h>
#include <string.h>

static unsigned long long stream_ids = 100;

static struct own_stream *as_stream(CUstream s)
{
	struct own_stream *x = (struct own_stream *)s;
	return x && x->magic == OWN_MAGIC_STREAM ? x : NULL;
}

static int is_special(CUstream s) { return !s || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD; }

static CUresult check_stream(CUstream s) { return is_special(s) || as_stream(s) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE; }

CUresult own_cuStreamCreateWithPriority(CUstream *ps, unsigned flags, int prio)
{
	CUresult rc = own_ready();
	if (rc)
		return rc;
	if (!ps)
		return CUDA_ERROR_INVALID_VALUE;
	struct own_stream *s = calloc(1, sizeof(*s));
	if (!s)
		return CUDA_ERROR_OUT_OF_MEMORY;
	s->magic = OWN_MAGIC_STREAM;
	s->ctx = own_ctx_current();
	s->flags = flags;
	s->priority = prio;
	s->id = __atomic_add_fetch(&stream_ids, 1, __ATOMIC_RELAXED);
	*ps = (CUstream)s;
	return CUDA_SUCCESS;
}

CUresult own_cuStreamCreate(CUstream *ps, unsigned flags) { return own_cuStreamCreateWithPriority(ps, flags, 0); }

CUresult own_cuStreamDestroy_v2(CUstream st)
{
	struct own_stream *s = as_stream(st);
	if (!s)
		return CUDA_ERROR_INVALID_HANDLE;
	s->magic = 0;
	free(s);
	return CUDA_SUCCESS;
}

CUresult own_cuStreamSynchronize(CUstream s)
{
	CUresult rc = own_ready();
	if (rc || (rc = check_stream(s)))
		return rc;
	return own_trapped(own_err(own.ops->queue_finish(own.bk, own.queue, NULL, 0)));
}

CUresult own_cuStreamQuery(CUstream s)
{
	CUresult rc = own_ready();
	if (rc || (rc = check_stream(s)))
		return rc;
	gp_bk_event *ev;
	if (own.ops->event_record(own.bk, own.queue, &ev, NULL, 0) < 0)
		return CUDA_ERROR_UNKNOWN;
	int done = own.ops->event_query(own.bk, ev);
	own.ops->event_release(own.bk, ev);
	return done > 0 ? CUDA_SUCCESS : done == 0 ? CUDA_ERROR_NOT_READY : CUDA_ERROR_LAUNCH_FAILED;
}

CUresult own_cuStreamGetFlags(CUstream st, unsigned *flags)
{
	struct own_stream *s = as_stream(st);
	if (!flags)
		return CUDA_ERROR_INVALID_VALUE;
	*flags = s ? s->flags : 0;
	return check_stream(st);
}

CUresult own_cuStreamGetPriority(CUstream st, int *prio)
{
	struct own_stream *s = as_stream(st);
	if (!prio)
		return CUDA_ERROR_INVALID_VALUE;
	*prio = s ? s->priority : 0;
	return check_stream(st);
}

CUresult own_cuStreamGetId(CUstream st, unsigned long long *id)
{
	struct own_stream *s = as_stream(st);
	if (!id)
		return CUDA_ERROR_INVALID_VALUE;
	*id = s ? s->id : st == CU_STREAM_PER_THREAD ? 2 : 1;
	return check_stream(st);
}

CUresult own_cuStreamGetCtx(CUstream st, CUcontext *pctx)
{
	struct own_stream *s = as_stream(st);
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	*pctx = (CUcontext)(s && s->ctx ? s->ctx : own_ctx_current() ? own_ctx_current() : &own.primary);
	return check_stream(st);
}

CUresult own_cuStreamGetDevice(CUstream st, CUdevice *d)
{
	if (!d)
		return CUDA_ERROR_INVALID_VALUE;
	*d = 0;
	return check_stream(st);
}

static struct own_event *as_event(CUevent e);

CUresult own_cuStreamWaitEvent(CUstream s, CUevent e, unsigned flags)
{
	(void)flags;
	struct own_event *ev = as_event(e);
	struct own_stream *st = as_stream(s);
	if (ev && ev->capture && st && !st->capture)
		own_capture_join(st, ev->capture);   /* the fork of a captured graph */
	return check_stream(s);   /* one in-order queue: the event's work is already before */
}

CUresult own_cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus *st)
{
	if (!st)
		return CUDA_ERROR_INVALID_VALUE;
	*st = own_capturing(s) ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
	return check_stream(s);
}

CUresult own_cuStreamGetCaptureInfo_v3(CUstream s, CUstreamCaptureStatus *st, cuuint64_t *id, CUgraph *g,
				       const CUgraphNode **deps, const CUgraphEdgeData **edges, size_t *n)
{
	struct own_stream *x = as_stream(s);
	if (st)
		*st = own_capturing(s) ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
	if (id)
		*id = own_capturing(s) ? x->capture_id : 0;
	if (g)
		*g = own_capturing(s) ? (CUgraph)x->capture : NULL;
	if (deps)
		*deps = NULL;
	if (edges)
		*edges = NULL;
	if (n)
		*n = 0;
	return check_stream(s);
}

/* v2: v3 without the edge data (CUDA 11.3 to 12.2 runtimes, cuBLAS's among them). */
CUresult own_cuStreamGetCaptureInfo_v2(CUstream s, CUstreamCaptureStatus *st, cuuint64_t *id, CUgraph *g,
				       const CUgraphNode **deps, size_t *n)
{
	return own_cuStreamGetCaptureInfo_v3(s, st, id, g, deps, NULL, n);
}

CUresult own_cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
	(void)mode;
	return CUDA_SUCCESS;
}

static CUresult host_call(CUstream s, void (*fn)(void *), void *data)
{
	CUresult rc = own_ready();
	if (rc || (rc = check_stream(s)))
		return rc;
	if (!fn)
		return CUDA_ERROR_INVALID_VALUE;
	struct own_graph *g = own_capturing(s);
	if (g)
		return own_graph_add_host(g, fn, data);
	rc = own_err(own.ops->queue_finish(own.bk, own.queue, NULL, 0));
	if (!rc)
		fn(data);
	return rc;
}

CUresult own_cuLaunchHostFunc(CUstream s, CUhostFn fn, void *data) { return host_call(s, fn, data); }

struct cb { CUstreamCallback fn; CUstream s; void *data; };
static void run_cb(void *p)
{
	struct cb *c = p;
	c->fn(c->s, CUDA_SUCCESS, c->data);
}

CUresult own_cuStreamAddCallback(CUstream s, CUstreamCallback fn, void *data, unsigned flags)
{
	(void)flags;
	if (!fn)
		return CUDA_ERROR_INVALID_VALUE;
	struct cb c = {fn, s, data};
	return host_call(s, run_cb, &c);
}

CUresult own_cuStreamAttachMemAsync(CUstream s, CUdeviceptr p, size_t n, unsigned flags)
{
	(void)p, (void)n, (void)flags;
	return check_stream(s);
}

/* ---- events ---- */

static struct own_event *as_event(CUevent e)
{
	struct own_event *x = (struct own_event *)e;
	return x && x->magic == OWN_MAGIC_EVENT ? x : NULL;
}

CUresult own_cuEventCreate(CUevent *pe, unsigned flags)
{
	CUresult rc = own_ready();
	if (rc)
		return rc;
	if (!pe)
		return CUDA_ERROR_INVALID_VALUE;
	struct own_event *e = calloc(1, sizeof(*e));
	if (!e)
		return CUDA_ERROR_OUT_OF_MEMORY;
	e->magic = OWN_MAGIC_EVENT;
	e->flags = flags;
	*pe = (CUevent)e;
	return CUDA_SUCCESS;
}

CUresult own_cuEventDestroy_v2(CUevent ev)
{
	struct own_event *e = as_event(ev);
	if (!e)
		return CUDA_ERROR_INVALID_HANDLE;
	if (e->ev)
		own.ops->event_release(own.bk, e->ev);
	e->magic = 0;
	free(e);
	return CUDA_SUCCESS;
}

CUresult own_cuEventRecord(CUevent ev, CUstream s)
{
	struct own_event *e = as_event(ev);
	if (!e)
		return CUDA_ERROR_INVALID_HANDLE;
	CUresult rc = check_stream(s);
	if (rc)
		return rc;
	if ((e->capture = own_capturing(s)))
		return CUDA_SUCCESS;   /* a point of the captured graph: waiting on it joins the capture */
	gp_bk_event *n;
	int r = own.ops->event_record(own.bk, own.queue, &n, NULL, 0);
	if (r < 0)
		return own_err(r);
	if (e->ev)
		own.ops->event_release(own.bk, e->ev);
	e->ev = n;
	e->host_ns = 0;
	return CUDA_SUCCESS;
}

CUresult own_cuEventRecordWithFlags(CUevent ev, CUstream s, unsigned flags)
{
	(void)flags;
	return own_cuEventRecord(ev, s);
}

static void note_done(struct own_event *e)
{
	if (!e->host_ns)
		e->host_ns = own_now_ns();
}

CUresult own_cuEventQuery(CUevent ev)
{
	struct own_event *e = as_event(ev);
	if (!e)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!e->ev)
		return CUDA_SUCCESS;
	int done = own.ops->event_query(own.bk, e->ev);
	if (done > 0)
		note_done(e);
	return done > 0 ? CUDA_SUCCESS : done == 0 ? CUDA_ERROR_NOT_READY : CUDA_ERROR_LAUNCH_FAILED;
}

CUresult own_cuEventSynchronize(CUevent ev)
{
	struct own_event *e = as_event(ev);
	if (!e)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!e->ev)
		return CUDA_SUCCESS;
	int r = own.ops->event_wait(own.bk, e->ev, NULL, 0);
	note_done(e);
	return own_trapped(own_err(r));
}

CUresult own_cuEventElapsedTime_v2(float *ms, CUevent a, CUevent b)
{
	struct own_event *x = as_event(a), *y = as_event(b);
	if (!ms)
		return CUDA_ERROR_INVALID_VALUE;
	if (!x || !y)
		return CUDA_ERROR_INVALID_HANDLE;
	if ((x->flags | y->flags) & CU_EVENT_DISABLE_TIMING)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!x->ev || !y->ev)
		return CUDA_ERROR_INVALID_HANDLE;
	if (own.ops->event_query(own.bk, x->ev) <= 0 || own.ops->event_query(own.bk, y->ev) <= 0)
		return CUDA_ERROR_NOT_READY;
	uint64_t t0, t1;
	if (own.ops->event_time(own.bk, x->ev, &t0) < 0 || own.ops->event_time(own.bk, y->ev, &t1) < 0) {
		note_done(x), note_done(y);
		t0 = x->host_ns, t1 = y->host_ns;
	}
	*ms = (float)((double)((int64_t)(t1 - t0)) / 1e6);
	return CUDA_SUCCESS;
}

CUresult own_cuEventElapsedTime(float *ms, CUevent a, CUevent b) { return own_cuEventElapsedTime_v2(ms, a, b); }

CUresult own_cuStreamGetCtx_v2(CUstream st, CUcontext *pctx, CUgreenCtx *green)
{
	if (green)
		*green = NULL;
	return own_cuStreamGetCtx(st, pctx);
}

/* Stream attributes (access policy windows, synchronization policy, priority): accepted. */
CUresult own_cuStreamGetAttribute(CUstream s, CUstreamAttrID id, CUstreamAttrValue *v)
{
	(void)id;
	if (v)
		memset(v, 0, sizeof(*v));
	return check_stream(s);
}

CUresult own_cuStreamSetAttribute(CUstream s, CUstreamAttrID id, const CUstreamAttrValue *v)
{
	(void)id, (void)v;
	return check_stream(s);
}

CUresult own_cuStreamCopyAttributes(CUstream d, CUstream s)
{
	return check_stream(d) ? check_stream(d) : check_stream(s);
}
