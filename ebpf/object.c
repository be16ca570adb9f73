/* BPF object loading: placeholder until the loader lands (keeps the library target non-empty). */
#include <errno.h>
#include <stdio.h>
#include "ebpf/object.h"

int gp_object__open_file(const char *path, struct gp_object **out, char *err, size_t errlen)
{
	*out = NULL;
	snprintf(err, errlen, "%s: BPF object loading not implemented yet", path);
	return -ENOSYS;
}
