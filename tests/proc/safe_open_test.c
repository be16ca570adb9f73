/* common/safe_open.c as a unit: links, FIFOs, devices, other owners, modes, the output file's
 * first-process rule. Cases that need another owner run where the test runs as root (chown). */
#include "common/safe_open.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int fails;
#define CHECK(c, ...) do { if (!(c)) { fails++; printf("FAIL %s:%d: ", __FILE__, __LINE__); \
	printf(__VA_ARGS__); printf("\n"); } } while (0)

static char dir[256];
static char *at(const char *name)
{
	static char b[4][512];
	static int i;
	i = (i + 1) % 4;
	snprintf(b[i], sizeof(b[i]), "%s/%s", dir, name);
	return b[i];
}

static void put(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		perror(path);
	close(fd);
	chmod(path, mode);
}

static char *get(const char *path)
{
	static char b[256];
	int fd = open(path, O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, b, sizeof(b) - 1) : -1;
	close(fd);
	b[n > 0 ? n : 0] = 0;
	return b;
}

static void test_output(int root)
{
	char err[512], used[512];
	/* a symlink planted where the output goes: refused, the target untouched */
	put(at("victim"), "precious", 0600);
	symlink(at("victim"), at("out-link"));
	int fd = gp_open_output(at("out-link"), GP_OUTPUT_FIRST, used, sizeof(used), err, sizeof(err));
	CHECK(fd == -ELOOP && strstr(err, "symbolic link"), "link: %d %s", fd, err);
	CHECK(!strcmp(get(at("victim")), "precious"), "link target changed");
	/* a FIFO: refused at once, never waited on */
	mkfifo(at("out-fifo"), 0600);
	alarm(5);
	fd = gp_open_output(at("out-fifo"), GP_OUTPUT_FIRST, used, sizeof(used), err, sizeof(err));
	alarm(0);
	CHECK(fd < 0 && strstr(err, "FIFO"), "fifo: %d %s", fd, err);
	/* a second name of one of the user's files */
	link(at("victim"), at("out-hard"));
	fd = gp_open_output(at("out-hard"), GP_OUTPUT_FIRST, used, sizeof(used), err, sizeof(err));
	CHECK(fd == -EPERM && strstr(err, "links"), "hard link: %d %s", fd, err);
	CHECK(!strcmp(get(at("victim")), "precious"), "hard link target changed");
	/* new: 0600; an old file of ours: truncated */
	fd = gp_open_output(at("out.json"), GP_OUTPUT_FIRST, used, sizeof(used), err, sizeof(err));
	struct stat st;
	CHECK(fd >= 0 && !fstat(fd, &st) && (st.st_mode & 0777) == 0600, "new output mode %o",
	      st.st_mode & 0777);
	CHECK(!strcmp(used, at("out.json")), "used %s", used);
	CHECK(write(fd, "{\"parent\":1}\n", 13) == 13, "write");
	/* the first process holds it: another process (a child, same path) writes PATH.PID and
	 * leaves PATH alone */
	pid_t pid = fork();
	if (pid == 0) {
		char u[512], e[512];
		int c = gp_open_output(at("out.json"), GP_OUTPUT_FIRST, u, sizeof(u), e, sizeof(e));
		char want[512];
		snprintf(want, sizeof(want), "%s.%d", at("out.json"), (int)getpid());
		_exit(c >= 0 && !strcmp(u, want) && write(c, "child\n", 6) == 6 ? 0 : 1);
	}
	int wst;
	waitpid(pid, &wst, 0);
	CHECK(WIFEXITED(wst) && !WEXITSTATUS(wst), "child did not get PATH.PID");
	CHECK(!strcmp(get(at("out.json")), "{\"parent\":1}\n"), "parent's file changed: %s",
	      get(at("out.json")));
	char pidpath[64];
	snprintf(pidpath, sizeof(pidpath), "out.json.%d", (int)pid);
	CHECK(!strcmp(get(at(pidpath)), "child\n"), "child's file: %s", get(at(pidpath)));
	close(fd);
	/* the first process ended: the next run owns PATH again and truncates it */
	fd = gp_open_output(at("out.json"), GP_OUTPUT_FIRST, used, sizeof(used), err, sizeof(err));
	CHECK(fd >= 0 && !strcmp(used, at("out.json")) && !fstat(fd, &st) && st.st_size == 0,
	      "next run: %s", used);
	/* under gpuprobe run: another process of the run never touches PATH */
	CHECK(write(fd, "app\n", 4) == 4, "write");
	int fd2 = gp_open_output(at("out.json"), GP_OUTPUT_OTHER, used, sizeof(used), err, sizeof(err));
	snprintf(pidpath, sizeof(pidpath), "out.json.%d", (int)getpid());
	CHECK(fd2 >= 0 && !strcmp(used, at(pidpath)) && !strcmp(get(at("out.json")), "app\n"),
	      "other: %s", used);
	close(fd2);
	close(fd);
	if (root) {
		/* pre-created by another user (even 0666): refused, untouched */
		put(at("theirs.json"), "theirs", 0666);
		CHECK(!chown(at("theirs.json"), 65534, 65534), "chown");
		fd = gp_open_output(at("theirs.json"), GP_OUTPUT_FIRST, used, sizeof(used), err, sizeof(err));
		CHECK(fd == -EPERM && strstr(err, "another user"), "foreign: %d %s", fd, err);
		CHECK(!strcmp(get(at("theirs.json")), "theirs"), "foreign file changed");
	}
}

static void test_read(int root)
{
	char err[512];
	put(at("probe.o"), "x", 0644);
	int fd = gp_open_read(at("probe.o"), GP_OPEN_TRUSTED, err, sizeof(err));
	CHECK(fd >= 0, "plain trusted read: %s", err);
	close(fd);
	chmod(at("probe.o"), 0664);
	fd = gp_open_read(at("probe.o"), GP_OPEN_TRUSTED, err, sizeof(err));
	CHECK(fd == -EPERM && strstr(err, "its group can write it"), "group-writable: %d %s", fd, err);
	chmod(at("probe.o"), 0646);
	fd = gp_open_read(at("probe.o"), GP_OPEN_TRUSTED, err, sizeof(err));
	CHECK(fd == -EPERM && strstr(err, "everyone can write it"), "world-writable: %d %s", fd, err);
	fd = gp_open_read(at("probe.o"), 0, err, sizeof(err));
	CHECK(fd >= 0, "untrusted read of a writable file");
	close(fd);
	mkfifo(at("in-fifo"), 0600);
	alarm(5);
	fd = gp_open_read(at("in-fifo"), GP_OPEN_TRUSTED, err, sizeof(err));
	alarm(0);
	CHECK(fd == -EINVAL && strstr(err, "a FIFO"), "fifo read: %d %s", fd, err);
	fd = gp_open_read("/dev/null", 0, err, sizeof(err));
	CHECK(fd == -EINVAL && strstr(err, "a device"), "device read: %d %s", fd, err);
	fd = gp_open_read(dir, 0, err, sizeof(err));
	CHECK(fd == -EISDIR, "directory read: %d %s", fd, err);
	symlink(at("probe.o"), at("probe-link"));
	fd = gp_open_read(at("probe-link"), GP_OPEN_NOFOLLOW, err, sizeof(err));
	CHECK(fd == -ELOOP, "nofollow: %d %s", fd, err);
	fd = gp_open_read(at("probe-link"), 0, err, sizeof(err));
	CHECK(fd >= 0 && (fcntl(fd, F_GETFD) & FD_CLOEXEC) && !(fcntl(fd, F_GETFL) & O_NONBLOCK),
	      "descriptor flags");
	void *data;
	size_t len;
	CHECK(fd >= 0 && gp_read_all(fd, 0, &data, &len) == -EFBIG, "max size");
	close(fd);
	if (root) {
		put(at("their.o"), "x", 0644);
		CHECK(!chown(at("their.o"), 65534, 65534), "chown");
		fd = gp_open_read(at("their.o"), GP_OPEN_TRUSTED, err, sizeof(err));
		CHECK(fd == -EPERM && strstr(err, "uid 65534"), "foreign probe: %d %s", fd, err);
	}
}

static void test_dir(int root)
{
	char why[256];
	int d = gp_dir_open(at("a/b/cache"), GP_DIR_CREATE, why, sizeof(why));
	struct stat st;
	CHECK(d >= 0 && !fstat(d, &st) && (st.st_mode & 0777) == 0700, "created: %s", why);
	/* entries relative to the descriptor: a FIFO entry, a link entry, a foreign entry */
	mkfifo(at("a/b/cache/k1.cubin"), 0600);
	char err[256];
	alarm(5);
	int fd = gp_openat_read(d, "k1.cubin", err, sizeof(err));
	alarm(0);
	CHECK(fd == -EINVAL, "fifo entry: %d %s", fd, err);
	put(at("elsewhere"), "x", 0600);
	symlink(at("elsewhere"), at("a/b/cache/k2.cubin"));
	fd = gp_openat_read(d, "k2.cubin", err, sizeof(err));
	CHECK(fd == -ELOOP, "link entry: %d", fd);
	struct iovec iov = {"data", 4};
	CHECK(gp_write_file_at(d, "k2.cubin", &iov, 1) == 0, "write over a link");
	CHECK(!strcmp(get(at("elsewhere")), "x"), "the link was followed");
	CHECK(!lstat(at("a/b/cache/k2.cubin"), &st) && S_ISREG(st.st_mode) &&
	      (st.st_mode & 0777) == 0600, "entry replaced, 0600");
	/* the directory swapped for a link after it was opened: the descriptor still reads ours */
	CHECK(!rename(at("a/b/cache"), at("a/b/moved")), "rename");
	mkdir(at("a/b/evil"), 0700);
	put(at("a/b/evil/k2.cubin"), "evil", 0600);
	symlink(at("a/b/evil"), at("a/b/cache"));
	fd = gp_openat_read(d, "k2.cubin", err, sizeof(err));
	char b[8] = "";
	CHECK(fd >= 0 && read(fd, b, 4) == 4 && !memcmp(b, "data", 4), "swapped directory read");
	close(fd);
	int d2 = gp_dir_open(at("a/b/cache"), GP_DIR_CREATE, why, sizeof(why));
	CHECK(d2 == -ELOOP && !strcmp(why, "is a symbolic link"), "link as the directory: %s", why);
	close(d);
	mkdir(at("open"), 0777);
	chmod(at("open"), 0777);
	d = gp_dir_open(at("open"), 0, why, sizeof(why));
	CHECK(d == -EPERM && !strcmp(why, "is writable by others (chmod 700 it)"), "open dir: %s", why);
	if (root) {
		mkdir(at("theirs"), 0700);
		CHECK(!chown(at("theirs"), 65534, 65534), "chown");
		d = gp_dir_open(at("theirs"), 0, why, sizeof(why));
		CHECK(d == -EPERM && !strcmp(why, "belongs to another user"), "foreign dir: %s", why);
		d = gp_dir_open(at("a/b/moved"), 0, why, sizeof(why));
		put(at("a/b/moved/k3.cubin"), "x", 0600);
		CHECK(!chown(at("a/b/moved/k3.cubin"), 65534, 65534), "chown");
		fd = gp_openat_read(d, "k3.cubin", err, sizeof(err));
		CHECK(fd == -EPERM, "foreign entry: %d", fd);
		close(d);
	}
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/gp-safe-open-XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	int root = geteuid() == 0;
	if (!root)
		printf("note: not root: the other-owner cases are skipped\n");
	test_output(root);
	test_read(root);
	test_dir(root);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fails++;
	printf("%s\n", fails ? "FAIL" : "ok safe_open");
	return fails != 0;
}
