/* The semantic table: for each PTX instruction the table knows, which leading operands it writes,
 * what kind of instruction it is (flags), and how to find its memory access. Instructions stay
 * generic in the IR; passes ask this table what one means.
 *
 * Some opcodes only mean something with their first modifiers (cp.async.bulk, wmma.load,
 * mbarrier.try_wait): those entries are spelled with dots, and ir_insn_info_for picks the longest
 * entry that the opcode and its leading modifiers spell. The table is sorted (strcmp order) for
 * binary search; tests/ptx checks the order. */
#include "ptx-frontend/ir.h"

#include <string.h>

enum mem_kind {
	MEM_NONE, MEM_LD, MEM_ST, MEM_ATOM, MEM_RED, MEM_REDASYNC, MEM_STASYNC, MEM_CPASYNC,
	MEM_BULK, MEM_BULKRED, MEM_BULKTENSOR, MEM_LDMATRIX, MEM_STMATRIX, MEM_WMMALD, MEM_WMMAST,
};

struct entry {
	ir_insn_info info;     /* first member: a pointer to it is a pointer to the entry */
	enum mem_kind mem;
	bool refine;           /* longer dotted entries start with this opcode */
};

static const struct entry table[] = {
	{{"abs", 0, 1}, MEM_NONE, 0},
	{{"activemask", IR_F_WARP, 1}, MEM_NONE, 0},
	{{"add", 0, 1}, MEM_NONE, 0},
	{{"addc", 0, 1}, MEM_NONE, 0},
	{{"alloca", 0, 1}, MEM_NONE, 0},
	{{"and", 0, 1}, MEM_NONE, 0},
	{{"applypriority", 0, 0}, MEM_NONE, 0},
	{{"atom", IR_F_ATOMIC, 1}, MEM_ATOM, 0},
	{{"bar", IR_F_BARRIER, 0}, MEM_NONE, 1},
	{{"bar.red", IR_F_BARRIER, 1}, MEM_NONE, 0},
	{{"bar.warp.sync", IR_F_BARRIER|IR_F_WARP, 0}, MEM_NONE, 0},
	{{"barrier", IR_F_BARRIER, 0}, MEM_NONE, 1},
	{{"barrier.cta.red", IR_F_BARRIER, 1}, MEM_NONE, 0},
	{{"barrier.red", IR_F_BARRIER, 1}, MEM_NONE, 0},
	{{"bfe", 0, 1}, MEM_NONE, 0},
	{{"bfi", 0, 1}, MEM_NONE, 0},
	{{"bfind", 0, 1}, MEM_NONE, 0},
	{{"bmsk", 0, 1}, MEM_NONE, 0},
	{{"bra", IR_F_BRANCH, 0}, MEM_NONE, 0},
	{{"brev", 0, 1}, MEM_NONE, 0},
	{{"brkpt", 0, 0}, MEM_NONE, 0},
	{{"brx", IR_F_BRANCH, 0}, MEM_NONE, 1},
	{{"brx.idx", IR_F_BRANCH, 0}, MEM_NONE, 0},
	{{"call", IR_F_CALL, 0}, MEM_NONE, 0},
	{{"clusterlaunchcontrol", IR_F_ASYNC, 0}, MEM_NONE, 1},
	{{"clusterlaunchcontrol.query_cancel", 0, 1}, MEM_NONE, 0},
	{{"clz", 0, 1}, MEM_NONE, 0},
	{{"cnot", 0, 1}, MEM_NONE, 0},
	{{"copysign", 0, 1}, MEM_NONE, 0},
	{{"cos", 0, 1}, MEM_NONE, 0},
	{{"cp", 0, 0}, MEM_NONE, 1},
	{{"cp.async", IR_F_ASYNC, 0}, MEM_CPASYNC, 1},
	{{"cp.async.bulk", IR_F_ASYNC, 0}, MEM_BULK, 1},
	{{"cp.async.bulk.commit_group", IR_F_ASYNC, 0}, MEM_NONE, 0},
	{{"cp.async.bulk.prefetch", IR_F_ASYNC, 0}, MEM_NONE, 0},
	{{"cp.async.bulk.tensor", IR_F_ASYNC, 0}, MEM_BULKTENSOR, 0},
	{{"cp.async.bulk.wait_group", IR_F_ASYNC, 0}, MEM_NONE, 0},
	{{"cp.async.commit_group", IR_F_ASYNC, 0}, MEM_NONE, 0},
	{{"cp.async.mbarrier.arrive", IR_F_ASYNC, 0}, MEM_NONE, 0},
	{{"cp.async.wait_all", IR_F_ASYNC, 0}, MEM_NONE, 0},
	{{"cp.async.wait_group", IR_F_ASYNC, 0}, MEM_NONE, 0},
	{{"cp.reduce.async.bulk", IR_F_ASYNC|IR_F_ATOMIC, 0}, MEM_BULKRED, 1},
	{{"cp.reduce.async.bulk.tensor", IR_F_ASYNC|IR_F_ATOMIC, 0}, MEM_BULKTENSOR, 0},
	{{"createpolicy", 0, 1}, MEM_NONE, 0},
	{{"cvt", 0, 1}, MEM_NONE, 0},
	{{"cvta", 0, 1}, MEM_NONE, 0},
	{{"discard", 0, 0}, MEM_NONE, 0},
	{{"div", 0, 1}, MEM_NONE, 0},
	{{"dp2a", 0, 1}, MEM_NONE, 0},
	{{"dp4a", 0, 1}, MEM_NONE, 0},
	{{"elect", IR_F_WARP, 1}, MEM_NONE, 0},
	{{"ex2", 0, 1}, MEM_NONE, 0},
	{{"exit", IR_F_EXIT, 0}, MEM_NONE, 0},
	{{"fence", IR_F_FENCE, 0}, MEM_NONE, 0},
	{{"fma", 0, 1}, MEM_NONE, 0},
	{{"fns", 0, 1}, MEM_NONE, 0},
	{{"getctarank", 0, 1}, MEM_NONE, 0},
	{{"griddepcontrol", 0, 0}, MEM_NONE, 0},
	{{"isspacep", 0, 1}, MEM_NONE, 0},
	{{"istypep", 0, 1}, MEM_NONE, 0},
	{{"ld", IR_F_LOAD, 1}, MEM_LD, 0},
	{{"ldmatrix", IR_F_LOAD|IR_F_TENSOR, 1}, MEM_LDMATRIX, 0},
	{{"ldu", IR_F_LOAD, 1}, MEM_LD, 0},
	{{"lg2", 0, 1}, MEM_NONE, 0},
	{{"lop3", 0, 1}, MEM_NONE, 0},
	{{"mad", 0, 1}, MEM_NONE, 0},
	{{"mad24", 0, 1}, MEM_NONE, 0},
	{{"madc", 0, 1}, MEM_NONE, 0},
	{{"mapa", 0, 1}, MEM_NONE, 0},
	{{"match", IR_F_WARP, 1}, MEM_NONE, 0},
	{{"max", 0, 1}, MEM_NONE, 0},
	{{"mbarrier", IR_F_BARRIER|IR_F_ASYNC, 0}, MEM_NONE, 1},
	{{"mbarrier.arrive", IR_F_BARRIER|IR_F_ASYNC, 1}, MEM_NONE, 0},
	{{"mbarrier.arrive_drop", IR_F_BARRIER|IR_F_ASYNC, 1}, MEM_NONE, 0},
	{{"mbarrier.pending_count", IR_F_BARRIER|IR_F_ASYNC, 1}, MEM_NONE, 0},
	{{"mbarrier.test_wait", IR_F_BARRIER|IR_F_ASYNC, 1}, MEM_NONE, 0},
	{{"mbarrier.try_wait", IR_F_BARRIER|IR_F_ASYNC, 1}, MEM_NONE, 0},
	{{"membar", IR_F_FENCE, 0}, MEM_NONE, 0},
	{{"min", 0, 1}, MEM_NONE, 0},
	{{"mma", IR_F_TENSOR, 1}, MEM_NONE, 0},
	{{"mov", 0, 1}, MEM_NONE, 0},
	{{"movmatrix", IR_F_TENSOR, 1}, MEM_NONE, 0},
	{{"mul", 0, 1}, MEM_NONE, 0},
	{{"mul24", 0, 1}, MEM_NONE, 0},
	{{"multimem", 0, 0}, MEM_NONE, 1},
	{{"multimem.ld_reduce", IR_F_LOAD, 1}, MEM_NONE, 0},
	{{"multimem.red", IR_F_ATOMIC, 0}, MEM_NONE, 0},
	{{"multimem.st", IR_F_STORE, 0}, MEM_NONE, 0},
	{{"nanosleep", 0, 0}, MEM_NONE, 0},
	{{"neg", 0, 1}, MEM_NONE, 0},
	{{"not", 0, 1}, MEM_NONE, 0},
	{{"or", 0, 1}, MEM_NONE, 0},
	{{"pmevent", 0, 0}, MEM_NONE, 0},
	{{"popc", 0, 1}, MEM_NONE, 0},
	{{"prefetch", 0, 0}, MEM_NONE, 0},
	{{"prefetchu", 0, 0}, MEM_NONE, 0},
	{{"prmt", 0, 1}, MEM_NONE, 0},
	{{"rcp", 0, 1}, MEM_NONE, 0},
	{{"red", IR_F_ATOMIC, 0}, MEM_RED, 1},
	{{"red.async", IR_F_ATOMIC|IR_F_ASYNC, 0}, MEM_REDASYNC, 0},
	{{"redux", IR_F_WARP, 1}, MEM_NONE, 0},
	{{"rem", 0, 1}, MEM_NONE, 0},
	{{"ret", IR_F_RET, 0}, MEM_NONE, 0},
	{{"rsqrt", 0, 1}, MEM_NONE, 0},
	{{"sad", 0, 1}, MEM_NONE, 0},
	{{"selp", 0, 1}, MEM_NONE, 0},
	{{"set", 0, 1}, MEM_NONE, 0},
	{{"setmaxnreg", 0, 0}, MEM_NONE, 0},
	{{"setp", 0, 1}, MEM_NONE, 0},
	{{"shf", 0, 1}, MEM_NONE, 0},
	{{"shfl", IR_F_WARP, 1}, MEM_NONE, 0},
	{{"shl", 0, 1}, MEM_NONE, 0},
	{{"shr", 0, 1}, MEM_NONE, 0},
	{{"sin", 0, 1}, MEM_NONE, 0},
	{{"slct", 0, 1}, MEM_NONE, 0},
	{{"sqrt", 0, 1}, MEM_NONE, 0},
	{{"st", IR_F_STORE, 0}, MEM_ST, 1},
	{{"st.async", IR_F_STORE|IR_F_ASYNC, 0}, MEM_STASYNC, 0},
	{{"stackrestore", 0, 0}, MEM_NONE, 0},
	{{"stacksave", 0, 1}, MEM_NONE, 0},
	{{"stmatrix", IR_F_STORE|IR_F_TENSOR, 0}, MEM_STMATRIX, 0},
	{{"sub", 0, 1}, MEM_NONE, 0},
	{{"subc", 0, 1}, MEM_NONE, 0},
	{{"suld", IR_F_TEX, 1}, MEM_NONE, 0},
	{{"suq", IR_F_TEX, 1}, MEM_NONE, 0},
	{{"sured", IR_F_TEX, 0}, MEM_NONE, 0},
	{{"sust", IR_F_TEX, 0}, MEM_NONE, 0},
	{{"szext", 0, 1}, MEM_NONE, 0},
	{{"tanh", 0, 1}, MEM_NONE, 0},
	{{"tcgen05", IR_F_TENSOR|IR_F_ASYNC, 0}, MEM_NONE, 1},
	{{"tcgen05.ld", IR_F_TENSOR|IR_F_ASYNC, 1}, MEM_NONE, 0},
	{{"tcgen05.wait", IR_F_TENSOR|IR_F_ASYNC, 0}, MEM_NONE, 0},
	{{"tensormap", 0, 0}, MEM_NONE, 0},
	{{"testp", 0, 1}, MEM_NONE, 0},
	{{"tex", IR_F_TEX, 1}, MEM_NONE, 0},
	{{"tld4", IR_F_TEX, 1}, MEM_NONE, 0},
	{{"trap", IR_F_EXIT, 0}, MEM_NONE, 0},
	{{"txq", IR_F_TEX, 1}, MEM_NONE, 0},
	{{"vabsdiff", 0, 1}, MEM_NONE, 0},
	{{"vabsdiff2", 0, 1}, MEM_NONE, 0},
	{{"vabsdiff4", 0, 1}, MEM_NONE, 0},
	{{"vadd", 0, 1}, MEM_NONE, 0},
	{{"vadd2", 0, 1}, MEM_NONE, 0},
	{{"vadd4", 0, 1}, MEM_NONE, 0},
	{{"vavrg2", 0, 1}, MEM_NONE, 0},
	{{"vavrg4", 0, 1}, MEM_NONE, 0},
	{{"vmad", 0, 1}, MEM_NONE, 0},
	{{"vmax", 0, 1}, MEM_NONE, 0},
	{{"vmax2", 0, 1}, MEM_NONE, 0},
	{{"vmax4", 0, 1}, MEM_NONE, 0},
	{{"vmin", 0, 1}, MEM_NONE, 0},
	{{"vmin2", 0, 1}, MEM_NONE, 0},
	{{"vmin4", 0, 1}, MEM_NONE, 0},
	{{"vote", IR_F_WARP, 1}, MEM_NONE, 0},
	{{"vset", 0, 1}, MEM_NONE, 0},
	{{"vset2", 0, 1}, MEM_NONE, 0},
	{{"vset4", 0, 1}, MEM_NONE, 0},
	{{"vshl", 0, 1}, MEM_NONE, 0},
	{{"vshr", 0, 1}, MEM_NONE, 0},
	{{"vsub", 0, 1}, MEM_NONE, 0},
	{{"vsub2", 0, 1}, MEM_NONE, 0},
	{{"vsub4", 0, 1}, MEM_NONE, 0},
	{{"wgmma", IR_F_TENSOR|IR_F_ASYNC, 0}, MEM_NONE, 1},
	{{"wgmma.mma_async", IR_F_TENSOR|IR_F_ASYNC, 1}, MEM_NONE, 0},
	{{"wmma", IR_F_TENSOR, 1}, MEM_NONE, 1},
	{{"wmma.load", IR_F_LOAD|IR_F_TENSOR, 1}, MEM_WMMALD, 0},
	{{"wmma.mma", IR_F_TENSOR, 1}, MEM_NONE, 0},
	{{"wmma.store", IR_F_STORE|IR_F_TENSOR, 0}, MEM_WMMAST, 0},
	{{"xor", 0, 1}, MEM_NONE, 0},
};

#define NTABLE (sizeof(table) / sizeof(table[0]))

static const struct entry *find(const char *key)
{
	size_t lo = 0, hi = NTABLE;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(key, table[mid].info.opcode);
		if (!c)
			return &table[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

bool ir_insn_operands_ok(const ir_insn *in)
{
	/* the fewest operands of the common instructions, as the PTX ISA writes them */
	static const struct { const char *op; unsigned n; } least[] = {
		{"abs", 2}, {"add", 3}, {"addc", 3}, {"and", 3}, {"atom", 3}, {"bfe", 4}, {"bfi", 5},
		{"bfind", 2}, {"bra", 1}, {"brev", 2}, {"clz", 2}, {"cnot", 2}, {"copysign", 3}, {"cos", 2},
		{"cvt", 2}, {"cvta", 2}, {"div", 3}, {"ex2", 2}, {"fma", 4}, {"ld", 2}, {"ldu", 2}, {"lg2", 2},
		{"lop3", 5}, {"mad", 4}, {"mad24", 4}, {"madc", 4}, {"match", 3}, {"max", 3}, {"min", 3},
		{"mov", 2}, {"mul", 3}, {"mul24", 3}, {"neg", 2}, {"not", 2}, {"or", 3}, {"popc", 2},
		{"prmt", 4}, {"rcp", 2}, {"red", 2}, {"redux", 3}, {"rem", 3}, {"rsqrt", 2}, {"sad", 4},
		{"selp", 4}, {"set", 3}, {"setp", 3}, {"shf", 4}, {"shfl", 4}, {"shl", 3}, {"shr", 3},
		{"sin", 2}, {"slct", 4}, {"sqrt", 2}, {"st", 2}, {"sub", 3}, {"subc", 3}, {"tanh", 2},
		{"testp", 2}, {"vote", 2}, {"xor", 3},
		{"alloca", 2}, {"bmsk", 3}, {"brx", 2}, {"dp2a", 4}, {"dp4a", 4}, {"fns", 4}, {"getctarank", 2},
		{"isspacep", 2}, {"istypep", 2}, {"ldmatrix", 2}, {"mapa", 3}, {"mma", 4}, {"movmatrix", 2},
		{"stmatrix", 2}, {"suld", 2}, {"suq", 2}, {"sured", 2}, {"sust", 2}, {"szext", 3}, {"tex", 2},
		{"tld4", 2}, {"txq", 2}, {"vabsdiff", 3}, {"vadd", 3}, {"vmad", 4}, {"vmax", 3}, {"vmin", 3},
		{"vset", 3}, {"vshl", 3}, {"vshr", 3}, {"vsub", 3}, {"vabsdiff2", 4}, {"vabsdiff4", 4},
		{"vadd2", 4}, {"vadd4", 4}, {"vavrg2", 4}, {"vavrg4", 4}, {"vmax2", 4}, {"vmax4", 4},
		{"vmin2", 4}, {"vmin4", 4}, {"vset2", 4}, {"vset4", 4}, {"vsub2", 4}, {"vsub4", 4},
	};
	for (size_t i = 0; i < sizeof(least) / sizeof(least[0]); i++)
		if (!strcmp(least[i].op, in->opcode))   /* atom.cas: d, [a], compare, new */
			return in->nops >= least[i].n + (!strcmp(in->opcode, "atom") && ir_insn_has_mod(in, ".cas"));
	const ir_insn_info *info = in->info ? in->info : ir_insn_info_lookup(in->opcode);
	if (!info || info->ndst <= 0)
		return true;
	bool dst_only = !strcmp(in->opcode, "activemask") || !strcmp(in->opcode, "stacksave");
	return in->nops >= (unsigned)info->ndst + (dst_only ? 0 : 1);
}

const ir_insn_info *ir_insn_info_lookup(const char *opcode)
{
	const struct entry *e = opcode ? find(opcode) : NULL;
	return e ? &e->info : NULL;
}

static const struct entry *entry_for(const ir_insn *insn)
{
	const struct entry *best = find(insn->opcode);
	if (!best || !best->refine)
		return best;
	char key[128];
	size_t n = strlen(insn->opcode);
	if (n >= sizeof(key))
		return best;
	memcpy(key, insn->opcode, n + 1);
	for (unsigned i = 0; i < insn->nmods && i < 4; i++) {
		size_t l = strlen(insn->mods[i]);
		if (n + l >= sizeof(key))
			break;
		memcpy(key + n, insn->mods[i], l + 1);
		n += l;
		const struct entry *e = find(key);
		if (e)
			best = e;
	}
	return best;
}

const ir_insn_info *ir_insn_info_for(const ir_insn *insn)
{
	const struct entry *e = entry_for(insn);
	return e ? &e->info : NULL;
}

/* ---- memory accesses ---------------------------------------------------------------------- */

/* State space named by one modifier, or -1 when it names none. */
static int space_of(const char *mod)
{
	switch (mod[1]) {
	case 'g':
		return !strcmp(mod, ".global") ? IR_SPACE_GLOBAL : -1;
	case 's':
		if (!strncmp(mod, ".shared", 7) && (mod[7] == 0 || mod[7] == ':'))
			return IR_SPACE_SHARED;
		return -1;
	case 'l':
		return !strcmp(mod, ".local") ? IR_SPACE_LOCAL : -1;
	case 'c':
		return !strcmp(mod, ".const") ? IR_SPACE_CONST : -1;
	case 'p':
		if (!strncmp(mod, ".param", 6) && (mod[6] == 0 || mod[6] == ':'))
			return IR_SPACE_PARAM;
		return -1;
	}
	return -1;
}

/* Bytes of one element of a type modifier (.u32, .b128, .f16x2, .e4m3x2), 0 for a non-type. */
static unsigned type_size(const char *mod)
{
	const char *p = mod + 1;
	switch (*p) {
	case 'b': case 'u': case 's': case 'f':
		break;
	case 'e': /* .e4m3, .e5m2, .e4m3x2 ... */
		if (!strcmp(p, "e4m3") || !strcmp(p, "e5m2"))
			return 1;
		if (!strcmp(p, "e4m3x2") || !strcmp(p, "e5m2x2"))
			return 2;
		return 0;
	case 'p':
		return !strcmp(p, "pred") ? 1 : 0;
	default:
		return 0;
	}
	if (p[0] == 'b' && p[1] == 'f' && p[2] == '1' && p[3] == '6')
		return p[4] == 0 ? 2 : !strcmp(p + 4, "x2") ? 4 : 0;
	const char *d = p + 1;
	unsigned bits = 0;
	if (*d < '0' || *d > '9')
		return 0;
	while (*d >= '0' && *d <= '9')
		bits = bits * 10 + (unsigned)(*d++ - '0');
	unsigned mult = 1;
	if (*d == 'x') {
		d++;
		mult = 0;
		while (*d >= '0' && *d <= '9')
			mult = mult * 10 + (unsigned)(*d++ - '0');
	}
	if (*d || bits % 8 || bits == 0 || bits > 128)
		return 0;
	return bits / 8 * mult;
}

static unsigned vec_width(const char *mod)
{
	if (mod[1] != 'v')
		return 0;
	if (!strcmp(mod, ".v2"))
		return 2;
	if (!strcmp(mod, ".v4"))
		return 4;
	if (!strcmp(mod, ".v8"))
		return 8;
	return 0;
}

struct mods_summary {
	int space[2];        /* first and second state spaces named, -1 when absent */
	unsigned elem;       /* size of the last type modifier */
	unsigned vec;        /* vector width, 1 when none */
	unsigned x;          /* ldmatrix .x1/.x2/.x4 */
};

static void summarize(const ir_insn *insn, struct mods_summary *s)
{
	s->space[0] = s->space[1] = -1;
	s->elem = 0;
	s->vec = 1;
	s->x = 1;
	for (unsigned i = 0; i < insn->nmods; i++) {
		const char *m = insn->mods[i];
		int sp = space_of(m);
		if (sp >= 0) {
			if (s->space[0] < 0)
				s->space[0] = sp;
			else if (s->space[1] < 0)
				s->space[1] = sp;
			continue;
		}
		unsigned v = vec_width(m);
		if (v) {
			s->vec = v;
			continue;
		}
		if (m[1] == 'x' && m[2] >= '1' && m[2] <= '9' && !m[3]) {
			s->x = (unsigned)(m[2] - '0');
			continue;
		}
		unsigned t = type_size(m);
		if (t)
			s->elem = t;
	}
}

static unsigned const_operand(const ir_insn *insn, unsigned i)
{
	if (i < insn->nops && insn->ops[i].kind == IR_OPND_INT && insn->ops[i].ival > 0)
		return (unsigned)insn->ops[i].ival;
	return 0;
}

int ir_insn_mem_access(const ir_insn *insn, struct ir_mem_access *out)
{
	const struct entry *e = entry_for(insn);
	if (!e || e->mem == MEM_NONE)
		return 0;
	struct mods_summary s;
	summarize(insn, &s);
	struct ir_mem_access a = {
		.space = s.space[0] >= 0 ? (enum ir_space)s.space[0] : IR_SPACE_GENERIC,
		.size = s.elem * s.vec,
		.addr_op = 0,
		.dst_space = IR_SPACE_GENERIC,
		.dst_addr_op = -1,
	};
	switch (e->mem) {
	case MEM_NONE:
		return 0;
	case MEM_LD:
		a.dir = IR_ACCESS_READ;
		a.addr_op = 1;
		break;
	case MEM_ST:
	case MEM_STASYNC:
		a.dir = IR_ACCESS_WRITE;
		break;
	case MEM_ATOM:
		a.dir = IR_ACCESS_RMW;
		a.addr_op = 1;
		break;
	case MEM_RED:
	case MEM_REDASYNC:
		a.dir = IR_ACCESS_RMW;
		break;
	case MEM_LDMATRIX:
	case MEM_STMATRIX:
		/* Only shared memory; each thread gets (or gives) x 32-bit registers. */
		if (s.space[0] < 0)
			a.space = IR_SPACE_SHARED;
		a.size = 4 * s.x;
		a.dir = e->mem == MEM_LDMATRIX ? IR_ACCESS_READ : IR_ACCESS_WRITE;
		a.addr_op = e->mem == MEM_LDMATRIX ? 1 : 0;
		break;
	case MEM_WMMALD:
	case MEM_WMMAST: {
		unsigned fop = e->mem == MEM_WMMALD ? 0 : 1;
		unsigned regs = fop < insn->nops && insn->ops[fop].kind == IR_OPND_VEC
					? insn->ops[fop].nelems : 0;
		a.size = regs * (s.elem == 8 ? 8 : 4);
		a.dir = e->mem == MEM_WMMALD ? IR_ACCESS_READ : IR_ACCESS_WRITE;
		a.addr_op = e->mem == MEM_WMMALD ? 1 : 0;
		break;
	}
	case MEM_CPASYNC:
		/* cp.async.ca.shared.global [dst], [src], cp-size: the global read is the access;
		 * the shared write is reported as the destination. */
		a.space = s.space[1] >= 0 ? (enum ir_space)s.space[1] : IR_SPACE_GLOBAL;
		a.dir = IR_ACCESS_READ;
		a.addr_op = 1;
		a.size = const_operand(insn, 2);
		a.dst_space = s.space[0] >= 0 ? (enum ir_space)s.space[0] : IR_SPACE_SHARED;
		a.dst_addr_op = 0;
		break;
	case MEM_BULK:
	case MEM_BULKRED:
	case MEM_BULKTENSOR: {
		/* cp{.reduce}.async.bulk{.tensor}.dst.src [dst], [src], size: the access is the side
		 * in global memory (the read of a load, the write of a store). */
		int dst = s.space[0] >= 0 ? s.space[0] : IR_SPACE_SHARED;
		int src = s.space[1] >= 0 ? s.space[1] : IR_SPACE_GLOBAL;
		a.size = e->mem == MEM_BULKTENSOR ? 0 : const_operand(insn, 2);
		if (dst == IR_SPACE_GLOBAL) {
			a.space = IR_SPACE_GLOBAL;
			a.dir = e->mem == MEM_BULK ? IR_ACCESS_WRITE : IR_ACCESS_RMW;
			a.addr_op = 0;
		} else {
			a.space = (enum ir_space)src;
			a.dir = IR_ACCESS_READ;
			a.addr_op = 1;
			a.dst_space = (enum ir_space)dst;
			a.dst_addr_op = 0;
		}
		if (e->mem == MEM_BULKRED)
			a.dir = IR_ACCESS_RMW;
		break;
	}
	}
	if (a.addr_op >= (int)insn->nops)
		return 0;
	*out = a;
	return 1;
}
