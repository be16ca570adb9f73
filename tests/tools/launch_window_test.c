/* --launch-skip 2 --launch-count 3 as the shim applies it (shim/launch_window.c): each kernel
 * handle's launches 2, 3 and 4 are inside the window, counted per handle; an env without a window
 * takes every launch (a process of its own each, as the shim reads the variables once). */
#include "shim/launch_window.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int fails;

/* Which of n launches of each handle the window takes, as a 0/1 string per handle. */
static void expect(const char *skip, const char *count, const char *want_a, const char *want_b)
{
	int fd[2];
	if (pipe(fd))
		exit(2);
	pid_t pid = fork();
	if (!pid) {
		close(fd[0]);
		skip ? setenv("GPUPROBE_LAUNCH_SKIP", skip, 1) : unsetenv("GPUPROBE_LAUNCH_SKIP");
		count ? setenv("GPUPROBE_LAUNCH_COUNT", count, 1) : unsetenv("GPUPROBE_LAUNCH_COUNT");
		static char fa, fb;   /* two kernel handles, launched in turn */
		char out[2][16] = {{0}};
		for (int i = 0; i < 8; i++) {
			out[0][i] = '0' + shim_launch_window_take(&fa);
			out[1][i] = '0' + shim_launch_window_take(&fb);
		}
		dprintf(fd[1], "%s %s", out[0], out[1]);
		_exit(0);
	}
	close(fd[1]);
	char got[64] = {0}, want[64];
	ssize_t n = read(fd[0], got, sizeof(got) - 1);
	(void)n;
	close(fd[0]);
	waitpid(pid, NULL, 0);
	snprintf(want, sizeof(want), "%s %s", want_a, want_b);
	if (strcmp(got, want)) {
		fprintf(stderr, "FAIL skip=%s count=%s: got '%s', expected '%s'\n", skip ? skip : "-",
			count ? count : "-", got, want);
		fails++;
	}
}

int main(void)
{
	expect("2", "3", "00111000", "00111000");
	expect("0", "1", "10000000", "10000000");
	expect("5", NULL, "00000111", "00000111");   /* no count: every launch from the 5th */
	expect(NULL, NULL, "11111111", "11111111");  /* no window */
	if (!fails)
		printf("ok: launch window\n");
	return fails ? 1 : 0;
}
