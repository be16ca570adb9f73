/* gpuprobe run -e PROGRAM and --dry-run: the one-liner (ebpf/oneliner.h) compiled into a probe
 * object of the user's own, which then goes where -p objects go (checked, verified, attached). */
#ifndef GPUPROBE_CLI_RUN_ONELINER_H
#define GPUPROBE_CLI_RUN_ONELINER_H

/* Compile src and write the object into the per-user runtime folder ($XDG_RUNTIME_DIR/gpuprobe,
 * else /tmp/gpuprobe-UID; 0700, ours), mode 0600, named by its content (oneliner-<hash>.bpf.o:
 * the same one-liner gives the same file, so the shim's cache of instrumented code hits from run
 * to run). Returns the malloc'd path, or NULL after one line on stderr
 * ("run: -e: column 12: expected ..."; exit status 2 is the caller's). */
char *run_oneliner_file(const char *src);

/* --dry-run: print what src compiles to (maps, programs' instructions) on stdout. 0, or 2 after
 * one line. */
int run_oneliner_dump(const char *src);

#endif
