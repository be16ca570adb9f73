/* CUDA graphs in the own driver: a graph is its nodes in the order they were added (a node's
 * dependencies exist before it, so that order is a topological one), an executable graph a copy
 * of them, and a launch runs them in that order on the one in-order queue (own.h), which keeps
 * every dependency. Stream capture records the async work of a capturing stream (and of streams
 * that wait on its events) as nodes instead of running it. Kernel, copy, memset, host, empty,
 * event and child-graph nodes; others answer CUDA_ERROR_NOT_SUPPORTED with one line. */
#include "shim/own.h"
#define OWN(name, impl) shim_fnty_##name own_##impl;
#include "shim/own_list.h"
#undef OWN
#include "shim/own_module.h"

#include <stdlib.h>
#include <string.h>

enum { OWN_MAGIC_GRAPH = 0x6f677268, OWN_MAGIC_EXEC = 0x6f676578, OWN_MAGIC_NODE = 0x6f6e6f64 };

struct own_node {
	uint32_t magic;
	struct own_graph *graph;
	unsigned index;
	CUgraphNodeType type;
	/* kernel */
	CUfunction f;
	unsigned grid[3], block[3], shmem;
	unsigned char *args;      /* the parameters' bytes, at their PTX offsets */
	void **argp;              /* one pointer per parameter into args */
	/* copy, memset */
	CUDA_MEMCPY3D copy;
	uint64_t dst, src;
	size_t n, psize, count, pitch, height;
	unsigned char pattern[4];
	/* host */
	void (*fn)(void *);
	void *data;
	/* child graph */
	struct own_graph *child;
};

struct own_graph {
	uint32_t magic;
	struct own_node **nodes;
	unsigned n, cap;
};

struct own_exec {
	uint32_t magic;
	struct own_graph *g;      /* a copy */
};

static struct own_graph *as_graph(CUgraph g)
{
	struct own_graph *x = (struct own_graph *)g;
	return x && x->magic == OWN_MAGIC_GRAPH ? x : NULL;
}

static struct own_node *as_node(CUgraphNode n)
{
	struct own_node *x = (struct own_node *)n;
	return x && x->magic == OWN_MAGIC_NODE ? x : NULL;
}

static struct own_exec *as_exec(CUgraphExec e)
{
	struct own_exec *x = (struct own_exec *)e;
	return x && x->magic == OWN_MAGIC_EXEC ? x : NULL;
}

static struct own_graph *graph_new(void)
{
	struct own_graph *g = calloc(1, sizeof(*g));
	if (g)
		g->magic = OWN_MAGIC_GRAPH;
	return g;
}

static void node_free(struct own_node *n)
{
	free(n->args);
	free(n->argp);
	n->magic = 0;
	free(n);
}

static void graph_free(struct own_graph *g)
{
	if (!g)
		return;
	for (unsigned i = 0; i < g->n; i++)
		node_free(g->nodes[i]);
	free(g->nodes);
	g->magic = 0;
	free(g);
}

static struct own_node *node_add(struct own_graph *g, CUgraphNodeType type)
{
	if (g->n == g->cap) {
		unsigned cap = g->cap ? 2 * g->cap : 16;
		struct own_node **a = realloc(g->nodes, cap * sizeof(*a));
		if (!a)
			return NULL;
		g->nodes = a, g->cap = cap;
	}
	struct own_node *n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	n->magic = OWN_MAGIC_NODE;
	n->graph = g;
	n->index = g->n;
	n->type = type;
	g->nodes[g->n++] = n;
	return n;
}

/* The kernel's parameters copied (the application may reuse its buffers at once). */
static CUresult set_kernel(struct own_node *n, CUfunction fn, const unsigned grid[3], const unsigned block[3],
			   unsigned shmem, void **params, void **extra)
{
	struct own_func *f = own_func_of(fn);
	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	unsigned char *args = calloc(f->param_bytes ? f->param_bytes : 1, 1);
	void **argp = calloc(f->nparams ? f->nparams : 1, sizeof(*argp));
	if (!args || !argp) {
		free(args);
		free(argp);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	const char *buf = NULL;
	size_t buflen = 0;
	for (void **e = extra; !params && e && *e != CU_LAUNCH_PARAM_END; e += 2) {
		if (*e == CU_LAUNCH_PARAM_BUFFER_POINTER)
			buf = e[1];
		else if (*e == CU_LAUNCH_PARAM_BUFFER_SIZE)
			buflen = *(size_t *)e[1];
	}
	for (unsigned i = 0; i < f->nparams; i++) {
		const void *src = params ? params[i]
			: buf && f->params[i].offset + f->params[i].size <= buflen ? buf + f->params[i].offset : NULL;
		if (!src) {
			free(args);
			free(argp);
			return CUDA_ERROR_INVALID_VALUE;
		}
		memcpy(args + f->params[i].offset, src, f->params[i].size);
		argp[i] = args + f->params[i].offset;
	}
	free(n->args);
	free(n->argp);
	n->f = fn, n->args = args, n->argp = argp, n->shmem = shmem;
	memcpy(n->grid, grid, sizeof(n->grid));
	memcpy(n->block, block, sizeof(n->block));
	return CUDA_SUCCESS;
}

static CUresult set_kernel_params(struct own_node *n, const CUDA_KERNEL_NODE_PARAMS *p)
{
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	const unsigned g[3] = {p->gridDimX, p->gridDimY, p->gridDimZ}, b[3] = {p->blockDimX, p->blockDimY, p->blockDimZ};
	return set_kernel(n, p->func ? p->func : (CUfunction)p->kern, g, b, p->sharedMemBytes, p->kernelParams, p->extra);
}

static CUresult node_copy(struct own_graph *to, const struct own_node *from)
{
	struct own_node *n = node_add(to, from->type);
	if (!n)
		return CUDA_ERROR_OUT_OF_MEMORY;
	unsigned idx = n->index;
	struct own_graph *g = n->graph;
	*n = *from;
	n->index = idx, n->graph = g, n->args = NULL, n->argp = NULL;
	if (from->type == CU_GRAPH_NODE_TYPE_KERNEL)
		return set_kernel(n, from->f, from->grid, from->block, from->shmem, from->argp, NULL);
	return CUDA_SUCCESS;
}

static CUresult run(struct own_graph *g)
{
	CUresult rc = CUDA_SUCCESS;
	for (unsigned i = 0; i < g->n && !rc; i++) {
		struct own_node *n = g->nodes[i];
		switch (n->type) {
		case CU_GRAPH_NODE_TYPE_KERNEL:
			rc = own_launch(n->f, n->grid, n->block, n->shmem, NULL, n->argp, NULL);
			break;
		case CU_GRAPH_NODE_TYPE_MEMCPY:
			rc = n->n ? own_copy(n->dst, n->src, n->n, 1, NULL) : own_copy3d(&n->copy, 1, NULL);
			break;
		case CU_GRAPH_NODE_TYPE_MEMSET:
			rc = own_set(n->dst, n->pattern, n->psize, n->count, n->pitch, n->height, NULL);
			break;
		case CU_GRAPH_NODE_TYPE_HOST:
			rc = own_err(own.ops->queue_finish(own.bk, own.queue, NULL, 0));
			if (!rc)
				n->fn(n->data);
			break;
		case CU_GRAPH_NODE_TYPE_GRAPH:
			rc = run(n->child);
			break;
		default:   /* empty, event record and wait: the queue's order covers them */
			break;
		}
	}
	return rc;
}

/* ---- stream capture ---- */

struct own_graph *own_capturing(CUstream st)
{
	struct own_stream *s = (struct own_stream *)st;
	if (!s || st == CU_STREAM_LEGACY || st == CU_STREAM_PER_THREAD || s->magic != OWN_MAGIC_STREAM)
		return NULL;
	return s->capture;
}

CUresult own_graph_add_copy(struct own_graph *g, uint64_t dst, uint64_t src, size_t bytes)
{
	struct own_node *n = node_add(g, CU_GRAPH_NODE_TYPE_MEMCPY);
	if (!n)
		return CUDA_ERROR_OUT_OF_MEMORY;
	n->dst = dst, n->src = src, n->n = bytes;
	return CUDA_SUCCESS;
}

CUresult own_graph_add_set(struct own_graph *g, uint64_t d, const void *pat, size_t psize, size_t count,
			   size_t pitch, size_t height)
{
	struct own_node *n = node_add(g, CU_GRAPH_NODE_TYPE_MEMSET);
	if (!n)
		return CUDA_ERROR_OUT_OF_MEMORY;
	n->dst = d, n->psize = psize, n->count = count, n->pitch = pitch, n->height = height;
	memcpy(n->pattern, pat, psize);
	return CUDA_SUCCESS;
}

CUresult own_graph_add_launch(struct own_graph *g, CUfunction f, const unsigned grid[3], const unsigned block[3],
			      unsigned shmem, void **params, void **extra)
{
	struct own_node *n = node_add(g, CU_GRAPH_NODE_TYPE_KERNEL);
	if (!n)
		return CUDA_ERROR_OUT_OF_MEMORY;
	CUresult rc = set_kernel(n, f, grid, block, shmem, params, extra);
	if (rc)
		n->type = CU_GRAPH_NODE_TYPE_EMPTY;
	return rc;
}

CUresult own_graph_add_host(struct own_graph *g, void (*fn)(void *), void *data)
{
	struct own_node *n = node_add(g, CU_GRAPH_NODE_TYPE_HOST);
	if (!n)
		return CUDA_ERROR_OUT_OF_MEMORY;
	n->fn = fn, n->data = data;
	return CUDA_SUCCESS;
}

static unsigned long long capture_ids;

CUresult own_cuStreamBeginCapture_v2(CUstream st, CUstreamCaptureMode mode)
{
	(void)mode;
	struct own_stream *s = (struct own_stream *)st;
	if (!s || st == CU_STREAM_LEGACY || st == CU_STREAM_PER_THREAD || s->magic != OWN_MAGIC_STREAM)
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	if (s->capture)
		return CUDA_ERROR_ILLEGAL_STATE;
	if (!(s->capture = graph_new()))
		return CUDA_ERROR_OUT_OF_MEMORY;
	s->capture_id = __atomic_add_fetch(&capture_ids, 1, __ATOMIC_RELAXED);
	return CUDA_SUCCESS;
}

CUresult own_cuStreamBeginCaptureToGraph(CUstream st, CUgraph g, const CUgraphNode *deps,
					 const CUgraphEdgeData *edges, size_t n, CUstreamCaptureMode mode)
{
	(void)deps, (void)edges, (void)n, (void)mode;
	struct own_stream *s = (struct own_stream *)st;
	if (!as_graph(g) || !s || st == CU_STREAM_LEGACY || st == CU_STREAM_PER_THREAD || s->magic != OWN_MAGIC_STREAM)
		return CUDA_ERROR_INVALID_VALUE;
	s->capture = as_graph(g);
	s->capture_id = __atomic_add_fetch(&capture_ids, 1, __ATOMIC_RELAXED);
	return CUDA_SUCCESS;
}

/* Streams that joined a capture by waiting on one of its events (own_stream.c). */
static struct own_stream *joined[64];
static unsigned njoined;
static pthread_mutex_t joined_lock = PTHREAD_MUTEX_INITIALIZER;

void own_capture_join(struct own_stream *s, struct own_graph *g)
{
	s->capture = g;
	pthread_mutex_lock(&joined_lock);
	if (njoined < 64)
		joined[njoined++] = s;
	pthread_mutex_unlock(&joined_lock);
}

CUresult own_cuStreamEndCapture(CUstream st, CUgraph *pg)
{
	struct own_stream *s = (struct own_stream *)st;
	if (!s || st == CU_STREAM_LEGACY || st == CU_STREAM_PER_THREAD || s->magic != OWN_MAGIC_STREAM || !s->capture)
		return CUDA_ERROR_ILLEGAL_STATE;
	struct own_graph *g = s->capture;
	s->capture = NULL;
	pthread_mutex_lock(&joined_lock);
	for (unsigned i = 0; i < njoined; i++)
		if (joined[i]->magic == OWN_MAGIC_STREAM && joined[i]->capture == g) {
			joined[i]->capture = NULL;
			joined[i--] = joined[--njoined];
		}
	pthread_mutex_unlock(&joined_lock);
	if (pg)
		*pg = (CUgraph)g;
	return CUDA_SUCCESS;
}

/* ---- graphs ---- */

CUresult own_cuGraphCreate(CUgraph *pg, unsigned flags)
{
	(void)flags;
	if (!pg)
		return CUDA_ERROR_INVALID_VALUE;
	struct own_graph *g = graph_new();
	if (!g)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*pg = (CUgraph)g;
	return CUDA_SUCCESS;
}

CUresult own_cuGraphDestroy(CUgraph g)
{
	struct own_graph *x = as_graph(g);
	if (!x)
		return CUDA_ERROR_INVALID_VALUE;
	graph_free(x);
	return CUDA_SUCCESS;
}

static CUresult added(CUgraphNode *out, struct own_node *n)
{
	if (!n)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (out)
		*out = (CUgraphNode)n;
	return CUDA_SUCCESS;
}

CUresult own_cuGraphAddKernelNode_v2(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t nd,
				     const CUDA_KERNEL_NODE_PARAMS *p)
{
	(void)deps, (void)nd;
	struct own_graph *x = as_graph(g);
	if (!x)
		return CUDA_ERROR_INVALID_VALUE;
	struct own_node *n = node_add(x, CU_GRAPH_NODE_TYPE_KERNEL);
	if (!n)
		return CUDA_ERROR_OUT_OF_MEMORY;
	CUresult rc = set_kernel_params(n, p);
	if (rc) {
		n->type = CU_GRAPH_NODE_TYPE_EMPTY;
		return rc;
	}
	return added(out, n);
}

CUresult own_cuGraphAddMemcpyNode(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t nd,
				  const CUDA_MEMCPY3D *c, CUcontext ctx)
{
	(void)deps, (void)nd, (void)ctx;
	struct own_graph *x = as_graph(g);
	if (!x || !c)
		return CUDA_ERROR_INVALID_VALUE;
	struct own_node *n = node_add(x, CU_GRAPH_NODE_TYPE_MEMCPY);
	if (n)
		n->copy = *c;
	return added(out, n);
}

CUresult own_cuGraphAddMemsetNode(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t nd,
				  const CUDA_MEMSET_NODE_PARAMS *p, CUcontext ctx)
{
	(void)deps, (void)nd, (void)ctx;
	struct own_graph *x = as_graph(g);
	if (!x || !p || (p->elementSize != 1 && p->elementSize != 2 && p->elementSize != 4))
		return CUDA_ERROR_INVALID_VALUE;
	struct own_node *n = node_add(x, CU_GRAPH_NODE_TYPE_MEMSET);
	if (n) {
		n->dst = p->dst, n->psize = p->elementSize, n->count = p->width, n->pitch = p->pitch;
		n->height = p->height;
		memcpy(n->pattern, &p->value, p->elementSize);
	}
	return added(out, n);
}

CUresult own_cuGraphAddHostNode(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t nd,
				const CUDA_HOST_NODE_PARAMS *p)
{
	(void)deps, (void)nd;
	struct own_graph *x = as_graph(g);
	if (!x || !p || !p->fn)
		return CUDA_ERROR_INVALID_VALUE;
	struct own_node *n = node_add(x, CU_GRAPH_NODE_TYPE_HOST);
	if (n)
		n->fn = p->fn, n->data = p->userData;
	return added(out, n);
}

CUresult own_cuGraphAddEmptyNode(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t nd)
{
	(void)deps, (void)nd;
	struct own_graph *x = as_graph(g);
	if (!x)
		return CUDA_ERROR_INVALID_VALUE;
	return added(out, node_add(x, CU_GRAPH_NODE_TYPE_EMPTY));
}

CUresult own_cuGraphAddEventRecordNode(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t nd, CUevent e)
{
	(void)deps, (void)nd, (void)e;
	struct own_graph *x = as_graph(g);
	if (!x)
		return CUDA_ERROR_INVALID_VALUE;
	return added(out, node_add(x, CU_GRAPH_NODE_TYPE_EVENT_RECORD));
}

CUresult own_cuGraphAddEventWaitNode(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t nd, CUevent e)
{
	(void)deps, (void)nd, (void)e;
	struct own_graph *x = as_graph(g);
	if (!x)
		return CUDA_ERROR_INVALID_VALUE;
	return added(out, node_add(x, CU_GRAPH_NODE_TYPE_WAIT_EVENT));
}

CUresult own_cuGraphAddChildGraphNode(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t nd, CUgraph child)
{
	(void)deps, (void)nd;
	struct own_graph *x = as_graph(g), *c = as_graph(child);
	if (!x || !c)
		return CUDA_ERROR_INVALID_VALUE;
	struct own_graph *copy = graph_new();
	if (!copy)
		return CUDA_ERROR_OUT_OF_MEMORY;
	for (unsigned i = 0; i < c->n; i++)
		if (node_copy(copy, c->nodes[i])) {
			graph_free(copy);
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
	struct own_node *n = node_add(x, CU_GRAPH_NODE_TYPE_GRAPH);
	if (!n) {
		graph_free(copy);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	n->child = copy;
	return added(out, n);
}

CUresult own_cuGraphGetNodes(CUgraph g, CUgraphNode *nodes, size_t *count)
{
	struct own_graph *x = as_graph(g);
	if (!x || !count)
		return CUDA_ERROR_INVALID_VALUE;
	if (!nodes) {
		*count = x->n;
		return CUDA_SUCCESS;
	}
	size_t k = *count < x->n ? *count : x->n;
	for (size_t i = 0; i < k; i++)
		nodes[i] = (CUgraphNode)x->nodes[i];
	*count = k;
	return CUDA_SUCCESS;
}

CUresult own_cuGraphNodeGetType(CUgraphNode node, CUgraphNodeType *t)
{
	struct own_node *n = as_node(node);
	if (!n || !t)
		return CUDA_ERROR_INVALID_VALUE;
	*t = n->type;
	return CUDA_SUCCESS;
}

CUresult own_cuGraphKernelNodeGetParams_v2(CUgraphNode node, CUDA_KERNEL_NODE_PARAMS *p)
{
	struct own_node *n = as_node(node);
	if (!n || !p || n->type != CU_GRAPH_NODE_TYPE_KERNEL)
		return CUDA_ERROR_INVALID_VALUE;
	memset(p, 0, sizeof(*p));
	p->func = n->f;
	p->gridDimX = n->grid[0], p->gridDimY = n->grid[1], p->gridDimZ = n->grid[2];
	p->blockDimX = n->block[0], p->blockDimY = n->block[1], p->blockDimZ = n->block[2];
	p->sharedMemBytes = n->shmem;
	p->kernelParams = n->argp;
	return CUDA_SUCCESS;
}

CUresult own_cuGraphKernelNodeSetParams_v2(CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS *p)
{
	struct own_node *n = as_node(node);
	if (!n || n->type != CU_GRAPH_NODE_TYPE_KERNEL)
		return CUDA_ERROR_INVALID_VALUE;
	return set_kernel_params(n, p);
}

/* ---- executable graphs ---- */

static CUresult instantiate(CUgraphExec *pe, CUgraph g)
{
	struct own_graph *x = as_graph(g);
	if (!pe || !x)
		return CUDA_ERROR_INVALID_VALUE;
	struct own_exec *e = calloc(1, sizeof(*e));
	struct own_graph *copy = graph_new();
	if (!e || !copy) {
		free(e);
		free(copy);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	for (unsigned i = 0; i < x->n; i++)
		if (node_copy(copy, x->nodes[i])) {
			graph_free(copy);
			free(e);
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
	e->magic = OWN_MAGIC_EXEC;
	e->g = copy;
	*pe = (CUgraphExec)e;
	return CUDA_SUCCESS;
}

CUresult own_cuGraphInstantiateWithFlags(CUgraphExec *pe, CUgraph g, unsigned long long flags)
{
	(void)flags;
	return instantiate(pe, g);
}

CUresult own_cuGraphInstantiateWithParams(CUgraphExec *pe, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
	CUresult rc = instantiate(pe, g);
	if (p) {
		p->result_out = rc ? CUDA_GRAPH_INSTANTIATE_ERROR : CUDA_GRAPH_INSTANTIATE_SUCCESS;
		p->hErrNode_out = NULL;
	}
	return rc;
}

CUresult own_cuGraphExecDestroy(CUgraphExec ge)
{
	struct own_exec *e = as_exec(ge);
	if (!e)
		return CUDA_ERROR_INVALID_VALUE;
	graph_free(e->g);
	e->magic = 0;
	free(e);
	return CUDA_SUCCESS;
}

CUresult own_cuGraphLaunch(CUgraphExec ge, CUstream s)
{
	struct own_exec *e = as_exec(ge);
	if (!e)
		return CUDA_ERROR_INVALID_VALUE;
	CUresult rc = own_ready();
	if (rc)
		return rc;
	if (own_capturing(s))
		return own_unsupported(-1, "cuGraphLaunch into a capturing stream");
	return run(e->g);
}

CUresult own_cuGraphUpload(CUgraphExec ge, CUstream s)
{
	(void)s;
	return as_exec(ge) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult own_cuGraphExecKernelNodeSetParams_v2(CUgraphExec ge, CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS *p)
{
	struct own_exec *e = as_exec(ge);
	struct own_node *n = as_node(node);
	if (!e || !n || n->index >= e->g->n || e->g->nodes[n->index]->type != CU_GRAPH_NODE_TYPE_KERNEL)
		return CUDA_ERROR_INVALID_VALUE;
	return set_kernel_params(e->g->nodes[n->index], p);
}

/* The executable takes the graph's parameters when both have the same nodes of the same types. */
CUresult own_cuGraphExecUpdate_v2(CUgraphExec ge, CUgraph g, CUgraphExecUpdateResultInfo *info)
{
	struct own_exec *e = as_exec(ge);
	struct own_graph *x = as_graph(g);
	if (!e || !x)
		return CUDA_ERROR_INVALID_VALUE;
	int same = x->n == e->g->n;
	for (unsigned i = 0; same && i < x->n; i++)
		same = x->nodes[i]->type == e->g->nodes[i]->type &&
		       (x->nodes[i]->type != CU_GRAPH_NODE_TYPE_KERNEL || x->nodes[i]->f == e->g->nodes[i]->f);
	if (info) {
		memset(info, 0, sizeof(*info));
		info->result = same ? CU_GRAPH_EXEC_UPDATE_SUCCESS : CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
	}
	if (!same)
		return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
	struct own_graph *copy = graph_new();
	if (!copy)
		return CUDA_ERROR_OUT_OF_MEMORY;
	for (unsigned i = 0; i < x->n; i++)
		if (node_copy(copy, x->nodes[i])) {
			graph_free(copy);
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
	graph_free(e->g);
	e->g = copy;
	return CUDA_SUCCESS;
}
