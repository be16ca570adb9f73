/* Kernel globs (kernel_match.h): one rule for every place that matches a kernel name. */
#include "ptx-frontend/kernel_match.h"
#include "ptx-frontend/demangle.h"
#include "ptx-frontend/instrument.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

/* The parameter list's '(' of a demangled name: the last '(' at template and parenthesis depth
 * 0 whose matching ')' ends the name (or is followed only by cv/ref qualifiers). Names like
 * "(anonymous namespace)::k(int)" and "f<(int)3>(int)" are why it is not strchr. */
static const char *params_open(const char *d)
{
	const char *open = NULL;
	int angle = 0, paren = 0;
	for (const char *p = d; *p; p++) {
		if (*p == '<')
			angle++;
		else if (*p == '>' && angle)
			angle--;
		else if (*p == '(') {
			if (!angle && !paren)
				open = p;
			paren++;
		} else if (*p == ')' && paren)
			paren--;
	}
	if (open && !strncmp(open, "(anonymous namespace)", 21) && !strchr(open + 21, '('))
		return NULL;
	return open;
}

/* Where the name starts once a return type ("void ", "int* ") is skipped: the last space at
 * depth 0 before the parameter list. Template functions' demangled names carry it, others not. */
static const char *name_start(const char *d, const char *end)
{
	const char *start = d;
	int angle = 0, paren = 0;
	for (const char *p = d; p < end; p++) {
		if (*p == '<')
			angle++;
		else if (*p == '>' && angle)
			angle--;
		else if (*p == '(')
			paren++;
		else if (*p == ')' && paren)
			paren--;
		else if (*p == ' ' && !angle && !paren)
			start = p + 1;
	}
	return start;
}

static void copy(char *out, size_t cap, const char *from, size_t n)
{
	if (n >= cap) {
		out[0] = 0;
		return;
	}
	memcpy(out, from, n);
	out[n] = 0;
}

void gp_kernel_names(const char *demangled, char *no_ret, char *no_params, char *base, size_t cap)
{
	no_ret[0] = no_params[0] = base[0] = 0;
	if (!demangled || !cap)
		return;
	const char *open = params_open(demangled);
	const char *end = open ? open : demangled + strlen(demangled);
	const char *start = name_start(demangled, end);
	copy(no_ret, cap, start, strlen(start));
	copy(no_params, cap, start, (size_t)(end - start));
	/* the base: template argument lists at the end (of each scope) dropped */
	size_t n = 0;
	int angle = 0;
	for (const char *p = start; p < end && n + 1 < cap; p++) {
		if (*p == '<' && !(p > start && p[-1] == '<') && strncmp(p, "<=", 2)) {
			/* operator< and operator<< keep their '<' */
			if (p - start >= 8 && !strncmp(p - 8, "operator", 8)) {
				base[n++] = *p;
				continue;
			}
			angle++;
		} else if (*p == '>' && angle) {
			angle--;
		} else if (!angle) {
			base[n++] = *p;
		}
	}
	base[n] = 0;
}

int gp_kernel_match_dem(const char *glob, const char *mangled, const char *demangled)
{
	if (!glob || !*glob)
		return 1;
	if (mangled && !fnmatch(glob, mangled, 0))
		return 1;
	if (!demangled)
		return 0;
	char a[1024], b[1024], c[1024];
	gp_kernel_names(demangled, a, b, c, sizeof(a));
	/* the full demangled name, with a template's return type, is not one of the forms:
	 * "void*" would name every template kernel */
	return (a[0] && !fnmatch(glob, a, 0)) || (b[0] && !fnmatch(glob, b, 0)) ||
	       (c[0] && !fnmatch(glob, c, 0));
}

int gp_kernel_match(const char *glob, const char *mangled)
{
	if (!glob || !*glob)
		return 1;
	if (mangled && !fnmatch(glob, mangled, 0))
		return 1;
	char *d = demangle(mangled);
	int ok = d && gp_kernel_match_dem(glob, NULL, d);
	free(d);
	return ok;
}

/* instrument.h's name for the rule (the instrumentation passes call it). */
int gp_instrument_glob(const char *glob, const char *mangled, const char *demangled)
{
	return gp_kernel_match_dem(glob, mangled, demangled);
}
