/* gpuprobe ptx SUBCOMMAND: the PTX tools. Each subcommand is one function; cmd_ptx.c lists them.
 * `print` lives in cmd_ptx.c. The others are defined in their owners' files (cli/cmd_ptx_<name>.c);
 * they are weak references here, so a build without one still links and says it is missing.
 * argv[0] is the subcommand name. Return the exit status. */
#ifndef GPUPROBE_CMD_PTX_H
#define GPUPROBE_CMD_PTX_H

int cmd_ptx_print(int argc, char **argv);
int cmd_ptx_instrument(int argc, char **argv) __attribute__((weak));
int cmd_ptx_spirv(int argc, char **argv) __attribute__((weak));
int cmd_ptx_llvm(int argc, char **argv) __attribute__((weak));
int cmd_ptx_amdgpu(int argc, char **argv) __attribute__((weak));

#endif
