/* Rings: the host-side producer (host probes write records the way the device does), the
 * consumer that drains committed records in order, exact drop counts, and printk formatting. */
#include "maps/map_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static uint64_t *cons_pos(struct gp_map_inst *m, unsigned r)
{
	return (uint64_t *)(m->cons.hptr + (size_t)r * GP_RING_STATE_STRIDE + GP_RC_POS);
}

static uint64_t *rec_hdr(struct gp_map_inst *m, unsigned r, uint64_t off)
{
	return (uint64_t *)(m->rdata.hptr + (size_t)r * m->d.capacity + off);
}

static uint64_t hdr_make(uint32_t len, uint32_t state) { return (uint64_t)state << 32 | len; }

int gp_map_inst__ring_output(struct gp_map_inst *m, unsigned shard, const void *data, size_t size)
{
	if (!m || m->d.kind != GP_MAP_KIND_RING || (!data && size))
		return -EINVAL;
	const struct gp_map_desc *d = &m->d;
	unsigned r = shard % d->nshards;
	uint64_t cap = d->capacity, total = GP_RING_HDR + gp_round_up(size, 8);
	uint64_t head_off = (uint64_t)r * GP_RING_STATE_STRIDE + GP_RP_HEAD;
	if (total > cap) {
		gp_region_add64(m, &m->data, (uint64_t)r * GP_RING_STATE_STRIDE + GP_RP_DROPS, 1);
		return -ENOSPC;
	}
	for (unsigned tries = 0; tries < GP_RING_CAS_LIMIT; tries++) {
		uint64_t head;
		if (m->data.hptr)
			head = __atomic_load_n((uint64_t *)(m->data.hptr + head_off), __ATOMIC_ACQUIRE);
		else
			gp_region_read(m, &m->data, head_off, &head, 8);
		uint64_t cons = __atomic_load_n(cons_pos(m, r), __ATOMIC_ACQUIRE);
		uint64_t off = head & (cap - 1), need = total;
		if (off + total > cap)
			need += cap - off;   /* a PAD record fills the tail, the record starts at 0 */
		if (head + need - cons > cap)
			break;
		bool won;
		if (m->data.hptr) {
			won = __atomic_compare_exchange_n((uint64_t *)(m->data.hptr + head_off), &head,
							  head + need, false, __ATOMIC_ACQ_REL,
							  __ATOMIC_ACQUIRE);
		} else {
			uint64_t nh = head + need;
			won = gp_region_write(m, &m->data, head_off, &nh, 8) == 0;
		}
		if (!won)
			continue;
		if (need != total) {
			__atomic_store_n(rec_hdr(m, r, off), hdr_make((uint32_t)(cap - off - GP_RING_HDR), GP_REC_PAD),
					 __ATOMIC_RELEASE);
			off = 0;
		}
		memcpy((uint8_t *)rec_hdr(m, r, off) + GP_RING_HDR, data, size);
		__atomic_store_n(rec_hdr(m, r, off), hdr_make((uint32_t)size, GP_REC_COMMITTED),
				 __ATOMIC_RELEASE);
		return 0;
	}
	gp_region_add64(m, &m->data, (uint64_t)r * GP_RING_STATE_STRIDE + GP_RP_DROPS, 1);
	return -ENOSPC;
}

int gp_map_inst__ring_drain(struct gp_map_inst *m, gp_ring_cb cb, void *user)
{
	if (!m || m->d.kind != GP_MAP_KIND_RING)
		return -EINVAL;
	const uint64_t cap = m->d.capacity;
	int consumed = 0, stop = 0;
	pthread_mutex_lock(&m->lock);
	/* A callback that stops the drain (its sink is full) must not starve the last rings: each
	 * drain starts one shard further on, so every ring's consumer moves within nshards drains
	 * and no lossless producer waits out its give-up clock behind its neighbours. */
	unsigned first = m->d.nshards ? m->drain_first++ % m->d.nshards : 0;
	for (unsigned i = 0; i < m->d.nshards && !stop; i++) {
		unsigned r = (first + i) % m->d.nshards;
		uint64_t cons = __atomic_load_n(cons_pos(m, r), __ATOMIC_ACQUIRE);
		for (;;) {
			uint64_t off = cons & (cap - 1);
			uint64_t hdr = __atomic_load_n(rec_hdr(m, r, off), __ATOMIC_ACQUIRE);
			uint32_t state = (uint32_t)(hdr >> 32), len = (uint32_t)hdr;
			if (!state)
				break;   /* not committed yet: later records wait behind it */
			uint64_t adv = state == GP_REC_PAD ? cap - off : GP_RING_HDR + gp_round_up(len, 8);
			if (adv > cap - off || state > GP_REC_PAD)
				break;   /* corrupt header: stop rather than read out of the ring */
			if (state == GP_REC_COMMITTED && cb) {
				stop = cb(user, r, (uint8_t *)rec_hdr(m, r, off) + GP_RING_HDR, len);
				if (stop < 0)
					break;   /* not taken: it stays, and what follows it, for later */
			}
			/* Zero what was read so a future lap sees 0 until its own commit. */
			memset(rec_hdr(m, r, off), 0, adv);
			cons += adv;
			__atomic_store_n(cons_pos(m, r), cons, __ATOMIC_RELEASE);
			consumed += state == GP_REC_COMMITTED;
			if (stop)
				break;
		}
	}
	pthread_mutex_unlock(&m->lock);
	return consumed;
}

int64_t gp_map_inst__ring_peek_span(struct gp_map_inst *m, unsigned r, size_t max_bytes,
				    struct gp_ring_span *out)
{
	if (!m || m->d.kind != GP_MAP_KIND_RING || r >= m->d.nshards || !out)
		return -EINVAL;
	const uint64_t cap = m->d.capacity;
	uint64_t cons = __atomic_load_n(cons_pos(m, r), __ATOMIC_ACQUIRE);
	uint64_t start = cons & (cap - 1), off = start;
	uint64_t limit = max_bytes && max_bytes < cap - start ? start + max_bytes : cap;
	uint8_t *base = (uint8_t *)rec_hdr(m, r, 0);
	unsigned committed = 0;
	int pad = 0;
	/* Walk the headers only (8 bytes a record): the payloads move in one copy by the caller. */
	while (off < limit) {
		uint64_t hdr = __atomic_load_n((uint64_t *)(base + off), __ATOMIC_ACQUIRE);
		uint32_t state = (uint32_t)(hdr >> 32), len = (uint32_t)hdr;
		if (!state || state > GP_REC_PAD)
			break;   /* not committed yet (or corrupt): later records wait behind it */
		if (state == GP_REC_PAD) {
			pad = off + GP_RING_HDR + len == cap;
			break;
		}
		uint64_t adv = GP_RING_HDR + gp_round_up(len, 8);
		if (adv > limit - off)
			break;   /* past the limit (or a corrupt length): the next call takes it */
		committed += state == GP_REC_COMMITTED;
		off += adv;
	}
	*out = (struct gp_ring_span){.pos = cons, .bytes = base + start, .len = off - start,
				     .committed = committed};
	return (int64_t)((pad ? cap : off) - start);
}

int gp_map_inst__ring_release(struct gp_map_inst *m, unsigned r, uint64_t pos, uint64_t adv)
{
	if (!m || m->d.kind != GP_MAP_KIND_RING || r >= m->d.nshards)
		return -EINVAL;
	const uint64_t cap = m->d.capacity;
	uint64_t cons = __atomic_load_n(cons_pos(m, r), __ATOMIC_ACQUIRE), start = cons & (cap - 1);
	if (pos != cons || adv > cap - start)
		return -EINVAL;   /* not the span peek gave: releasing it would free unread records */
	/* Zero what was read so a future lap sees 0 until its own commit, then free it. */
	memset((uint8_t *)rec_hdr(m, r, start), 0, adv);
	__atomic_store_n(cons_pos(m, r), cons + adv, __ATOMIC_RELEASE);
	return 0;
}

int64_t gp_map_inst__ring_drain_span(struct gp_map_inst *m, unsigned r, size_t max_bytes,
				     gp_ring_span_cb cb, void *user)
{
	if (!cb)
		return -EINVAL;
	struct gp_ring_span sp;
	int64_t adv = gp_map_inst__ring_peek_span(m, r, max_bytes, &sp);
	if (adv <= 0)
		return adv;
	if (sp.len) {
		int rc = cb(user, r, sp.pos, sp.bytes, sp.len, sp.committed);
		if (rc < 0)
			return rc;
	}
	gp_map_inst__ring_release(m, r, sp.pos, (uint64_t)adv);
	return adv;
}

int gp_map_inst__ring_drops_each(struct gp_map_inst *m, uint64_t *drops)
{
	if (!m || m->d.kind != GP_MAP_KIND_RING || !drops)
		return -EINVAL;
	for (unsigned r = 0; r < m->d.nshards; r++) {
		drops[r] = 0;
		gp_region_read(m, &m->data, (uint64_t)r * GP_RING_STATE_STRIDE + GP_RP_DROPS, &drops[r], 8);
	}
	return 0;
}

uint64_t gp_map_inst__ring_drops(struct gp_map_inst *m)
{
	if (!m || m->d.kind != GP_MAP_KIND_RING)
		return 0;
	uint64_t sum = 0;
	for (unsigned r = 0; r < m->d.nshards; r++) {
		uint64_t v = 0;
		gp_region_read(m, &m->data, (uint64_t)r * GP_RING_STATE_STRIDE + GP_RP_DROPS, &v, 8);
		sum += v;
	}
	return sum;
}

/* ---- printk ---------------------------------------------------------------------------- */

struct sbuf {
	char *p;
	size_t cap, len;
};

static void sb_put(struct sbuf *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++, b->len++)
		if (b->len + 1 < b->cap)
			b->p[b->len] = s[i];
}

int gp_printk_format(const void *rec, size_t size, char *out, size_t outlen)
{
	if (size < GP_PRINTK_FMT)
		return -EINVAL;
	const uint8_t *r = rec;
	uint32_t fmt_len, nargs;
	uint64_t args[3];
	memcpy(&fmt_len, r, 4);
	memcpy(&nargs, r + 4, 4);
	memcpy(args, r + GP_PRINTK_ARGS, sizeof(args));
	if (fmt_len > size - GP_PRINTK_FMT || (nargs > 3 && nargs != GP_PRINTK_LITERAL))
		return -EINVAL;
	const char *fmt = (const char *)r + GP_PRINTK_FMT;
	size_t n = strnlen(fmt, fmt_len);
	struct sbuf b = {out, outlen, 0};
	if (nargs == GP_PRINTK_LITERAL) {   /* puts: the text as it is */
		sb_put(&b, fmt, n);
		n = 0;
	}
	unsigned argi = 0;
	for (size_t i = 0; i < n;) {
		if (fmt[i] != '%') {
			size_t j = i;
			while (j < n && fmt[j] != '%')
				j++;
			sb_put(&b, fmt + i, j - i);
			i = j;
			continue;
		}
		/* %[-0][width][l|ll|h|hh]conv */
		size_t start = i++;
		char spec[32];
		size_t sl = 0;
		spec[sl++] = '%';
		while (i < n && (fmt[i] == '-' || fmt[i] == '0' || fmt[i] == '+' || fmt[i] == ' ') && sl < 8)
			spec[sl++] = fmt[i++];
		while (i < n && fmt[i] >= '0' && fmt[i] <= '9' && sl < 12)
			spec[sl++] = fmt[i++];
		int lng = 0;
		while (i < n && fmt[i] == 'l' && lng < 2) {
			lng++;
			i++;
		}
		while (i < n && fmt[i] == 'h')
			i++;
		if (i >= n) {
			sb_put(&b, fmt + start, n - start);
			break;
		}
		char conv = fmt[i++];
		char tmp[64];
		int tl;
		uint64_t a = argi < 3 ? args[argi] : 0;
		switch (conv) {
		case '%':
			sb_put(&b, "%", 1);
			continue;
		case 'd': case 'i':
			spec[sl++] = 'l'; spec[sl++] = 'l'; spec[sl++] = 'd'; spec[sl] = 0;
			tl = snprintf(tmp, sizeof(tmp), spec, lng ? (long long)a : (long long)(int32_t)a);
			break;
		case 'u': case 'x': case 'X':
			spec[sl++] = 'l'; spec[sl++] = 'l'; spec[sl++] = conv; spec[sl] = 0;
			tl = snprintf(tmp, sizeof(tmp), spec,
				      lng ? (unsigned long long)a : (unsigned long long)(uint32_t)a);
			break;
		case 'p':
			tl = snprintf(tmp, sizeof(tmp), "0x%llx", (unsigned long long)a);
			while (i < n && ((fmt[i] >= 'a' && fmt[i] <= 'z') || (fmt[i] >= 'A' && fmt[i] <= 'Z')))
				i++;   /* %pK, %px: the address either way */
			break;
		case 'c':
			spec[sl++] = 'c'; spec[sl] = 0;
			tl = snprintf(tmp, sizeof(tmp), spec, (int)(uint8_t)a);
			break;
		case 's':
			tl = snprintf(tmp, sizeof(tmp), "(%%s unsupported)");
			break;
		default:
			sb_put(&b, fmt + start, i - start);
			continue;
		}
		argi++;
		if (tl > 0)
			sb_put(&b, tmp, (size_t)tl < sizeof(tmp) ? (size_t)tl : sizeof(tmp) - 1);
	}
	if (b.cap)
		b.p[b.len < b.cap ? b.len : b.cap - 1] = 0;
	return (int)b.len;
}
