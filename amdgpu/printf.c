/* CUDA's device printf and assert on amdgcn (printf.h).
 *
 * nvcc calls `vprintf(fmt, buf)`: fmt a generic pointer to the format string (a constant of the
 * module), buf a generic pointer to the arguments, which nvcc lays out in order, each at an
 * offset aligned to its size: 4-byte ints (char and short promoted), 8-byte long longs, size_t,
 * pointers and doubles (floats promoted). The format says which is which, so the call becomes
 * printf(fmt, loads of buf at those offsets...). `assert` calls `__assertfail(message, file,
 * line, function, char size)`, which becomes a printf of CUDA's message and llvm.trap. */
#include "amdgpu/printf.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ARG_STAR: a width or precision from the arguments (`%*d`), which the AMD printf buffer's
 * format (OpenCL's) cannot say: read from the buffer to find the next argument, then left out,
 * and the `*` (or `.*`) with it (that conversion prints at its natural width). */
enum arg_kind { ARG_I32, ARG_I64, ARG_F64, ARG_PTR, ARG_STAR };

/* The argument kinds fmt consumes, in order (at most max); the count. out_fmt (len + 1 bytes)
 * gets fmt without its `*` widths and precisions. */
static size_t format_args(const char *fmt, size_t len, enum arg_kind *out, size_t max, char *out_fmt)
{
	size_t n = 0, o = 0;
	for (size_t i = 0; i < len; i++) {
		out_fmt[o++] = fmt[i];
		if (fmt[i] != '%' || n >= max)
			continue;
		if (i + 1 < len && fmt[i + 1] == '%') {
			out_fmt[o++] = fmt[++i];
			continue;
		}
		while (i + 1 < len && strchr("-+ #0'", fmt[i + 1]))
			out_fmt[o++] = fmt[++i];
		if (i + 1 < len && fmt[i + 1] == '*') {
			out[n++] = ARG_STAR;
			i++;
		}
		while (i + 1 < len && fmt[i + 1] >= '0' && fmt[i + 1] <= '9')
			out_fmt[o++] = fmt[++i];
		if (i + 1 < len && fmt[i + 1] == '.') {
			if (i + 2 < len && fmt[i + 2] == '*' && n < max) {
				out[n++] = ARG_STAR;
				i += 2;
			} else {
				out_fmt[o++] = fmt[++i];
			}
			while (i + 1 < len && fmt[i + 1] >= '0' && fmt[i + 1] <= '9')
				out_fmt[o++] = fmt[++i];
		}
		i++;
		bool wide = false;
		while (i < len && strchr("hlLqjzt", fmt[i])) {
			wide |= fmt[i] != 'h';
			out_fmt[o++] = fmt[i++];
		}
		if (i >= len)
			break;
		char c = fmt[i];
		out_fmt[o++] = c;
		if (n >= max)
			continue;   /* past the 32 arguments CUDA's printf takes */
		if (strchr("diouxXc", c))
			out[n++] = wide ? ARG_I64 : ARG_I32;
		else if (strchr("fFeEgGaA", c))
			out[n++] = ARG_F64;
		else if (strchr("spn", c))
			out[n++] = ARG_PTR;
		else
			max = n;   /* not a conversion printf knows: the rest is printed as it is */
	}
	out_fmt[o] = 0;
	return n;
}

/* A constant's underlying global, through the casts and zero-offset GEPs the lowering and the
 * optimiser put around it; NULL if it is not one. */
static LLVMValueRef global_of(LLVMValueRef v)
{
	for (int depth = 0; v && depth < 8; depth++) {
		if (LLVMIsAGlobalVariable(v))
			return v;
		if (LLVMIsAConstantExpr(v)) {
			LLVMOpcode op = LLVMGetConstOpcode(v);
			if (op != LLVMPtrToInt && op != LLVMIntToPtr && op != LLVMAddrSpaceCast &&
			    op != LLVMBitCast && op != LLVMGetElementPtr)
				return NULL;
			if (op == LLVMGetElementPtr)
				for (int k = 1; k < LLVMGetNumOperands(v); k++) {
					LLVMValueRef ix = LLVMGetOperand(v, (unsigned)k);
					if (!LLVMIsAConstantInt(ix) || LLVMConstIntGetZExtValue(ix))
						return NULL;
				}
			v = LLVMGetOperand(v, 0);
		} else if (LLVMIsAPtrToIntInst(v) || LLVMIsAAddrSpaceCastInst(v)) {
			v = LLVMGetOperand(v, 0);
		} else {
			return NULL;
		}
	}
	return NULL;
}

/* The C string a constant points at (*len bytes up to its NUL), or NULL. */
static const char *const_string(LLVMValueRef v, size_t *len)
{
	LLVMValueRef g = global_of(v);
	LLVMValueRef init = g ? LLVMGetInitializer(g) : NULL;
	if (!init || !LLVMIsConstantString(init))
		return NULL;
	size_t n = 0;
	const char *s = LLVMGetAsString(init, &n);
	*len = strnlen(s, n);
	return s;
}

/* fmt (len bytes, then a NUL) as a private constant in the constant address space, where the
 * backend's printf lowering looks for the format. */
static LLVMValueRef format_global(LLVMModuleRef mod, LLVMContextRef ctx, const char *fmt, size_t len)
{
	LLVMValueRef str = LLVMConstStringInContext(ctx, fmt, (unsigned)len, 0);
	LLVMValueRef g = LLVMAddGlobalInAddressSpace(mod, LLVMTypeOf(str), "__gp_printf_fmt", 4);
	LLVMSetInitializer(g, str);
	LLVMSetGlobalConstant(g, 1);
	LLVMSetLinkage(g, LLVMPrivateLinkage);
	LLVMSetUnnamedAddress(g, LLVMGlobalUnnamedAddr);
	LLVMSetAlignment(g, 1);
	return g;
}

/* An i64 address as a generic pointer (the pointer itself when it was one). */
static LLVMValueRef as_pointer(LLVMBuilderRef b, LLVMContextRef ctx, LLVMValueRef v)
{
	if ((LLVMIsAConstantExpr(v) && LLVMGetConstOpcode(v) == LLVMPtrToInt) || LLVMIsAPtrToIntInst(v)) {
		LLVMValueRef p = LLVMGetOperand(v, 0);
		LLVMTypeRef gen = LLVMPointerTypeInContext(ctx, 0);
		return LLVMTypeOf(p) == gen ? p : LLVMBuildAddrSpaceCast(b, p, gen, "");
	}
	return LLVMBuildIntToPtr(b, v, LLVMPointerTypeInContext(ctx, 0), "");
}

static LLVMValueRef printf_fn(LLVMModuleRef mod, LLVMContextRef ctx, LLVMTypeRef *fty)
{
	LLVMTypeRef pt = LLVMPointerTypeInContext(ctx, 4);
	*fty = LLVMFunctionType(LLVMInt32TypeInContext(ctx), &pt, 1, 1);
	LLVMValueRef f = LLVMGetNamedFunction(mod, "printf");
	return f ? f : LLVMAddFunction(mod, "printf", *fty);
}

/* The calls to the function named name (collected first: rewriting changes the use list). */
static size_t calls_of(LLVMModuleRef mod, const char *name, LLVMValueRef **out)
{
	*out = NULL;
	LLVMValueRef f = LLVMGetNamedFunction(mod, name);
	size_t n = 0, cap = 0;
	for (LLVMUseRef u = f ? LLVMGetFirstUse(f) : NULL; u; u = LLVMGetNextUse(u)) {
		LLVMValueRef c = LLVMGetUser(u);
		if (!LLVMIsACallInst(c) || LLVMGetCalledValue(c) != f)
			continue;
		if (n == cap) {
			LLVMValueRef *g = realloc(*out, (cap = cap ? 2 * cap : 8) * sizeof(*g));
			if (!g)
				break;
			*out = g;
		}
		(*out)[n++] = c;
	}
	return n;
}

static int lower_vprintf(LLVMModuleRef mod, LLVMContextRef ctx, LLVMBuilderRef b, LLVMValueRef call,
			 char *err, size_t errlen)
{
	size_t flen = 0;
	const char *fmt = const_string(LLVMGetOperand(call, 0), &flen);
	if (!fmt) {
		snprintf(err, errlen, "printf on amdgcn: a format string that is not a constant of the module");
		return -1;
	}
	enum arg_kind kinds[32];
	char *plain = malloc(flen + 1);
	if (!plain) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	size_t nk = format_args(fmt, flen, kinds, 32, plain), na = 0;
	LLVMValueRef args[33];
	LLVMPositionBuilderBefore(b, call);
	args[na++] = format_global(mod, ctx, plain, strlen(plain));
	free(plain);
	LLVMValueRef buf = as_pointer(b, ctx, LLVMGetOperand(call, 1));
	LLVMTypeRef i8 = LLVMInt8TypeInContext(ctx);
	unsigned off = 0;
	for (size_t i = 0; i < nk; i++) {
		unsigned size = kinds[i] == ARG_I32 || kinds[i] == ARG_STAR ? 4 : 8;
		off = (off + size - 1) / size * size;
		if (kinds[i] == ARG_STAR) {
			off += size;
			continue;
		}
		LLVMValueRef ix = LLVMConstInt(LLVMInt64TypeInContext(ctx), off, 0);
		LLVMValueRef p = LLVMBuildGEP2(b, i8, buf, &ix, 1, "");
		LLVMTypeRef t = kinds[i] == ARG_I32 ? LLVMInt32TypeInContext(ctx)
			      : kinds[i] == ARG_F64 ? LLVMDoubleTypeInContext(ctx)
			      : LLVMInt64TypeInContext(ctx);
		LLVMValueRef v = LLVMBuildLoad2(b, t, p, "");
		LLVMSetAlignment(v, size);
		args[na++] = kinds[i] == ARG_PTR ? LLVMBuildIntToPtr(b, v, LLVMPointerTypeInContext(ctx, 0), "") : v;
		off += size;
	}
	LLVMTypeRef fty;
	LLVMValueRef pf = printf_fn(mod, ctx, &fty);
	LLVMValueRef r = LLVMBuildCall2(b, fty, pf, args, (unsigned)na, "");
	if (LLVMTypeOf(r) == LLVMTypeOf(call))
		LLVMReplaceAllUsesWith(call, r);
	else
		LLVMReplaceAllUsesWith(call, LLVMConstNull(LLVMTypeOf(call)));
	LLVMInstructionEraseFromParent(call);
	return 0;
}

/* CUDA's message: "file:line: function: Assertion `message` failed." (without the block and
 * thread CUDA adds), then the kernel traps as CUDA's does. */
static void lower_assertfail(LLVMModuleRef mod, LLVMContextRef ctx, LLVMBuilderRef b, LLVMValueRef call)
{
	static const char fmt[] = "%s:%u: %s: Device-side assertion `%s' failed.\n";
	LLVMPositionBuilderBefore(b, call);
	LLVMValueRef args[5] = {format_global(mod, ctx, fmt, sizeof(fmt) - 1),
				as_pointer(b, ctx, LLVMGetOperand(call, 1)),
				LLVMGetOperand(call, 2),
				as_pointer(b, ctx, LLVMGetOperand(call, 3)),
				as_pointer(b, ctx, LLVMGetOperand(call, 0))};
	if (LLVMTypeOf(args[2]) != LLVMInt32TypeInContext(ctx))
		args[2] = LLVMBuildTrunc(b, args[2], LLVMInt32TypeInContext(ctx), "");
	LLVMTypeRef fty;
	LLVMValueRef pf = printf_fn(mod, ctx, &fty);
	LLVMBuildCall2(b, fty, pf, args, 5, "");
	LLVMTypeRef vt = LLVMFunctionType(LLVMVoidTypeInContext(ctx), NULL, 0, 0);
	LLVMValueRef trap = LLVMGetNamedFunction(mod, "llvm.trap");
	if (!trap)
		trap = LLVMAddFunction(mod, "llvm.trap", vt);
	LLVMBuildCall2(b, vt, trap, NULL, 0, "");
	if (LLVMGetTypeKind(LLVMTypeOf(call)) != LLVMVoidTypeKind)
		LLVMReplaceAllUsesWith(call, LLVMConstNull(LLVMTypeOf(call)));
	LLVMInstructionEraseFromParent(call);
}

/* nvcc's string literals ($str, $str$1, ...) and __func__ (__unnamed_N) are writable .global
 * arrays in PTX, which the backend's printf lowering does not take for constant strings: a %s
 * of one would print nothing useful. A printf argument that is one of them gets a constant copy
 * (the program never writes its literals). */
static void constant_strings(LLVMModuleRef mod, LLVMContextRef ctx)
{
	LLVMValueRef *calls;
	size_t n = calls_of(mod, "printf", &calls);
	for (size_t i = 0; i < n; i++) {
		unsigned na = (unsigned)LLVMGetNumArgOperands(calls[i]);
		for (unsigned a = 1; a < na; a++) {
			LLVMValueRef v = LLVMGetOperand(calls[i], a);
			LLVMValueRef g = LLVMGetTypeKind(LLVMTypeOf(v)) == LLVMPointerTypeKind ? global_of(v) : NULL;
			size_t len = 0;
			const char *name = g ? LLVMGetValueName2(g, &len) : NULL;
			const char *str = name && (!strncmp(name, "$str", 4) || !strncmp(name, "__unnamed_", 10))
				? const_string(g, &len) : NULL;
			if (!str)
				continue;
			LLVMValueRef copy = format_global(mod, ctx, str, len);
			LLVMSetOperand(calls[i], a,
				       LLVMConstAddrSpaceCast(copy, LLVMPointerTypeInContext(ctx, 0)));
		}
	}
	free(calls);
}

void amdgpu_printf_strings(LLVMModuleRef mod)
{
	constant_strings(mod, LLVMGetModuleContext(mod));
}

/* `__printf_alloc(bytes)`: bytes of the printf buffer reserved for one record, NULL when it is
 * full. The buffer (the runtime's, at the kernel's hidden printf-buffer argument) starts with
 * two 32-bit words, the bytes written so far and the buffer's size; records follow them. A
 * compare-and-swap loop on the first word reserves [8 + used, 8 + used + bytes). */
static void define_printf_alloc(LLVMModuleRef mod, LLVMContextRef ctx, unsigned cov)
{
	if (LLVMGetNamedFunction(mod, "__printf_alloc"))
		return;
	LLVMTypeRef i8 = LLVMInt8TypeInContext(ctx), i32 = LLVMInt32TypeInContext(ctx),
		    i64 = LLVMInt64TypeInContext(ctx);
	LLVMTypeRef gp = LLVMPointerTypeInContext(ctx, 1), cp = LLVMPointerTypeInContext(ctx, 4);
	LLVMTypeRef fty = LLVMFunctionType(gp, &i32, 1, 0);
	LLVMValueRef f = LLVMAddFunction(mod, "__printf_alloc", fty);
	LLVMSetVisibility(f, LLVMHiddenVisibility);
	LLVMTypeRef ity = LLVMFunctionType(cp, NULL, 0, 0);
	LLVMValueRef ia = LLVMGetNamedFunction(mod, "llvm.amdgcn.implicitarg.ptr");
	if (!ia)
		ia = LLVMAddFunction(mod, "llvm.amdgcn.implicitarg.ptr", ity);
	LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(ctx, f, ""),
			  loop = LLVMAppendBasicBlockInContext(ctx, f, ""),
			  cas = LLVMAppendBasicBlockInContext(ctx, f, ""),
			  done = LLVMAppendBasicBlockInContext(ctx, f, ""),
			  none = LLVMAppendBasicBlockInContext(ctx, f, "");
	LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
	LLVMPositionBuilderAtEnd(b, entry);
	LLVMValueRef hidden = LLVMBuildCall2(b, ity, ia, NULL, 0, "");
	LLVMValueRef at = LLVMConstInt(i64, cov >= 5 ? 72 : 24, 0);
	LLVMValueRef bufp = LLVMBuildLoad2(b, gp, LLVMBuildGEP2(b, i8, hidden, &at, 1, ""), "");
	LLVMBuildCondBr(b, LLVMBuildIsNull(b, bufp, ""), none, loop);
	LLVMPositionBuilderAtEnd(b, loop);
	LLVMValueRef four = LLVMConstInt(i64, 4, 0);
	LLVMValueRef size = LLVMBuildLoad2(b, i32, LLVMBuildGEP2(b, i8, bufp, &four, 1, ""), "");
	LLVMValueRef used0 = LLVMBuildLoad2(b, i32, bufp, "");
	LLVMSetOrdering(used0, LLVMAtomicOrderingMonotonic);
	LLVMSetAlignment(used0, 4);
	LLVMBuildBr(b, cas);
	LLVMPositionBuilderAtEnd(b, cas);
	LLVMValueRef used = LLVMBuildPhi(b, i32, "");
	LLVMValueRef param = LLVMGetParam(f, 0);
	LLVMValueRef end = LLVMBuildAdd(b, used, param, "");
	LLVMValueRef past = LLVMBuildICmp(b, LLVMIntUGT, LLVMBuildAdd(b, end, LLVMConstInt(i32, 8, 0), ""), size, "");
	LLVMValueRef wrap = LLVMBuildICmp(b, LLVMIntULT, end, used, "");
	LLVMBasicBlockRef tryb = LLVMAppendBasicBlockInContext(ctx, f, "");
	LLVMBuildCondBr(b, LLVMBuildOr(b, past, wrap, ""), none, tryb);
	LLVMPositionBuilderAtEnd(b, tryb);
	LLVMValueRef x = LLVMBuildAtomicCmpXchg(b, bufp, used, end, LLVMAtomicOrderingMonotonic,
						LLVMAtomicOrderingMonotonic, 0);
	LLVMValueRef seen = LLVMBuildExtractValue(b, x, 0, "");
	LLVMBuildCondBr(b, LLVMBuildExtractValue(b, x, 1, ""), done, cas);
	LLVMValueRef in_v[2] = {used0, seen};
	LLVMBasicBlockRef in_b[2] = {loop, tryb};
	LLVMAddIncoming(used, in_v, in_b, 2);
	LLVMPositionBuilderAtEnd(b, done);
	LLVMValueRef off = LLVMBuildAdd(b, LLVMBuildZExt(b, used, i64, ""), LLVMConstInt(i64, 8, 0), "");
	LLVMBuildRet(b, LLVMBuildGEP2(b, i8, bufp, &off, 1, ""));
	LLVMPositionBuilderAtEnd(b, none);
	LLVMBuildRet(b, LLVMConstNull(gp));
	LLVMDisposeBuilder(b);
}

int amdgpu_printf_lower(LLVMModuleRef mod, unsigned cov, char *err, size_t errlen)
{
	LLVMContextRef ctx = LLVMGetModuleContext(mod);
	LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
	int done = 0;
	LLVMValueRef *calls;
	size_t n = calls_of(mod, "vprintf", &calls);
	for (size_t i = 0; i < n && done >= 0; i++)
		done = lower_vprintf(mod, ctx, b, calls[i], err, errlen) ? -1 : done + 1;
	free(calls);
	if (done >= 0) {
		n = calls_of(mod, "__assertfail", &calls);
		for (size_t i = 0; i < n; i++, done++)
			if (LLVMGetNumArgOperands(calls[i]) >= 4)
				lower_assertfail(mod, ctx, b, calls[i]);
		free(calls);
	}
	LLVMDisposeBuilder(b);
	if (done > 0)
		define_printf_alloc(mod, ctx, cov);
	static const char *const names[] = {"vprintf", "__assertfail"};
	for (size_t i = 0; i < 2 && done > 0; i++) {
		LLVMValueRef f = LLVMGetNamedFunction(mod, names[i]);
		if (f && !LLVMGetFirstUse(f))
			LLVMDeleteFunction(f);
	}
	return done;
}
