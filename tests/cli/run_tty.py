#!/usr/bin/env python3
"""gpuprobe run on a terminal (issue 12): the application runs in a process group of its own, so
gpuprobe must hand it the terminal while it runs (else reading the terminal stops it with SIGTTIN),
the terminal's Ctrl-C must reach it once, Ctrl-Z and fg must work as for any job under bash, and
gpuprobe returns the application's status and takes the terminal back.
usage: run_tty.py GPUPROBE"""
import os
import pty
import select
import sys
import time


def read_until(fd, want, timeout=10.0):
    got = b""
    end = time.time() + timeout
    while want not in got and time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.1)
        if r:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            got += chunk
    return got


def main():
    gpuprobe = sys.argv[1]
    # The application reads a line from the terminal, then counts the SIGINTs it gets before
    # it exits from the second (a doubled Ctrl-C, once from the terminal and once passed on,
    # would show as 'ints 2' at once).
    app = ('read x; echo "got $x"; n=0; trap \'n=$((n+1)); echo "ints $n"; '
           '[ $n -ge 2 ] && exit 9\' INT; echo ready; while :; do sleep 0.05; done')
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(gpuprobe, [gpuprobe, "run", "--", "sh", "-c", app])
    os.write(fd, b"hello\n")
    out = read_until(fd, b"ready")
    if b"got hello" not in out:
        print("FAIL: the application could not read the terminal: %r" % out)
        return 1
    print("ok: the application read the terminal")
    os.write(fd, b"\x03")          # Ctrl-C from the terminal
    out = read_until(fd, b"ints 1", 5)
    time.sleep(0.5)
    out += read_until(fd, b"ints 2", 0.5)
    if b"ints 1" not in out or b"ints 2" in out:
        print("FAIL: one Ctrl-C gave: %r" % out)
        os.kill(pid, 9)
        return 1
    print("ok: one Ctrl-C reached the application once")
    os.write(fd, b"\x03")
    read_until(fd, b"ints 2", 5)
    end = time.time() + 10
    while time.time() < end:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.05)
    else:
        os.kill(pid, 9)
        print("FAIL: gpuprobe did not exit")
        return 1
    code = os.waitstatus_to_exitcode(status)
    if code != 9:
        print("FAIL: gpuprobe returned %d, expected the application's 9" % code)
        return 1
    print("ok: the application's trap exited 9 -> 9")
    return job_control(gpuprobe)


def job_control(gpuprobe):
    """Under an interactive bash: Ctrl-Z stops gpuprobe with the application (the shell sees a
    stopped job and gets the terminal back), fg resumes both, Ctrl-C then ends the application
    and gpuprobe returns 130."""
    if not os.path.exists("/bin/bash"):
        print("SKIP (part): no bash for the job-control check")
        print("PASS")
        return 0
    pid, fd = pty.fork()
    if pid == 0:
        os.environ["PS1"] = "PROMPT> "
        os.execv("/bin/bash", ["bash", "--norc", "--noprofile", "-i"])

    def fail(what, out):
        print("FAIL: %s: %r" % (what, out[-300:]))
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        return 1

    read_until(fd, b"PROMPT> ")
    # One process that never forks: a shell loop forking sleeps could be stopped between its
    # vfork and exec, which no shell's job control sees (with or without gpuprobe).
    tick = ("import itertools, signal, time; signal.signal(signal.SIGINT, signal.SIG_DFL)\n"
            "for i in itertools.count(1): print('tick%d' % i, flush=True); time.sleep(0.1)")
    os.write(fd, ("%s run -- %s -c \"%s\"\n" % (gpuprobe, sys.executable, tick)).encode())
    out = read_until(fd, b"tick3")
    if b"tick3" not in out:
        return fail("the application did not run", out)
    os.write(fd, b"\x1a")         # Ctrl-Z
    out = read_until(fd, b"PROMPT> ", 10)
    if b"Stopped" not in out:
        return fail("Ctrl-Z: bash did not see a stopped job", out)
    time.sleep(0.5)
    out = read_until(fd, b"tick", 0.5)
    if b"tick" in out:
        return fail("Ctrl-Z: the application still runs", out)
    print("ok: Ctrl-Z stops gpuprobe and the application, bash has the terminal")
    os.write(fd, b"fg\n")
    out = read_until(fd, b"tick", 10)
    out += read_until(fd, b"tick", 1)
    if b"tick" not in out:
        return fail("fg: the application did not resume", out)
    print("ok: fg resumes the application")
    os.write(fd, b"\x03")         # Ctrl-C
    out = read_until(fd, b"PROMPT> ", 10)
    os.write(fd, b"echo status=$?\n")
    out = read_until(fd, b"status=130", 10)
    if b"status=130" not in out:
        return fail("Ctrl-C after fg: expected status 130", out)
    print("ok: Ctrl-C ends the application: 130")
    os.write(fd, b"exit\n")
    end = time.time() + 5
    while time.time() < end and not os.waitpid(pid, os.WNOHANG)[0]:
        read_until(fd, b"\0", 0.1)
    if time.time() >= end:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    print("PASS")
    return 0


sys.exit(main())
