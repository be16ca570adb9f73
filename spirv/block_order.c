/* SPIR-V wants every block after the blocks that dominate it. PTX text has no such rule (a
 * loop's body may be written before the code that enters it), so a function's blocks are put in
 * reverse postorder from the entry, which has that property; blocks nothing reaches go last. */
#include "spirv/block_order.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct blk {
	size_t start, end;      /* word range, OpLabel included */
	uint32_t label;
	uint32_t succ[2];
	unsigned nsucc;
	bool seen;
};

static int find(const struct blk *b, size_t n, uint32_t label)
{
	for (size_t i = 0; i < n; i++)
		if (b[i].label == label)
			return (int)i;
	return -1;
}

int spirv_order_blocks(spv_buf *body)
{
	size_t n = 0;
	for (size_t i = 0; i < body->n; i += body->w[i] >> 16) {
		if ((body->w[i] >> 16) == 0)
			return -1;
		n += (body->w[i] & 0xffff) == SpvOpLabel;
	}
	if (n < 2)
		return 0;
	struct blk *b = calloc(n, sizeof(*b));
	size_t k = 0;
	for (size_t i = 0; i < body->n; i += body->w[i] >> 16) {
		uint32_t op = body->w[i] & 0xffff;
		if (op == SpvOpLabel) {
			if (k)
				b[k - 1].end = i;
			b[k].start = i;
			b[k++].label = body->w[i + 1];
		} else if (op == SpvOpBranch) {
			b[k - 1].succ[b[k - 1].nsucc++] = body->w[i + 1];
		} else if (op == SpvOpBranchConditional) {
			b[k - 1].succ[b[k - 1].nsucc++] = body->w[i + 2];
			b[k - 1].succ[b[k - 1].nsucc++] = body->w[i + 3];
		}
	}
	b[k - 1].end = body->n;
	/* iterative DFS computing postorder */
	size_t *post = malloc(n * sizeof(*post)), npost = 0;
	size_t *stack = malloc(n * sizeof(*stack));
	unsigned *next = calloc(n, sizeof(*next));
	size_t sp = 0;
	stack[sp++] = 0;
	b[0].seen = true;
	while (sp) {
		size_t cur = stack[sp - 1];
		if (next[cur] < b[cur].nsucc) {
			int s = find(b, n, b[cur].succ[next[cur]++]);
			if (s >= 0 && !b[s].seen) {
				b[s].seen = true;
				stack[sp++] = (size_t)s;
			}
		} else {
			post[npost++] = cur;
			sp--;
		}
	}
	spv_buf out = {0};
	out.w = malloc(body->n * sizeof(uint32_t));
	out.cap = body->n;
	for (size_t i = npost; i-- > 0;) {
		memcpy(out.w + out.n, body->w + b[post[i]].start, (b[post[i]].end - b[post[i]].start) * 4);
		out.n += b[post[i]].end - b[post[i]].start;
	}
	for (size_t i = 0; i < n; i++)
		if (!b[i].seen) {
			memcpy(out.w + out.n, body->w + b[i].start, (b[i].end - b[i].start) * 4);
			out.n += b[i].end - b[i].start;
		}
	free(body->w);
	*body = out;
	free(b);
	free(post);
	free(stack);
	free(next);
	return 0;
}
