/* gpuprobe decode FILE.gpt: the records of a capture (`gpuprobe run --output FILE.gpt`,
 * maps/gpt.h) with their typed fields, as text or JSON lines, then what each map lost. */
#include "cli/cli.h"
#include "maps/gpt.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static void decode_usage(FILE *out)
{
	fputs("usage: gpuprobe decode [--json] [--limit N] [--stats] FILE.gpt\n\n"
	      "Print the ring records a capture holds ('gpuprobe run --output FILE.gpt'), one line\n"
	      "each, with the fields of the record type the probe object's BTF gives its map\n"
	      "(__type(value, struct T)); records of a map without one print as hex bytes. Then,\n"
	      "on stderr, each map's records and the records its rings lost (exact counts).\n\n"
	      "options:\n"
	      "  --json        JSON lines: {\"map\":..,\"ring\":..,FIELD:VALUE...}, and a last line\n"
	      "                per map {\"type\":\"summary\",...} instead of the stderr summary\n"
	      "  --limit N     stop after N records (the summary still counts them all)\n"
	      "  --stats       only the summary\n"
	      "  -h, --help    this help\n\n"
	      "Exit status: 0; 1 when the file is not a whole capture (one line says where);\n"
	      "2 for bad usage. A capture whose process died before it finished (no end chunk)\n"
	      "decodes up to its last whole chunk, with a line saying so.\n", out);
}

struct out {
	const struct gp_gpt *g;
	int json;
	uint64_t limit, n;
	char *buf;
	size_t len, cap;
};

static void out_flush(struct out *o)
{
	fwrite(o->buf, 1, o->len, stdout);
	o->len = 0;
}

static int on_record(void *user, uint32_t map, uint32_t ring, const void *data, uint32_t size)
{
	struct out *o = user;
	if (o->n >= o->limit)
		return 1;
	const struct gp_gpt_map_info *mi = gp_gpt__map(o->g, map);
	size_t need = gp_gpt_format_max(mi, size);
	if (o->len + need > o->cap) {
		out_flush(o);
		if (need > o->cap) {
			char *b = realloc(o->buf, need);
			if (!b)
				return 1;
			o->buf = b;
			o->cap = need;
		}
	}
	o->len += gp_gpt_format(mi, ring, data, size, o->json, o->buf + o->len);
	o->n++;
	return 0;
}

static void summary(const struct gp_gpt *g, const char *path, int json)
{
	for (size_t i = 0; i < gp_gpt__map_count(g); i++) {
		const struct gp_gpt_map_info *mi = gp_gpt__map(g, i);
		if (!mi)
			continue;
		const char *mode = mi->m->flags & GP_GPT_LOSSLESS ? "lossless" : "lossy";
		if (json) {
			printf("{\"type\":\"summary\",\"map\":\"%s\",\"records\":%llu,\"lost\":%llu,"
			       "\"lost_known\":%s,\"rings\":%u,\"mode\":\"%s\",\"sample_every\":%u",
			       mi->name, (unsigned long long)mi->records,
			       (unsigned long long)mi->drops_total, mi->drops ? "true" : "false",
			       mi->m->nrings, mode, mi->m->sample_every);
			if (mi->stats)
				printf(",\"wait_ns\":%llu,\"rings_gave_up\":%u,\"offered\":%llu",
				       (unsigned long long)mi->wait_ns, mi->gave_up,
				       (unsigned long long)mi->offered);
			printf("}\n");
			continue;
		}
		fprintf(stderr, "gpuprobe: %s: map '%s': %llu records, ", path, mi->name,
			(unsigned long long)mi->records);
		if (mi->drops)
			fprintf(stderr, "%llu lost", (unsigned long long)mi->drops_total);
		else
			fprintf(stderr, "lost unknown (no drop counts in the file)");
		fprintf(stderr, " (%u rings, %s", mi->m->nrings, mode);
		if (mi->m->sample_every > 1)
			fprintf(stderr, ", 1 in %u sampled", mi->m->sample_every);
		if (mi->m->sample_every > 1 && mi->stats)
			fprintf(stderr, " of %llu offered", (unsigned long long)mi->offered);
		if (mi->stats && mi->wait_ns)
			fprintf(stderr, ", producers waited %.3f ms for space", mi->wait_ns / 1e6);
		if (mi->gave_up)
			fprintf(stderr, ", %u rings gave up waiting (lossy from then on: the consumer "
				"stopped)", mi->gave_up);
		fprintf(stderr, "%s)\n", mi->m->nfields ? "" : ", untyped: hex bytes");
	}
	const struct gp_gpt_end *e = gp_gpt__end(g);
	if (e && e->host_lost)
		fprintf(stderr, "gpuprobe: %s: %llu records were consumed but not written (the file "
			"failed while capturing)\n", path, (unsigned long long)e->host_lost);
}

int cmd_decode(int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},
		{"limit", required_argument, NULL, 'l'},
		{"stats", no_argument, NULL, 's'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	int json = 0, stats = 0, c;
	uint64_t limit = UINT64_MAX;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = 1;
			break;
		case 's':
			stats = 1;
			break;
		case 'l': {
			char *end;
			errno = 0;
			unsigned long long v = strtoull(optarg, &end, 10);
			if (!*optarg || *end || errno || optarg[0] == '-')
				return cli_usage_error("decode: --limit %s: a whole number of records",
						       optarg);
			limit = v;
			break;
		}
		case 'h':
			decode_usage(stdout);
			return 0;
		case ':':
			return cli_usage_error("decode: option '%s' needs an argument (see 'gpuprobe "
					       "decode --help')", argv[optind - 1]);
		default:
			return cli_usage_error("decode: unknown option '%s' (see 'gpuprobe decode "
					       "--help')", argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return cli_usage_error("decode: one capture file expected (see 'gpuprobe decode "
				       "--help')");
	const char *path = argv[optind];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return cli_error("decode: %s: %s", path, strerror(errno));
	struct stat sb;
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
		close(fd);
		return cli_error("decode: %s: not a regular file", path);
	}
	size_t size = (size_t)sb.st_size;
	void *map = size ? mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
	close(fd);
	if (size && map == MAP_FAILED)
		return cli_error("decode: %s: %s", path, strerror(errno));
	if (size)
		madvise(map, size, MADV_SEQUENTIAL);
	struct gp_gpt *g;
	char err[512];
	int rc = gp_gpt__open_mem(size ? map : "", size, &g, err, sizeof(err));
	if (rc) {
		if (size)
			munmap(map, size);
		return cli_error("decode: %s: %s", path, err);
	}
	if (gp_gpt__truncated(g))
		fprintf(stderr, "gpuprobe: %s: no end chunk: the capturing process died or is still "
			"writing; what follows is every whole chunk\n", path);
	struct out o = {.g = g, .json = json, .limit = stats ? 0 : limit, .cap = 1 << 20};
	o.buf = malloc(o.cap);
	if (!o.buf) {
		gp_gpt__close(g);
		munmap(map, size);
		return cli_error("out of memory");
	}
	if (o.limit)
		gp_gpt__for_each(g, on_record, &o);
	out_flush(&o);
	free(o.buf);
	summary(g, path, json);
	fflush(stdout);
	gp_gpt__close(g);
	if (size)
		munmap(map, size);
	return 0;
}
