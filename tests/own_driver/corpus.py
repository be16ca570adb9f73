#!/usr/bin/env python3
"""The cuda-samples corpus through gpuprobe's own driver (GPUPROBE_BACKEND=opencl) on PoCL.

Each sample of samples.tsv is built exactly as its build column says (nvcc, static CUDA runtime),
in a copy of its folder under WORK, and run as its run column says with the shim's directory
first on LD_LIBRARY_PATH. It passes when its verdict holds (exit status 0, or the verdict text in
its output). Otherwise the reason is the shim's first line naming what is missing (a function
the own driver does not implement, a construct a kernel cannot be lowered with), else the
sample's last line.

With --probe PROG.bpf.o (and --gpuprobe BIN), each sample runs under `gpuprobe run -p PROG`
instead; the probe is tests/own_driver/entry_exit.bpf.c's (@counts[0..3]: thread entries and
exits, global loads and stores), and a sample passes only when its verdict holds and every
thread that entered a kernel left it (entries = exits); the counts go into the report.

With --args NAME=ARGS the sample runs with ARGS after its run command: its own options for a
smaller problem (fewer elements or iterations), where the full one takes longer than a CPU has.

usage: corpus.py --shim-dir DIR --work DIR [--corpus DIR] [--only a,b] [--report FILE]
                 [--timeout S] [--jobs N] [--env K=V ...] [--args NAME=ARGS ...]
                 [--probe PROG.bpf.o --gpuprobe BIN]
Exit status: 0 when every sample run passes (with --only) or always with --report.
"""
import argparse
import concurrent.futures
import csv
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def load(corpus):
    with open(os.path.join(corpus, "samples.tsv")) as f:
        return list(csv.DictReader(f, delimiter="\t"))


def build(row, corpus, work, nvcc):
    d = os.path.join(work, row["name"])
    ok, bad = os.path.join(d, ".gp-built"), os.path.join(d, ".gp-build-failed")
    if os.path.exists(ok):
        return d, None
    if os.path.exists(bad):
        return d, open(bad).read()
    shutil.rmtree(d, ignore_errors=True)
    shutil.copytree(os.path.join(corpus, "samples", row["name"]), d)
    env = dict(os.environ, NVCC=nvcc, COMMON=os.path.join(corpus, "Common"))
    p = subprocess.run(["bash", "-c", row["build"]], cwd=d, env=env, capture_output=True, text=True)
    if p.returncode:
        last = [l for l in (p.stdout + p.stderr).splitlines() if l.strip()]
        why = "build failed: " + (last[-1][:200] if last else "exit %d" % p.returncode)
        open(bad, "w").write(why)
        return d, why
    open(ok, "w").write("")
    return d, None


def reason(out, rc, timed_out):
    lines = out.splitlines()
    for pat in (r"gpuprobe: (\S+ is not implemented by gpuprobe's own driver)",
                r"gpuprobe: own driver: (kernel .* cannot run on .*)",
                r"gpuprobe: own driver: (module .*)",
                r"gpuprobe: own driver: (the CUDA runtime called .*)",
                r"gpuprobe: own driver: (launch of .*)"):
        for l in lines:
            m = re.search(pat, l)
            if m:
                return m.group(1)[:300]
    if timed_out:
        return "timed out"
    if rc < 0:
        return "killed by signal %d" % -rc
    for l in lines:   # informational unless nothing else explains the failure
        m = re.search(r"gpuprobe: own driver: (cuGetExportTable: unknown .*)", l)
        if m:
            return m.group(1)[:300]
    tail = [l for l in lines if l.strip() and not l.startswith("gpuprobe: ")]
    return (tail[-1][:200] if tail else "exit %d" % rc)


def asan_runtime(shim_dir):
    """The ASan runtime the shim links (the ASan/UBSan build), or None. The nvcc-built samples are
    not instrumented, and the runtime must come first in a process: it is preloaded for them."""
    try:
        out = subprocess.run(["ldd", os.path.join(shim_dir, "libcuda.so.1")], capture_output=True,
                             text=True).stdout
    except OSError:
        return None
    m = re.search(r"^\s*libasan\.so\S*\s+=>\s+(\S+)", out, re.M)
    return m.group(1) if m else None


def probe_counts(out):
    """@counts[0..3] as gpuprobe run prints them (entries, exits, loads, stores); None if absent."""
    got = {}
    for m in re.finditer(r"^@counts\[(\d)\]: (\d+)$", out, re.M):
        got[int(m.group(1))] = int(m.group(2))
    return [got.get(i, 0) for i in range(4)] if got else None


def run(row, d, shim_dir, timeout, extra_env, probe=None, gpuprobe=None):
    env = dict(os.environ)
    rt = asan_runtime(shim_dir)
    if rt:
        env["LD_PRELOAD"] = rt + (":" + env["LD_PRELOAD"] if env.get("LD_PRELOAD") else "")
    env["LD_LIBRARY_PATH"] = shim_dir + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    env["GPUPROBE_BACKEND"] = "opencl"
    env.update(extra_env)
    t0 = time.time()
    try:
        cmd = ["bash", "-c", "exec " + row["run"]]
        if probe:   # gpuprobe run puts its own lib first on LD_LIBRARY_PATH
            cmd = [gpuprobe, "run", "-p", probe, "--"] + cmd
        p = subprocess.run(cmd, cwd=d, env=env, capture_output=True, timeout=timeout, errors="replace")
        out, rc, to = p.stdout + p.stderr, p.returncode, False
    except subprocess.TimeoutExpired as e:
        out = ((e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")) + \
              ((e.stderr or b"").decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or ""))
        rc, to = -9, True
    verdict = row["verdict"].strip()
    if verdict.startswith("exit "):
        # "exit 0" or "exit 0, not: TEXT" (TEXT must not appear)
        code, _, rest = verdict[5:].partition(",")
        passed = not to and rc == int(code)
        if rest.strip().startswith("not:"):
            passed = passed and rest.strip()[4:].strip() not in out
    else:
        passed = not to and verdict in out
    return passed, out, rc, to, time.time() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shim-dir", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--corpus", default=os.path.join(HERE, "..", "..", "..", "shared", "corpora", "cuda-samples"))
    ap.add_argument("--nvcc", default="/usr/local/cuda/bin/nvcc")
    ap.add_argument("--only", default="")
    ap.add_argument("--report")
    ap.add_argument("--timeout", type=int, default=180)
    ap.add_argument("--merge", help="a report whose rows the samples run now replace (the rest kept)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--args", action="append", default=[], metavar="NAME=ARGS",
                    help="append ARGS to sample NAME's run command (its own options for a smaller problem)")
    ap.add_argument("--logs", help="write each sample's output to LOGS/NAME.log")
    ap.add_argument("--expect", help="TSV of SAMPLE and a line its output must hold (as on the GPU)")
    ap.add_argument("--probe", help="run each sample under gpuprobe run -p PROBE (entry_exit.bpf.c's maps)")
    ap.add_argument("--gpuprobe", help="the gpuprobe binary for --probe")
    a = ap.parse_args()
    if a.probe and not a.gpuprobe:
        print("corpus.py: --probe needs --gpuprobe BIN")
        return 2
    corpus = os.path.abspath(a.corpus)
    if not os.path.exists(os.path.join(corpus, "samples.tsv")):
        print("SKIP: no corpus at %s" % corpus)
        return 77
    if not os.path.exists(a.nvcc):
        print("SKIP: no nvcc at %s" % a.nvcc)
        return 77
    rows = load(corpus)
    if a.only:
        want = a.only.split(",")
        rows = [r for r in rows if r["name"] in want]
    extra = dict(kv.split("=", 1) for kv in a.env)
    for kv in a.args:
        name, _, args = kv.partition("=")
        for r in rows:
            if r["name"] == name:
                r["run"] += " " + args
    os.makedirs(a.work, exist_ok=True)
    if a.logs:
        os.makedirs(a.logs, exist_ok=True)

    expect = {}
    if a.expect:
        for line in open(a.expect):
            if line.strip() and not line.startswith("#"):
                name, text = line.rstrip("\n").split("\t", 1)
                expect.setdefault(name, []).append(text)

    def one(row):
        d, why = build(row, corpus, a.work, a.nvcc)
        if why:
            return row, False, why, 0.0
        passed, out, rc, to, secs = run(row, d, os.path.abspath(a.shim_dir), a.timeout, extra,
                                        a.probe and os.path.abspath(a.probe), a.gpuprobe and os.path.abspath(a.gpuprobe))
        missing = [t for t in expect.get(row["name"], []) if t not in out.splitlines()]
        if a.logs:
            open(os.path.join(a.logs, row["name"] + ".log"), "w").write(out)
        if passed and missing:
            return row, False, "output lacks the line %r" % missing[0], secs
        if a.probe and passed:
            c = probe_counts(out)
            if c is None:   # an ARRAY map of zeros prints nothing: no kernel ran (deviceQuery)
                c = [0, 0, 0, 0]
            note = "%d entries, %d exits, %d global loads, %d stores" % tuple(c)
            if c[0] != c[1]:
                return row, False, "entries differ from exits: " + note, secs
            return row, True, note, secs
        return row, passed, "" if passed else reason(out, rc, to), secs

    results = []
    if a.only:
        names = set(r["name"] for r in rows)
        for n in a.only.split(","):
            if n not in names:
                print("FAIL %s: not in samples.tsv" % n)
                return 1
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        for row, passed, why, secs in ex.map(one, rows):
            print("%s %s%s (%.1f s)" % ("PASS" if passed else "FAIL", row["name"], ": " + why if why else "", secs),
                  flush=True)
            results.append((row, passed, why, secs))
    npass = sum(1 for r in results if r[1])
    print("%d of %d samples pass" % (npass, len(results)))
    if a.report:
        if a.merge and os.path.exists(a.merge):
            have = set(r[0]["name"] for r in results)
            for line in open(a.merge):
                m = re.match(r"^\| (\S+) \| (pass|fail) \| (.*) \|$", line.rstrip("\n"))
                if m and m.group(1) != "sample" and m.group(1) not in have:
                    results.append(({"name": m.group(1)}, m.group(2) == "pass", m.group(3).replace("\\|", "|"), 0.0))
            npass = sum(1 for r in results if r[1])
        with open(a.report, "w") as f:
            f.write("# cuda-samples through gpuprobe's own driver on PoCL\n\n")
            f.write("Written by `tests/own_driver/corpus.py` (GPUPROBE_BACKEND=opencl, PoCL 3.1 on the CPU; "
                    "each sample built with nvcc 13 exactly as samples.tsv says, static CUDA runtime). "
                    "A sample passes when its own verdict holds; otherwise the reason is the first line "
                    "of the shim naming what is missing, else the sample's last line.\n\n")
            f.write("%d of %d samples pass (%s).\n\n" % (npass, len(results), time.strftime("%Y-%m-%d")))
            f.write("| sample | result | what is missing |\n| --- | --- | --- |\n")
            for row, passed, why, secs in sorted(results, key=lambda r: r[0]["name"].lower()):
                f.write("| %s | %s | %s |\n" % (row["name"], "pass" if passed else "fail",
                                               why.replace("|", "\\|")))
        return 0
    return 0 if npass == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
