/* Linking the PTX of several translation units into one module (nvcc -rdc: a program's fatbin
 * holds one PTX per unit, and a kernel of one calls device functions, and reads variables, that
 * another defines; NVIDIA's driver links their machine code, a driver that runs PTX links the
 * PTX). */
#ifndef GPUPROBE_PTX_LINK_H
#define GPUPROBE_PTX_LINK_H

#include <stddef.h>

/* Link n PTX texts. A symbol of internal linkage that an earlier unit also defines, or that
 * another unit makes visible or weak, is renamed in its unit (NAME_gpl_UNIT, from 1: nvcc's
 * per-unit names such as $str collide). .extern variables another unit defines are dropped, and
 * every unit's variables come before every unit's functions; an .extern function prototype
 * another unit defines stays, with the definition's linkage (a call needs a prototype before it,
 * and ptxas refuses a definition after an .extern one). Of .weak definitions in several units the
 * first is kept. The header: the highest .version of the units, the first unit's .target and
 * .address_size. Returns malloc'd NUL-terminated text (length in *out_len), or NULL with one line
 * in err: a unit that does not parse ("unit N: LINE:COL: message"), a symbol two units both
 * make visible, or units whose texts do not parse together. */
char *ptx_link(const char *const *texts, const size_t *lens, size_t n, size_t *out_len, char *err,
	       size_t errlen);

struct fatbin;
struct fatbin_entry;
/* The PTX of fatbin entry e linked with every other PTX entry of the same target (a program built
 * with -rdc has one per translation unit, and NVIDIA's driver links their machine code): malloc'd
 * text in *out (length in *len; e's text first, so its header leads), *units the entries used (1:
 * e's text alone, unchanged: also where the entries do not link, e.g. two copies of one module).
 * Negative errno with one line in err (an entry that cannot be read). */
int fatbin__linked_ptx(const struct fatbin *fb, const struct fatbin_entry *e, char **out, size_t *len,
		       size_t *units, char *err, size_t errlen);

#endif
