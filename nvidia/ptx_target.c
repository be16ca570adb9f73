/* Raising an instrumented module's .version and .target (ptx_target.h). */
#include "nvidia/ptx_target.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROBE_VERSION 78   /* 7.8, as major * 10 + minor */
#define PROBE_SM 70

static ir_top *directive(ir_module *m, const char *name)
{
	size_t n = strlen(name);
	for (ir_top *t = m->first; t; t = t->next)
		if (t->kind == IR_TOP_DIRECTIVE && !strncmp(t->text, name, n) &&
		    (t->text[n] == ' ' || t->text[n] == '\t'))
			return t;
	return NULL;
}

/* The first instruction of the module that only targets before sm_70 accept, or NULL. */
static const ir_stmt *pre_volta_collective(const ir_module *m, const char **func)
{
	for (const ir_top *t = m->first; t; t = t->next) {
		if (t->kind != IR_TOP_FUNC)
			continue;
		for (const ir_stmt *s = t->func.first; s; s = s->next) {
			if (s->kind != IR_STMT_INSN || (strcmp(s->insn.opcode, "shfl") && strcmp(s->insn.opcode, "vote")))
				continue;
			unsigned k = 0;
			while (k < s->insn.nmods && strcmp(s->insn.mods[k], ".sync"))
				k++;
			if (k == s->insn.nmods) {
				*func = t->func.name;
				return s;
			}
		}
	}
	return NULL;
}

int gp_nv_ptx_target__raise(ir_module *m, char *err, size_t errlen)
{
	ir_top *v = directive(m, ".version"), *t = directive(m, ".target");
	unsigned maj = 0, min = 0;
	if (v && sscanf(v->text + 8, " %u.%u", &maj, &min) == 2 && maj < 2) {
		snprintf(err, errlen, "PTX ISA %u.%u (line %u) is not instrumented: its code means what "
			 "sm_1x targets did (mad.f32 without rounding), which later targets do not accept",
			 maj, min, v->line);
		return -ENOTSUP;
	}
	const char *sm = t ? strstr(t->text, "sm_") : NULL;
	unsigned num = sm ? (unsigned)strtoul(sm + 3, NULL, 10) : PROBE_SM;
	if (sm && num < 20) {
		snprintf(err, errlen, "PTX for .target sm_%u (line %u) is not instrumented: sm_1x code "
			 "means what later targets do not accept", num, t->line);
		return -ENOTSUP;
	}
	if (num < PROBE_SM) {
		const char *fn = NULL;
		const ir_stmt *s = pre_volta_collective(m, &fn);
		if (s) {
			snprintf(err, errlen, "PTX for .target sm_%u is not instrumented: %s without .sync "
				 "(line %u, in %s) is not allowed for sm_70, which the probes need", num,
				 s->insn.opcode, s->line, fn);
			return -ENOTSUP;
		}
		size_t digits = strspn(sm + 3, "0123456789");
		const char *rest = sm + 3 + digits;
		while (*rest && *rest != ',' && *rest != ' ' && *rest != '\t')
			rest++;   /* a suffix (sm_52a does not exist, but keep the grammar's word whole) */
		t->text = ir_strfmt(m, "%.*ssm_%u%s", (int)(sm - t->text), t->text, PROBE_SM, rest);
		m->target = ir_strfmt(m, "sm_%u", PROBE_SM);
	}
	if (v && maj * 10 + min < PROBE_VERSION)
		v->text = ir_strfmt(m, ".version %u.%u", PROBE_VERSION / 10, PROBE_VERSION % 10);
	return 0;
}
