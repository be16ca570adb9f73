/* Dynamic parallelism: a kernel that launches kernels. nvcc (-rdc, libcudadevrt) makes a device
 * launch two calls of the device runtime: one asks for a parameter buffer (with the kernel, grid,
 * block and dynamic shared memory in CUDA 12's form, cudaGetParameterBufferV2, or with only an
 * alignment and a size in the older one), the kernel writes the arguments into it at the child's
 * parameter offsets, the other launches it (cudaLaunchDeviceV2(buffer, stream), or
 * cudaLaunchDevice(kernel, buffer, grid, block, shared, stream)).
 *
 * Here the buffer is a record of the device launch queue (spirv.h: spirv_options.launch_queue),
 * taken with one atomic add; the launch marks it made. The driver runs the queued launches once
 * the launching kernel has finished, each child with its own descendants before the next child
 * (shim/own_launch.c). CUDA 12's device runtime lets no parent wait for its children (device-side
 * cudaDeviceSynchronize is gone), so a child that starts after its parent has ended is one of
 * the orders CUDA allows, and launches into the same stream keep their order.
 *
 * A device-side cudaMemcpyAsync is queued the same way (token 0, destination, source and size
 * as its parameters), so it runs after the launches made before it, as in its stream.
 *
 * Device streams are accepted and ignored (created as 0, the block's stream): launches on
 * different streams may run in any order, this one included. cudaGetErrorString gives one
 * string (the only error a device call here can return is a null buffer's). A full queue makes the parameter
 * buffer call return 0 (CUDA's answer when its pending launch buffer is full) and counts the
 * refusal for the driver to report. */
#include "spirv/lower.h"

#include <string.h>

enum launch_call { LC_NONE, LC_STREAM_CREATE, LC_STREAM_DESTROY, LC_PARAM_BUFFER_V2, LC_LAUNCH_V2,
		   LC_PARAM_BUFFER, LC_LAUNCH, LC_NO_ERROR, LC_MEMCPY, LC_ERROR_STRING };

static enum launch_call kind_of(const char *name)
{
	static const struct { const char *name; enum launch_call k; } calls[] = {
		{"StreamCreateWithFlags", LC_STREAM_CREATE}, {"StreamDestroy", LC_STREAM_DESTROY},
		{"GetParameterBufferV2", LC_PARAM_BUFFER_V2}, {"LaunchDeviceV2", LC_LAUNCH_V2},
		{"GetParameterBuffer", LC_PARAM_BUFFER}, {"LaunchDevice", LC_LAUNCH},
		{"GetLastError", LC_NO_ERROR}, {"PeekAtLastError", LC_NO_ERROR}, {"MemcpyAsync", LC_MEMCPY},
		{"GetErrorString", LC_ERROR_STRING}};
	const char *base = !strncmp(name, "__cudaCDP2", 10) ? name + 10 : !strncmp(name, "cuda", 4) ? name + 4 : NULL;
	for (size_t i = 0; base && i < sizeof(calls) / sizeof(calls[0]); i++)
		if (!strcmp(base, calls[i].name))
			return calls[i].k;
	return LC_NONE;
}

bool lw_is_device_launch_call(const char *name)
{
	enum launch_call k = kind_of(name);
	return !strncmp(name, "__cudaCDP", 9) || k == LC_PARAM_BUFFER_V2 || k == LC_LAUNCH_V2 || k == LC_PARAM_BUFFER ||
	       k == LC_LAUNCH || k == LC_MEMCPY;
}

/* A CrossWorkgroup pointer to a u32 or u64 at addr + off. */
static uint32_t queue_ptr(lw *c, uint32_t addr, uint64_t off, unsigned bits)
{
	uint32_t u64 = spv_t_int(c->e, 64);
	uint32_t a = off ? lw_op2(c, SpvOpIAdd, u64, addr, lw_u64(c, off)) : addr;
	return lw_op1(c, SpvOpConvertUToPtr, spv_t_ptr(c->e, SpvStorageClassCrossWorkgroup, spv_t_int(c->e, bits)), a);
}

static void store_at(lw *c, uint32_t addr, uint64_t off, unsigned bits, uint32_t v)
{
	spv_op(&c->body, SpvOpStore, 2, queue_ptr(c, addr, off, bits), v);
}

/* Argument i of the call, a .param of t (its value), or of a dim3 (*xyz: its three words). */
static uint32_t arg_value(lw *c, const ir_operand *args, unsigned i, ptype t)
{
	uint32_t p = lw_param_ptr(c, &args->elems[i], t);
	return p ? lw_op1(c, SpvOpLoad, lw_type(c, t), p) : 0;
}

static int arg_dim3(lw *c, const ir_operand *args, unsigned i, uint32_t xyz[3])
{
	uint32_t u32 = spv_t_int(c->e, 32);
	struct sym *s = lw_sym(c, args->elems[i].name);
	if (!s || s->kind != SYM_PARAM)
		return lw_fail(c, "a dim3 argument must be a .param variable");
	uint32_t at = spv_t_array(c->e, u32, spv_c_int(c->e, 32, 3));
	uint32_t p = lw_op1(c, SpvOpBitcast, spv_t_ptr(c->e, SpvStorageClassFunction, at), s->var);
	for (unsigned k = 0; k < 3; k++)
		xyz[k] = lw_op1(c, SpvOpLoad, u32, lw_op2(c, SpvOpInBoundsAccessChain,
							  spv_t_ptr(c->e, SpvStorageClassFunction, u32), p, lw_u32(c, k)));
	return 0;
}

/* The launch's kernel (argument fn_i), grid and block (dims_i, dims_i + 1) and shared bytes
 * (dims_i + 2) into the record at rec. */
static int fill_record(lw *c, uint32_t rec, const ir_operand *args, unsigned fn_i, unsigned dims_i)
{
	uint32_t grid[3], block[3];
	uint32_t fn = arg_value(c, args, fn_i, PT('u', 64));
	if (!fn || arg_dim3(c, args, dims_i, grid) < 0 || arg_dim3(c, args, dims_i + 1, block) < 0)
		return -1;
	uint32_t shared = arg_value(c, args, dims_i + 2, PT('u', 32));
	if (!shared)
		return -1;
	store_at(c, rec, 0, 64, fn);
	for (unsigned k = 0; k < 3; k++) {
		store_at(c, rec, 8 + 4 * k, 32, grid[k]);
		store_at(c, rec, 20 + 4 * k, 32, block[k]);
	}
	store_at(c, rec, 32, 32, shared);
	return 0;
}

/* Take a record: its parameters' address, or 0 when the queue is full (counted). With args, the
 * V2 call's kernel, grid, block and shared bytes go into it. */
static uint32_t take_record(lw *c, const ir_operand *args)
{
	uint32_t u32 = spv_t_int(c->e, 32), u64 = spv_t_int(c->e, 64), bl = spv_t_bool(c->e);
	uint32_t q = lw_u64(c, c->opts->launch_queue);
	lw_ensure_block(c);
	uint32_t off = spv_id(c->e);
	uint32_t sem = SpvMemorySemanticsSequentiallyConsistentMask | SpvMemorySemanticsCrossWorkgroupMemoryMask;
	spv_op(&c->body, SpvOpAtomicIAdd, 6, u32, off, queue_ptr(c, q, 0, 32), lw_u32(c, SpvScopeDevice),
	       lw_u32(c, sem), lw_u32(c, SPIRV_LAUNCH_RECORD));
	uint32_t ok = lw_op2(c, SpvOpULessThanEqual, bl, off,
			     lw_u32(c, SPIRV_LAUNCH_QUEUE_BYTES - SPIRV_LAUNCH_QUEUE_HEAD - SPIRV_LAUNCH_RECORD));
	uint32_t rec = lw_op2(c, SpvOpIAdd, u64, q,
			      lw_op2(c, SpvOpIAdd, u64, lw_op1(c, SpvOpUConvert, u64, off), lw_u64(c, SPIRV_LAUNCH_QUEUE_HEAD)));
	uint32_t fill = spv_id(c->e), full = spv_id(c->e), done = spv_id(c->e);
	lw_branch_cond(c, ok, fill, full);
	lw_label(c, fill);
	store_at(c, rec, 36, 32, lw_u32(c, 0));
	if (args && fill_record(c, rec, args, 0, 1) < 0)
		return 0;
	lw_branch(c, done);
	lw_label(c, full);
	uint32_t old = spv_id(c->e);
	spv_op(&c->body, SpvOpAtomicIAdd, 6, u32, old, queue_ptr(c, q, 4, 32), lw_u32(c, SpvScopeDevice),
	       lw_u32(c, sem), lw_u32(c, 1));
	lw_branch(c, done);
	lw_label(c, done);
	return lw_select(c, u64, ok, lw_op2(c, SpvOpIAdd, u64, rec, lw_u64(c, SPIRV_LAUNCH_PARAMS)), lw_u64(c, 0));
}

/* The address of a module string for cudaGetErrorString. */
static uint32_t error_string(lw *c)
{
	static const char msg[] = "invalid argument (gpuprobe's own driver)";
	uint32_t i8 = spv_t_int(c->e, 8), n = sizeof(msg);
	uint32_t at = spv_t_array(c->e, i8, spv_c_int(c->e, 32, n));
	uint32_t ops[2 + sizeof(msg)] = {at, spv_id(c->e)};
	for (uint32_t k = 0; k < n; k++)
		ops[2 + k] = spv_c_int(c->e, 8, (uint8_t)msg[k]);
	spv_inst(&c->e->globals, SpvOpConstantComposite, 2 + n, ops);
	uint32_t var = spv_id(c->e);
	spv_op(&c->e->globals, SpvOpVariable, 4, spv_t_ptr(c->e, SpvStorageClassCrossWorkgroup, at), var,
	       (uint32_t)SpvStorageClassCrossWorkgroup, ops[1]);
	return lw_op1(c, SpvOpConvertPtrToU, spv_t_int(c->e, 64), var);
}

static int set_result(lw *c, const ir_operand *rets, ptype t, uint32_t v)
{
	if (!rets || rets->nelems != 1)
		return 1;
	uint32_t p = lw_param_ptr(c, &rets->elems[0], t);
	if (!p)
		return -1;
	spv_op(&c->body, SpvOpStore, 2, p, v);
	return 1;
}

int lw_device_launch_call(lw *c, const ir_insn *in, const char *name, const ir_operand *args, const ir_operand *rets)
{
	static const unsigned nargs[] = {[LC_STREAM_CREATE] = 2, [LC_STREAM_DESTROY] = 1, [LC_PARAM_BUFFER_V2] = 4,
					 [LC_LAUNCH_V2] = 2, [LC_PARAM_BUFFER] = 2, [LC_LAUNCH] = 6, [LC_NO_ERROR] = 0,
					 [LC_MEMCPY] = 5, [LC_ERROR_STRING] = 1};
	enum launch_call k = kind_of(name);
	if (k == LC_NONE)
		return lw_fail(c, "dynamic parallelism: %s is not supported (launches, parameter buffers and "
				  "streams are)", name);
	if (k != LC_NO_ERROR && k != LC_STREAM_CREATE && k != LC_STREAM_DESTROY && k != LC_ERROR_STRING &&
	    !(c->opts && c->opts->launch_queue))
		return lw_fail(c, "dynamic parallelism (a kernel launching kernels, %s) needs a launch queue, "
				  "which gpuprobe's own driver gives and this lowering was not given", name);
	if ((args ? args->nelems : 0) != nargs[k])
		return lw_unsupported(c, in, "the device runtime call's arguments differ from CUDA's");
	for (unsigned i = 0; i < nargs[k]; i++)
		if (args->elems[i].kind != IR_OPND_SYMBOL)
			return lw_unsupported(c, in, "the device runtime's arguments must be .param variables");
	uint32_t u64 = spv_t_int(c->e, 64);
	lw_ensure_block(c);
	switch (k) {
	case LC_STREAM_CREATE: {   /* *stream = 0: the block's own stream */
		uint32_t sp = arg_value(c, args, 0, PT('u', 64));
		if (!sp)
			return -1;
		spv_op(&c->body, SpvOpStore, 2,
		       lw_op1(c, SpvOpConvertUToPtr, spv_t_ptr(c->e, SpvStorageClassGeneric, u64), sp), lw_u64(c, 0));
		return set_result(c, rets, PT('u', 32), lw_u32(c, 0));
	}
	case LC_STREAM_DESTROY:
	case LC_NO_ERROR:
		return set_result(c, rets, PT('u', 32), lw_u32(c, 0));
	case LC_ERROR_STRING:
		return set_result(c, rets, PT('u', 64), error_string(c));
	case LC_MEMCPY: {   /* dst, src, count, kind, stream: a record of token 0 */
		uint32_t dst = arg_value(c, args, 0, PT('u', 64)), src = arg_value(c, args, 1, PT('u', 64));
		uint32_t n = arg_value(c, args, 2, PT('u', 64));
		if (!dst || !src || !n)
			return -1;
		uint32_t p = take_record(c, NULL);
		if (!p)
			return -1;
		uint32_t bl = spv_t_bool(c->e), put = spv_id(c->e), done = spv_id(c->e);
		uint32_t got = lw_op2(c, SpvOpINotEqual, bl, p, lw_u64(c, 0));
		lw_branch_cond(c, got, put, done);
		lw_label(c, put);
		uint32_t rec = lw_op2(c, SpvOpISub, u64, p, lw_u64(c, SPIRV_LAUNCH_PARAMS));
		store_at(c, rec, 0, 64, lw_u64(c, 0));
		store_at(c, p, 0, 64, dst);
		store_at(c, p, 8, 64, src);
		store_at(c, p, 16, 64, n);
		store_at(c, rec, 36, 32, lw_u32(c, 1));
		lw_branch(c, done);
		lw_label(c, done);
		/* cudaErrorLaunchPendingCountExceeded (69) when the queue is full */
		return set_result(c, rets, PT('u', 32), lw_select(c, spv_t_int(c->e, 32), got, lw_u32(c, 0), lw_u32(c, 69)));
	}
	case LC_PARAM_BUFFER_V2:
	case LC_PARAM_BUFFER: {
		if (k == LC_PARAM_BUFFER) {   /* alignment and size: CUDA aligns to 64 at most, as here */
			uint32_t size = arg_value(c, args, 1, PT('u', 64));
			if (!size)
				return -1;
		}
		uint32_t p = take_record(c, k == LC_PARAM_BUFFER_V2 ? args : NULL);
		return p ? set_result(c, rets, PT('u', 64), p) : -1;
	}
	case LC_LAUNCH_V2:
	case LC_LAUNCH: {
		uint32_t buf = arg_value(c, args, k == LC_LAUNCH ? 1 : 0, PT('u', 64));
		if (!buf)
			return -1;
		uint32_t bl = spv_t_bool(c->e), made = spv_id(c->e), done = spv_id(c->e);
		uint32_t nonnull = lw_op2(c, SpvOpINotEqual, bl, buf, lw_u64(c, 0));
		uint32_t rec = lw_op2(c, SpvOpISub, u64, buf, lw_u64(c, SPIRV_LAUNCH_PARAMS));
		lw_branch_cond(c, nonnull, made, done);
		lw_label(c, made);
		if (k == LC_LAUNCH && fill_record(c, rec, args, 0, 2) < 0)   /* kernel, buffer, grid, block, shared, stream */
			return -1;
		store_at(c, rec, 36, 32, lw_u32(c, 1));
		lw_branch(c, done);
		lw_label(c, done);
		/* cudaErrorInvalidValue (1) for a null buffer, as CUDA answers */
		return set_result(c, rets, PT('u', 32), lw_select(c, spv_t_int(c->e, 32), nonnull, lw_u32(c, 0), lw_u32(c, 1)));
	}
	default:
		return lw_fail(c, "dynamic parallelism: %s is not supported", name);
	}
}
