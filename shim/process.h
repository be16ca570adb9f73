/* Process events around the probe runtime (process.c): exit, fork, exec, SIGINT/SIGTERM/SIGHUP.
 *
 * - exit: the final report (under `gpuprobe run`: the final snapshot, copier.h), once, in the
 *   process that set probes up (not in a forked child).
 * - fork: the child has no output thread and owns none of the parent's state; it prints nothing
 *   unless it loads modules itself, and then sets probes up as a process of its own (its JSON
 *   goes to PATH.PID: maps/output.h).
 * - exec: the environment is kept; the new program is a process of its own (same rule).
 * - SIGINT, SIGTERM, SIGHUP, where the application left the default action: the handler only
 *   writes a byte to a pipe; a thread of ours prints the final report, restores the default
 *   action and sends the signal again, so the process still dies of it (exit status 128+N).
 *   A second signal kills at once. Where the application has a handler, it stays the
 *   application's (its exit() gives the report through the exit handler). */
#ifndef GPUPROBE_SHIM_PROCESS_H
#define GPUPROBE_SHIM_PROCESS_H

/* After the probe runtime is set up in this process: final() runs once at exit or on a fatal
 * signal above; forked() runs in the child of every fork, first thing, to drop the parent's
 * state. Call once per process (a forked child that sets probes up again calls it again). */
void shim_process_watch(void (*final)(void), void (*forked)(void));

#endif
