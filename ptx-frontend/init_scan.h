/* The elements of a variable's initializer, as the code generators (spirv/, amdgpu/) read them:
 * "{1, 2.5, 0f3F800000, generic(sym)+8, fn}" or "7", one element at a time. A number comes as the
 * raw bits of the element type; a symbol (a variable's or function's address) as its name, whether
 * generic() wraps it, and its addend. The parser keeps initializers as written; this is where
 * their elements are checked. */
#ifndef GPUPROBE_INIT_SCAN_H
#define GPUPROBE_INIT_SCAN_H

#include <stdbool.h>
#include <stdint.h>

enum ir_init_kind {
	IR_INIT_END,      /* no element left */
	IR_INIT_VALUE,    /* raw: the value's bits, little-endian in the element's width */
	IR_INIT_SYMBOL,   /* name (a PTX identifier), generic, addend */
	IR_INIT_BAD,      /* not a number, nor an identifier with an optional generic() and +N/-N */
};

struct ir_init_elem {
	uint64_t raw;
	bool generic;
	int64_t addend;
	char name[256];
};

/* The next element at *p (advanced past it) of an initializer whose element type is kind
 * ('u', 's', 'b', 'f') and bits wide. Unsigned values up to 2^64-1 and negative ones both
 * keep their bits; 0f/0d hexadecimal floats are exact (0d into an f32 is rounded to it). */
enum ir_init_kind ir_init_next(const char **p, char kind, unsigned bits, struct ir_init_elem *e);

#endif
