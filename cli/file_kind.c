/* The shared file-kind sniffer (file_kind.h). */
#include "cli/file_kind.h"
#include "cli/cli.h"
#include "ptx-frontend/fatbin.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define EM_CUDA_ 190
#define EM_BPF_ 247

static const char *machine_name(unsigned m)
{
	switch (m) {
	case 3: return "x86 ";
	case 62: return "x86-64 ";
	case 183: return "AArch64 ";
	case 21: return "PowerPC64 ";
	case 243: return "RISC-V ";
	}
	return "";
}

enum cli_file_kind cli_file_kind(const char *path, char *desc, size_t cap)
{
	uint8_t head[4096];
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(desc, cap, "%s", strerror(errno));
		return CLI_FILE_UNREADABLE;
	}
	size_t n = fread(head, 1, sizeof(head), f);
	int err = ferror(f);
	fclose(f);
	if (err) {
		snprintf(desc, cap, "%s", strerror(EISDIR));
		return CLI_FILE_UNREADABLE;
	}
	if (!n) {
		snprintf(desc, cap, "an empty file");
		return CLI_FILE_EMPTY;
	}
	if (n >= 20 && !memcmp(head, "\177ELF", 4)) {
		unsigned mach = head[5] == 2 ? (unsigned)head[18] << 8 | head[19] : (unsigned)head[19] << 8 | head[18];
		unsigned type = head[5] == 2 ? (unsigned)head[16] << 8 | head[17] : (unsigned)head[17] << 8 | head[16];
		if (mach == EM_BPF_) {
			snprintf(desc, cap, "a BPF object");
			return CLI_FILE_BPF;
		}
		if (mach == EM_CUDA_) {
			snprintf(desc, cap, "a cubin");
			return CLI_FILE_CUBIN;
		}
		const char *m = machine_name(mach);
		if (type == 3 && head[4] == 2 && head[5] == 1 && n >= 64) {   /* PIE: has an interpreter */
			uint64_t phoff;
			uint16_t phentsize, phnum;
			memcpy(&phoff, head + 32, 8);
			memcpy(&phentsize, head + 54, 2);
			memcpy(&phnum, head + 56, 2);
			for (unsigned i = 0; i < phnum && phentsize >= 4 && phoff + (uint64_t)(i + 1) * phentsize <= n; i++) {
				uint32_t pt;
				memcpy(&pt, head + phoff + (uint64_t)i * phentsize, 4);
				if (pt == 3)
					type = 2;
			}
		}
		const char *what = type == 2 ? "executable" : type == 3 ? "shared library" :
				   type == 1 ? "object file" : type == 4 ? "core dump" : "ELF file";
		const char *first = *m ? m : what;
		snprintf(desc, cap, "%s %s%s", strchr("aeiouxAEIOU", first[0]) ? "an" : "a", m, what);
		return CLI_FILE_HOST_ELF;
	}
	if (n >= 8 && !memcmp(head, "!<arch>\n", 8)) {
		snprintf(desc, cap, "a static library");
		return CLI_FILE_ARCHIVE;
	}
	switch (module_image_classify(head, n)) {
	case MODULE_IMAGE_FATBIN:
	case MODULE_IMAGE_WRAPPER:
		snprintf(desc, cap, "a fatbin");
		return CLI_FILE_FATBIN;
	case MODULE_IMAGE_PTX:
		snprintf(desc, cap, "a PTX file");
		return CLI_FILE_PTX;
	case MODULE_IMAGE_CUBIN: /* an ELF not caught above */
		snprintf(desc, cap, "a cubin");
		return CLI_FILE_CUBIN;
	default:
		break;
	}
	/* Text that is not PTX: say what it starts with. */
	size_t i = 0;
	while (i < n && (head[i] == '\t' || head[i] == '\n' || head[i] == '\r' || (head[i] >= 32 && head[i] < 127)))
		i++;
	if (i == n)
		snprintf(desc, cap, "a text file");
	else
		snprintf(desc, cap, "of an unknown kind (first bytes %02x %02x %02x %02x)", head[0],
			 n > 1 ? head[1] : 0, n > 2 ? head[2] : 0, n > 3 ? head[3] : 0);
	return CLI_FILE_UNKNOWN;
}

static const char *hint(enum cli_file_kind got, unsigned reads, const char *path, char *buf, size_t cap)
{
	buf[0] = 0;
	if ((got == CLI_FILE_HOST_ELF || got == CLI_FILE_ARCHIVE || got == CLI_FILE_FATBIN) &&
	    (reads & CLI_READS(CLI_FILE_PTX)))
		snprintf(buf, cap, "; 'gpuprobe fatbin %s -o DIR --kind ptx' writes its PTX modules", path);
	else if (got == CLI_FILE_BPF)
		snprintf(buf, cap, "; 'gpuprobe show %s' lists its programs and maps", path);
	else if ((got == CLI_FILE_PTX || got == CLI_FILE_CUBIN) && !(reads & CLI_READS(got)))
		snprintf(buf, cap, "; 'gpuprobe list %s' lists its kernels", path);
	return buf;
}

int cli_expect_kind(const char *cmd, const char *path, unsigned reads, const char *wants,
		    enum cli_file_kind *kind)
{
	char desc[256], h[512];
	enum cli_file_kind k = cli_file_kind(path, desc, sizeof(desc));
	if (kind)
		*kind = k;
	if (reads & CLI_READS(k))
		return 0;
	if (k == CLI_FILE_UNREADABLE)
		cli_error("%s: %s: %s", cmd, path, desc);
	else
		cli_error("%s: %s is %s, not %s%s", cmd, path, desc, wants, hint(k, reads, path, h, sizeof(h)));
	return 2;
}

/* sm_90 takes sm_90a and compute_90; sm_90a only sm_90a */
int cli_target_kept(const char *want, const char *target)
{
	if (!want)
		return 1;
	const char *t = target, *w = want;
	t += !strncmp(t, "compute_", 8) ? 8 : !strncmp(t, "sm_", 3) ? 3 : 0;
	w += !strncmp(w, "compute_", 8) ? 8 : !strncmp(w, "sm_", 3) ? 3 : 0;
	size_t n = strlen(w);
	if (strncmp(t, w, n))
		return 0;
	return !t[n] || (isalpha((unsigned char)t[n]) && !isalpha((unsigned char)w[n ? n - 1 : 0]));
}

