/* A small assertion kit for the maps tests: each failed check prints file:line and what it saw. */
#ifndef GPUPROBE_TESTS_MAPS_CHECK_H
#define GPUPROBE_TESTS_MAPS_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_failures;

#define CHECK(cond)                                                                    \
	do {                                                                           \
		if (!(cond)) {                                                         \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			check_failures++;                                              \
		}                                                                      \
	} while (0)

#define CHECK_EQ(a, b)                                                                 \
	do {                                                                           \
		long long _a = (long long)(a), _b = (long long)(b);                    \
		if (_a != _b) {                                                        \
			fprintf(stderr, "%s:%d: %s == %lld, expected %s == %lld\n", __FILE__, \
				__LINE__, #a, _a, #b, _b);                             \
			check_failures++;                                              \
		}                                                                      \
	} while (0)

#define CHECK_STR(a, b)                                                                \
	do {                                                                           \
		const char *_a = (a), *_b = (b);                                       \
		if (!_a || strcmp(_a, _b)) {                                           \
			fprintf(stderr, "%s:%d: %s is\n----\n%s\n----\nexpected\n----\n%s\n----\n", \
				__FILE__, __LINE__, #a, _a ? _a : "(null)", _b);       \
			check_failures++;                                              \
		}                                                                      \
	} while (0)

#define CHECK_DONE()                                                                   \
	do {                                                                           \
		if (check_failures)                                                    \
			fprintf(stderr, "%d check(s) failed\n", check_failures);       \
		return check_failures ? 1 : 0;                                         \
	} while (0)

#endif
