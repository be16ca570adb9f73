/* The one rule by which a section's kernel (or device function) glob names a function, used by
 * the instrumentation passes, the configuration's kernel filters (`run -k`), `gpuprobe list
 * --match` and `gpuprobe verify --against`.
 *
 * A glob (fnmatch(3): *, ?, [...]) matches a function when it matches any of:
 *   1. the mangled name                                  _Z5scaleILi512EEvPfi
 *   2. the demangled name without its return type        scale<512>(float*, int)
 *   3. that name without its parameter list              scale<512>
 *   4. the base name: 3 without template arguments       scale
 * (for an extern "C" function, whose name is not mangled, all four are the name itself).
 * NULL or "" matches everything. */
#ifndef GPUPROBE_KERNEL_MATCH_H
#define GPUPROBE_KERNEL_MATCH_H

#include <stddef.h>

/* 1 when glob names the function, 0 otherwise; demangles mangled itself. */
int gp_kernel_match(const char *glob, const char *mangled);

/* The same with the demangled name already at hand (NULL: not a mangled name). */
int gp_kernel_match_dem(const char *glob, const char *mangled, const char *demangled);

/* The forms 2..4 of a demangled name, written into out (cap bytes each); a form that does not
 * fit or does not exist is "". */
void gp_kernel_names(const char *demangled, char *no_ret, char *no_params, char *base, size_t cap);

#endif
