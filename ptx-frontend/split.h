/* One kernel of a module as a module of its own, for instrumenting and compiling kernels one at a
 * time at their first launch (shim/lazy.c) instead of whole modules at load.
 *
 * The application's module is loaded as it asked; a launched kernel gets a small module holding
 * just that kernel and the functions it calls. The kernels of a module share its variables
 * (__device__ and __constant__: the application writes them through cuModuleGetGlobal), so the
 * small module must not have copies of its own: it is split with the variables still declared
 * (so it instruments like any module and its text, free of addresses, can be cached), and bound
 * just before it is loaded, each reference to one of those variables replaced by the address
 * the original module's variable has in this context. Constant-space variables then live in
 * global memory: their loads become global loads of the same bytes.
 *
 * Whatever the split cannot prove safe it refuses with a reason; the caller instruments the
 * whole module instead (decided at load, ptx_split_precheck) or, at a launch, runs the
 * original kernel without probes. */
#ifndef GPUPROBE_PTX_SPLIT_H
#define GPUPROBE_PTX_SPLIT_H

#include <stddef.h>
#include <stdint.h>

#include "ptx-frontend/ir.h"

/* A cheap scan of PTX text, made at load: 0 when kernels of the module may be split out one by
 * one; -1 with the reason in why when the module uses something a split cannot keep shared or
 * does not model (texture, surface and sampler references, .extern/.weak/.common symbols,
 * indirect calls, debug sections, 32-bit addresses). Conservative: a word in a comment counts. */
int ptx_split_precheck(const char *ptx, size_t len, char *why, size_t whylen);

/* A parsed module kept for splitting (the names of its module-scope symbols indexed). */
struct ptx_split_src;
struct ptx_split_src *ptx_split_src_new(const char *ptx, size_t len, char *err, size_t errlen);
void ptx_split_src_free(struct ptx_split_src *s);

/* The module-scope variables a split module shares with the original, by name. */
struct ptx_split_vars {
	unsigned n;
	char **names;      /* malloc'd */
};
void ptx_split_vars_free(struct ptx_split_vars *v);

/* The text of a module holding kernel, every function it references (transitively), the
 * module-scope variables they reference (global and constant ones declared without their
 * initializers, to be bound later; shared and local ones as they are) and the module's
 * directives. 0 with *out (malloc'd) and the shared variables in *vars, or -1 with why.
 * Thread-safe for one src. */
int ptx_split_kernel(const struct ptx_split_src *s, const char *kernel, char **out, size_t *out_len,
		     struct ptx_split_vars *vars, char *why, size_t whylen);

/* Bind a split module (instrumented or not) to the original's variables: resolve(user, name,
 * &addr) gives each variable's device address (0, or -1 to refuse). Declarations of vars go, and
 * every reference to them becomes that address: [g+8] -> [ADDR+8], mov d, g -> mov d, ADDR,
 * cvta.global d, g -> mov d, ADDR. Constant space is then no longer used, so ld.const becomes
 * ld.global and cvta(.to).const becomes mov. 0 with *out, or -1 with why (a use of a variable
 * it does not know how to rewrite, a constant-space variable left over). */
int ptx_split_bind(const char *ptx, size_t len, const struct ptx_split_vars *vars,
		   int (*resolve)(void *user, const char *name, uint64_t *addr), void *user,
		   char **out, size_t *out_len, char *why, size_t whylen);

/* The same, but the text holds no address: a variable's address is read from a table, `.const
 * .u64 __gp_bind[vars->n]` (entry i for vars->names[i]), which the caller fills from addrs
 * (vars->n entries written here) after loading the module, before its first launch. The
 * addresses of an application's module globals differ from run to run, and a text that holds
 * them missed the driver's JIT cache every time (simpleTexture, simpleAssert: the whole compile
 * again in every "cached" run, H100). mov.u32 of a variable's address is not rewritten (-1). */
int ptx_split_bind_table(const char *ptx, size_t len, const struct ptx_split_vars *vars,
			 int (*resolve)(void *user, const char *name, uint64_t *addr), void *user,
			 char **out, size_t *out_len, uint64_t *addrs, char *why, size_t whylen);
#define PTX_SPLIT_BIND_TABLE "__gp_bind"

#endif
