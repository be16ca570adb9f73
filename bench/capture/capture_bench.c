/* Capture files on the CPU (maps/gpt.h): how fast one core writes, checks and decodes them.
 * A memory trace's records (bench/overhead/probes/memtrace.bpf.c: u64 addr, u32 size, u32 dir;
 * 24 bytes in a ring with the header) laid out as a GPU's rings hold them, written through the
 * writer in ring-sized spans, then on one thread:
 *   check   gp_gpt__open_mem: every chunk and every record's header checked
 *   decode  gp_gpt__for_each + gp_gpt_field__get of every typed field of every record
 *   rows    gp_gpt__decode_rows: the same values in batches of rows (the bulk path)
 *   text    gp_gpt_format of every record as a line of text (into memory, not written)
 * prints events per second for each, and the best of -r runs.
 * usage: capture_bench [-n RECORDS] [-r RUNS] [-o FILE]   (FILE default: /dev/shm or /tmp) */
#include "maps/gpt.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NRINGS 132          /* an H100's SMs */
#define SPAN 65536          /* bytes a consumer takes from a ring at once */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

struct acc {
	const struct gp_gpt *g;
	const struct gp_gpt_field *f;
	unsigned nf;
	uint64_t sum, n;
	char *line;
};

static int decode_one(void *user, uint32_t map, uint32_t ring, const void *data, uint32_t size)
{
	struct acc *a = user;
	(void)map;
	uint64_t s = ring;
	for (unsigned i = 0; i < a->nf; i++)
		s += gp_gpt_field__get(&a->f[i], data, size);
	a->sum += s;
	a->n++;
	return 0;
}

static int rows_one(void *user, uint32_t map, uint32_t ring, const uint64_t *rows, size_t n,
		    unsigned nf)
{
	struct acc *a = user;
	(void)map;
	uint64_t s = (uint64_t)ring * n;   /* as decode_one adds each record's ring */
	for (size_t i = 0; i < n * nf; i++)
		s += rows[i];
	a->sum += s;
	a->n += n;
	return 0;
}

static int text_one(void *user, uint32_t map, uint32_t ring, const void *data, uint32_t size)
{
	struct acc *a = user;
	size_t k = gp_gpt_format(gp_gpt__map(a->g, map), ring, data, size, 0, a->line);
	a->sum += (uint8_t)a->line[k / 2] + k;
	a->n++;
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t nrec = 20000000;
	int runs = 3, c;
	const char *path = NULL;
	while ((c = getopt(argc, argv, "n:r:o:")) != -1) {
		if (c == 'n')
			nrec = strtoull(optarg, NULL, 10);
		else if (c == 'r')
			runs = atoi(optarg);
		else if (c == 'o')
			path = optarg;
		else {
			fprintf(stderr, "usage: capture_bench [-n RECORDS] [-r RUNS] [-o FILE]\n");
			return 2;
		}
	}
	char def[256];
	if (!path) {
		snprintf(def, sizeof(def), "%s/capture_bench.%ld.gpt",
			 access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm", (long)getpid());
		path = def;
	}
	struct gp_gpt_writer *w;
	char err[512];
	if (gp_gpt_writer__open(path, &w, err, sizeof(err))) {
		fprintf(stderr, "capture_bench: %s\n", err);
		return 1;
	}
	struct gp_gpt_map m = {.bpf_type = 27, .nrings = NRINGS, .ring_bytes = 1u << 20,
			       .sample_every = 1, .btf = GP_GPT_NO_BTF, .record_size = 16,
			       .name_len = 5, .nfields = 3};
	struct gp_gpt_field f[3] = {{0, 8, GP_GPT_F_UINT, 0, "addr"}, {8, 4, GP_GPT_F_UINT, 0, "size"},
				    {12, 4, GP_GPT_F_UINT, 0, "dir"}};
	gp_gpt_writer__map(w, 0, &m, "trace", f);
	/* one span of SPAN bytes per ring in turn, as the consumer threads take them */
	uint8_t *span = malloc(SPAN);
	uint64_t pos[NRINGS] = {0}, made = 0;
	struct gp_gpt_buf buf = {0};
	double t0 = now_s();
	for (unsigned r = 0; made < nrec; r = (r + 1) % NRINGS) {
		size_t len = 0;
		for (; len + 24 <= SPAN && made < nrec; len += 24, made++) {
			uint32_t hdr[2] = {16, 1};
			uint64_t addr = 0x7f0000000000ull + made * 4;
			uint32_t sd[2] = {4, (uint32_t)(made & 1)};
			memcpy(span + len, hdr, 8);
			memcpy(span + len + 8, &addr, 8);
			memcpy(span + len + 16, sd, 8);
		}
		gp_gpt_buf__span(w, &buf, 0, r, pos[r], span, len);
		pos[r] += len;
	}
	gp_gpt_buf__flush(w, &buf);
	uint64_t drops[NRINGS] = {0};
	struct iovec v = {drops, sizeof(drops)};
	gp_gpt_writer__chunk(w, GP_GPT_DROPS, 0, 0, &v, 1);
	gp_gpt_writer__close(w, made, 0);
	double t_write = now_s() - t0;
	free(buf.p);
	free(span);

	int fd = open(path, O_RDONLY);
	struct stat sb;
	fstat(fd, &sb);
	void *data = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	close(fd);
	unlink(path);
	double best_check = 1e9, best_decode = 1e9, best_text = 1e9, best_rows = 1e9;
	uint64_t sink = 0;
	for (int i = 0; i < runs; i++) {
		struct gp_gpt *g;
		t0 = now_s();
		if (gp_gpt__open_mem(data, (size_t)sb.st_size, &g, err, sizeof(err))) {
			fprintf(stderr, "capture_bench: %s\n", err);
			return 1;
		}
		double t1 = now_s();
		const struct gp_gpt_map_info *mi = gp_gpt__map(g, 0);
		struct acc a = {.g = g, .f = mi->fields, .nf = mi->m->nfields};
		gp_gpt__for_each(g, decode_one, &a);
		double t2 = now_s();
		struct acc r = {0};
		gp_gpt__decode_rows(g, rows_one, &r);
		double t2r = now_s();
		if (r.n != made || r.sum != a.sum) {
			fprintf(stderr, "capture_bench: rows decoded %llu records (sum %llx), fields %llu "
				"(sum %llx)\n", (unsigned long long)r.n, (unsigned long long)r.sum,
				(unsigned long long)a.n, (unsigned long long)a.sum);
			return 1;
		}
		best_rows = t2r - t2 < best_rows ? t2r - t2 : best_rows;
		t2 = now_s();
		char line[512];
		struct acc b = {.g = g, .line = line};
		gp_gpt__for_each(g, text_one, &b);
		double t3 = now_s();
		if (a.n != made || b.n != made || mi->records != made) {
			fprintf(stderr, "capture_bench: %llu records decoded, %llu made\n",
				(unsigned long long)a.n, (unsigned long long)made);
			return 1;
		}
		sink += a.sum + b.sum;
		best_check = t1 - t0 < best_check ? t1 - t0 : best_check;
		best_decode = t2 - t1 < best_decode ? t2 - t1 : best_decode;
		best_text = t3 - t2 < best_text ? t3 - t2 : best_text;
		gp_gpt__close(g);
	}
	munmap(data, (size_t)sb.st_size);
	printf("capture_bench: %llu records of 16 bytes (24 in the ring), %.1f MB file, %d rings, "
	       "best of %d (checksum %llx)\n", (unsigned long long)made, sb.st_size / 1e6, NRINGS,
	       runs, (unsigned long long)(sink & 0xffff));
	printf("write   %8.3f s  %.3g events/s  %.2f GB/s (writer, %s)\n", t_write, made / t_write,
	       sb.st_size / t_write / 1e9, path);
	printf("check   %8.3f s  %.3g events/s  %.2f GB/s (open: every record checked)\n", best_check,
	       made / best_check, sb.st_size / best_check / 1e9);
	printf("decode  %8.3f s  %.3g events/s (every typed field of every record, one core)\n",
	       best_decode, made / best_decode);
	printf("rows    %8.3f s  %.3g events/s (gp_gpt__decode_rows: the same fields in batches)\n",
	       best_rows, made / best_rows);
	printf("check+rows          %.3g events/s (open and decode a file, one core)\n",
	       made / (best_check + best_rows));
	printf("text    %8.3f s  %.3g events/s (a line per record into memory, not written)\n",
	       best_text, made / best_text);
	return 0;
}
