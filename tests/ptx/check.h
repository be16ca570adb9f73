/* The PTX tests' check: a failed condition prints FILE:LINE and a message and counts. */
#ifndef GPUPROBE_TESTS_PTX_CHECK_H
#define GPUPROBE_TESTS_PTX_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(cond, ...)                                                  \
	do {                                                              \
		if (!(cond)) {                                            \
			fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);   \
			fprintf(stderr, __VA_ARGS__);                     \
			fputc('\n', stderr);                              \
			failures++;                                       \
		}                                                         \
	} while (0)

#endif
