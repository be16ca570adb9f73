/* The own driver's CUDA arrays, texture objects and surface objects.
 *
 * An array is plain device memory, rows packed (pitch = width x texel bytes), 2D slices, layers
 * and cube faces one after another; copies reach it through cuMemcpy2D/3D (CU_MEMORYTYPE_ARRAY)
 * and the 1D cuMemcpy*A* forms (offsets into those packed bytes). A texture or surface object is
 * the device address of a gp_tex_desc (spirv/texture.h) in host memory the device reads: the
 * lowering (spirv/lower_tex.c) samples in software from it, so objects work on every backend.
 * Mipmapped arrays are not implemented (their functions stay unimplemented, each saying so). */
#include "shim/own.h"
#define OWN(name, impl) shim_fnty_##name own_##impl;
#include "shim/own_list.h"
#undef OWN
#include "shim/log.h"
#include "spirv/texture.h"

#include <stdlib.h>
#include <string.h>

struct own_array {
	uint32_t magic;
	CUDA_ARRAY3D_DESCRIPTOR d;
	uint64_t data;
	size_t texel, pitch, slice, bytes;
};

/* Bytes of one element of a format (one channel), 0 for formats not implemented. */
static size_t format_bytes(CUarray_format f)
{
	switch (f) {
	case CU_AD_FORMAT_UNSIGNED_INT8:
	case CU_AD_FORMAT_SIGNED_INT8: return 1;
	case CU_AD_FORMAT_UNSIGNED_INT16:
	case CU_AD_FORMAT_SIGNED_INT16:
	case CU_AD_FORMAT_HALF: return 2;
	case CU_AD_FORMAT_UNSIGNED_INT32:
	case CU_AD_FORMAT_SIGNED_INT32:
	case CU_AD_FORMAT_FLOAT: return 4;
	default: return 0;
	}
}

static struct own_array *array_of(CUarray h)
{
	struct own_array *a = (struct own_array *)h;
	return a && a->magic == OWN_MAGIC_ARRAY ? a : NULL;
}

static CUresult array_create(CUarray *out, const CUDA_ARRAY3D_DESCRIPTOR *d)
{
	CUresult rc = own_ready();
	if (rc)
		return rc;
	if (!out || !d || !d->Width)
		return CUDA_ERROR_INVALID_VALUE;
	size_t eb = format_bytes(d->Format);
	if (!eb) {
		shim_msg("own driver: CUDA array format 0x%x is not implemented (8/16/32-bit integers, half and "
			 "float are)", (unsigned)d->Format);
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	if (d->NumChannels != 1 && d->NumChannels != 2 && d->NumChannels != 4)
		return CUDA_ERROR_INVALID_VALUE;
	if (d->Flags & (CUDA_ARRAY3D_SPARSE | CUDA_ARRAY3D_DEFERRED_MAPPING))
		return own_unsupported(-1, "cuArray3DCreate with sparse or deferred-mapping arrays");
	if ((d->Flags & CUDA_ARRAY3D_CUBEMAP) &&
	    (d->Width != d->Height || !d->Depth || d->Depth % 6 || (!(d->Flags & CUDA_ARRAY3D_LAYERED) && d->Depth != 6)))
		return CUDA_ERROR_INVALID_VALUE;
	struct own_array *a = calloc(1, sizeof(*a));
	if (!a)
		return CUDA_ERROR_OUT_OF_MEMORY;
	a->magic = OWN_MAGIC_ARRAY;
	a->d = *d;
	a->texel = eb * d->NumChannels;
	a->pitch = d->Width * a->texel;
	a->slice = a->pitch * (d->Height ? d->Height : 1);
	a->bytes = a->slice * (d->Depth ? d->Depth : 1);
	if (own.ops->mem_alloc(own.bk, a->bytes, GP_BK_MEM_DEVICE, &a->data, NULL, 0) < 0) {
		free(a);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	unsigned char zero = 0;
	own.ops->fill(own.bk, own.queue, a->data, &zero, 1, a->bytes, NULL, 0);
	*out = (CUarray)a;
	return CUDA_SUCCESS;
}

CUresult own_cuArray3DCreate_v2(CUarray *out, const CUDA_ARRAY3D_DESCRIPTOR *d) { return array_create(out, d); }

CUresult own_cuArrayCreate_v2(CUarray *out, const CUDA_ARRAY_DESCRIPTOR *d)
{
	if (!d)
		return CUDA_ERROR_INVALID_VALUE;
	CUDA_ARRAY3D_DESCRIPTOR t = {.Width = d->Width, .Height = d->Height, .Depth = 0, .Format = d->Format,
				     .NumChannels = d->NumChannels, .Flags = 0};
	return array_create(out, &t);
}

CUresult own_cuArrayDestroy(CUarray h)
{
	struct own_array *a = array_of(h);
	if (!a)
		return CUDA_ERROR_INVALID_HANDLE;
	own.ops->queue_finish(own.bk, own.queue, NULL, 0);
	own.ops->mem_free(own.bk, a->data);
	a->magic = 0;
	free(a);
	return CUDA_SUCCESS;
}

CUresult own_cuArray3DGetDescriptor_v2(CUDA_ARRAY3D_DESCRIPTOR *d, CUarray h)
{
	struct own_array *a = array_of(h);
	if (!a)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!d)
		return CUDA_ERROR_INVALID_VALUE;
	*d = a->d;
	return CUDA_SUCCESS;
}

CUresult own_cuArrayGetDescriptor_v2(CUDA_ARRAY_DESCRIPTOR *d, CUarray h)
{
	struct own_array *a = array_of(h);
	if (!a)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!d)
		return CUDA_ERROR_INVALID_VALUE;
	d->Width = a->d.Width, d->Height = a->d.Height, d->Format = a->d.Format, d->NumChannels = a->d.NumChannels;
	return CUDA_SUCCESS;
}

CUresult own_cuArrayGetMemoryRequirements(CUDA_ARRAY_MEMORY_REQUIREMENTS *r, CUarray h, CUdevice dev)
{
	(void)dev;
	struct own_array *a = array_of(h);
	if (!a)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!r)
		return CUDA_ERROR_INVALID_VALUE;
	memset(r, 0, sizeof(*r));
	r->size = a->bytes, r->alignment = 512;
	return CUDA_SUCCESS;
}

/* An array as a linear memory for copies (own_copy3d): its base, pitch and rows per slice. */
int own_array_linear(CUarray h, uint64_t *base, size_t *pitch, size_t *height)
{
	struct own_array *a = array_of(h);
	if (!a)
		return -1;
	*base = a->data, *pitch = a->pitch, *height = a->d.Height ? a->d.Height : 1;
	return 0;
}

/* ---- 1D copies: offsets into the array's packed bytes ---- */

static CUresult array_span(CUarray h, size_t off, size_t n, uint64_t *addr)
{
	struct own_array *a = array_of(h);
	if (!a)
		return CUDA_ERROR_INVALID_HANDLE;
	if (off > a->bytes || n > a->bytes - off)
		return CUDA_ERROR_INVALID_VALUE;
	*addr = a->data + off;
	return CUDA_SUCCESS;
}

#define P(x) ((uint64_t)(uintptr_t)(x))
#define SPAN(h, off, n, var)                                                                       \
	uint64_t var;                                                                              \
	do {                                                                                       \
		CUresult rc_ = array_span(h, off, n, &var);                                        \
		if (rc_)                                                                           \
			return rc_;                                                                \
	} while (0)

CUresult own_cuMemcpyHtoA_v2(CUarray d, size_t off, const void *s, size_t n)
{
	SPAN(d, off, n, a);
	return own_copy(a, P(s), n, 0, NULL);
}
CUresult own_cuMemcpyHtoAAsync_v2(CUarray d, size_t off, const void *s, size_t n, CUstream st)
{
	SPAN(d, off, n, a);
	return own_copy(a, P(s), n, 1, st);
}
CUresult own_cuMemcpyAtoH_v2(void *d, CUarray s, size_t off, size_t n)
{
	SPAN(s, off, n, a);
	return own_copy(P(d), a, n, 0, NULL);
}
CUresult own_cuMemcpyAtoHAsync_v2(void *d, CUarray s, size_t off, size_t n, CUstream st)
{
	SPAN(s, off, n, a);
	return own_copy(P(d), a, n, 1, st);
}
CUresult own_cuMemcpyDtoA_v2(CUarray d, size_t off, CUdeviceptr s, size_t n)
{
	SPAN(d, off, n, a);
	return own_copy(a, s, n, 0, NULL);
}
CUresult own_cuMemcpyAtoD_v2(CUdeviceptr d, CUarray s, size_t off, size_t n)
{
	SPAN(s, off, n, a);
	return own_copy(d, a, n, 0, NULL);
}
CUresult own_cuMemcpyAtoA_v2(CUarray d, size_t doff, CUarray s, size_t soff, size_t n)
{
	SPAN(d, doff, n, a);
	SPAN(s, soff, n, b);
	return own_copy(a, b, n, 0, NULL);
}

/* ---- texture and surface objects ---- */

struct own_texobj {
	struct own_texobj *next;
	uint64_t addr;             /* the handle: the gp_tex_desc's address */
	int surface;
	CUDA_RESOURCE_DESC res;
	CUDA_TEXTURE_DESC tex;
	CUDA_RESOURCE_VIEW_DESC view;
	int has_view;
};

static pthread_mutex_t objs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct own_texobj *objs;

/* The descriptor of a resource (and, for textures, its sampling state). */
static CUresult describe(const CUDA_RESOURCE_DESC *r, const CUDA_TEXTURE_DESC *t, struct gp_tex_desc *g)
{
	memset(g, 0, sizeof(*g));
	g->width = g->height = g->depth = g->layers = 1;
	size_t eb;
	switch (r->resType) {
	case CU_RESOURCE_TYPE_ARRAY: {
		struct own_array *a = array_of(r->res.array.hArray);
		if (!a)
			return CUDA_ERROR_INVALID_HANDLE;
		g->data = a->data, g->pitch = a->pitch, g->slice = a->slice;
		g->width = (uint32_t)a->d.Width;
		g->height = a->d.Height ? (uint32_t)a->d.Height : 1;
		unsigned depth = a->d.Depth ? (unsigned)a->d.Depth : 1;
		if (a->d.Flags & (CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP))
			g->layers = depth;   /* layers; cube faces (x layers for cubemap arrays) */
		else
			g->depth = depth;
		g->format = a->d.Format, g->channels = a->d.NumChannels;
		break;
	}
	case CU_RESOURCE_TYPE_LINEAR:
		eb = format_bytes(r->res.linear.format);
		if (!eb || !r->res.linear.numChannels || r->res.linear.numChannels > 4 || r->res.linear.numChannels == 3)
			return CUDA_ERROR_INVALID_VALUE;
		g->data = r->res.linear.devPtr;
		g->width = (uint32_t)(r->res.linear.sizeInBytes / (eb * r->res.linear.numChannels));
		g->pitch = g->slice = r->res.linear.sizeInBytes;
		g->format = r->res.linear.format, g->channels = r->res.linear.numChannels;
		break;
	case CU_RESOURCE_TYPE_PITCH2D:
		eb = format_bytes(r->res.pitch2D.format);
		if (!eb || !r->res.pitch2D.numChannels || r->res.pitch2D.numChannels > 4 || r->res.pitch2D.numChannels == 3)
			return CUDA_ERROR_INVALID_VALUE;
		g->data = r->res.pitch2D.devPtr;
		g->width = (uint32_t)r->res.pitch2D.width, g->height = (uint32_t)r->res.pitch2D.height;
		g->pitch = r->res.pitch2D.pitchInBytes, g->slice = g->pitch * g->height;
		g->format = r->res.pitch2D.format, g->channels = r->res.pitch2D.numChannels;
		break;
	case CU_RESOURCE_TYPE_MIPMAPPED_ARRAY:
		return own_unsupported(-1, "texture objects of mipmapped arrays");
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
	if (t) {
		for (unsigned i = 0; i < 3; i++)
			g->address[i] = (uint32_t)t->addressMode[i];
		g->filter = (uint32_t)t->filterMode;
		if (t->flags & CU_TRSF_NORMALIZED_COORDINATES)
			g->flags |= GP_TEX_NORMALIZED_COORDS;
		if (t->flags & CU_TRSF_READ_AS_INTEGER)
			g->flags |= GP_TEX_READ_AS_INTEGER;
		memcpy(g->border, t->borderColor, sizeof(g->border));
	}
	return CUDA_SUCCESS;
}

static CUresult object_create(uint64_t *out, const CUDA_RESOURCE_DESC *r, const CUDA_TEXTURE_DESC *t,
			      const CUDA_RESOURCE_VIEW_DESC *v, int surface)
{
	CUresult rc = own_ready();
	if (rc)
		return rc;
	if (!out || !r || (!surface && !t))
		return CUDA_ERROR_INVALID_VALUE;
	if (surface && r->resType != CU_RESOURCE_TYPE_ARRAY)
		return CUDA_ERROR_INVALID_VALUE;
	struct gp_tex_desc g;
	rc = describe(r, t, &g);
	if (rc)
		return rc;
	struct own_texobj *o = calloc(1, sizeof(*o));
	if (!o)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (own.ops->mem_alloc(own.bk, sizeof(g), GP_BK_MEM_HOST, &o->addr, NULL, 0) < 0) {
		free(o);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	memcpy((void *)(uintptr_t)o->addr, &g, sizeof(g));
	o->surface = surface;
	o->res = *r;
	if (t)
		o->tex = *t;
	if (v)
		o->view = *v, o->has_view = 1;
	pthread_mutex_lock(&objs_lock);
	o->next = objs, objs = o;
	pthread_mutex_unlock(&objs_lock);
	*out = o->addr;
	return CUDA_SUCCESS;
}

static struct own_texobj *object_find(uint64_t h, int surface)
{
	struct own_texobj *o;
	pthread_mutex_lock(&objs_lock);
	for (o = objs; o && !(o->addr == h && o->surface == surface); o = o->next)
		;
	pthread_mutex_unlock(&objs_lock);
	return o;
}

static CUresult object_destroy(uint64_t h, int surface)
{
	pthread_mutex_lock(&objs_lock);
	struct own_texobj **pp = &objs, *o = NULL;
	for (; *pp; pp = &(*pp)->next)
		if ((*pp)->addr == h && (*pp)->surface == surface) {
			o = *pp;
			*pp = o->next;
			break;
		}
	pthread_mutex_unlock(&objs_lock);
	if (!o)
		return CUDA_ERROR_INVALID_VALUE;
	own.ops->queue_finish(own.bk, own.queue, NULL, 0);   /* kernels may still read it */
	own.ops->mem_free(own.bk, o->addr);
	free(o);
	return CUDA_SUCCESS;
}

CUresult own_cuTexObjectCreate(CUtexObject *out, const CUDA_RESOURCE_DESC *r, const CUDA_TEXTURE_DESC *t,
			       const CUDA_RESOURCE_VIEW_DESC *v)
{
	return object_create((uint64_t *)out, r, t, v, 0);
}
CUresult own_cuTexObjectDestroy(CUtexObject h) { return object_destroy(h, 0); }
CUresult own_cuTexObjectGetResourceDesc(CUDA_RESOURCE_DESC *r, CUtexObject h)
{
	struct own_texobj *o = object_find(h, 0);
	if (!o || !r)
		return CUDA_ERROR_INVALID_VALUE;
	*r = o->res;
	return CUDA_SUCCESS;
}
CUresult own_cuTexObjectGetTextureDesc(CUDA_TEXTURE_DESC *t, CUtexObject h)
{
	struct own_texobj *o = object_find(h, 0);
	if (!o || !t)
		return CUDA_ERROR_INVALID_VALUE;
	*t = o->tex;
	return CUDA_SUCCESS;
}
CUresult own_cuTexObjectGetResourceViewDesc(CUDA_RESOURCE_VIEW_DESC *v, CUtexObject h)
{
	struct own_texobj *o = object_find(h, 0);
	if (!o || !v || !o->has_view)
		return CUDA_ERROR_INVALID_VALUE;
	*v = o->view;
	return CUDA_SUCCESS;
}

CUresult own_cuSurfObjectCreate(CUsurfObject *out, const CUDA_RESOURCE_DESC *r)
{
	return object_create((uint64_t *)out, r, NULL, NULL, 1);
}
CUresult own_cuSurfObjectDestroy(CUsurfObject h) { return object_destroy(h, 1); }
CUresult own_cuSurfObjectGetResourceDesc(CUDA_RESOURCE_DESC *r, CUsurfObject h)
{
	struct own_texobj *o = object_find(h, 1);
	if (!o || !r)
		return CUDA_ERROR_INVALID_VALUE;
	*r = o->res;
	return CUDA_SUCCESS;
}
