#!/usr/bin/env python3
"""Helpers of tests/gpu/apps.sh (the real-program corpus runner); Python 3 standard library only.

  apps_tool.py list CORPORA [SUBSET]       the programs, one TSV line each (see list_programs)
  apps_tool.py analyze ...                 judge one run: verdict, same-as-native, set-up ms, check
  apps_tool.py table OUT.md TSV [TSV...]   the markdown table (several TSVs: later rows win, so
                                           runs split over several device calls merge into one)
"""
import argparse
import fnmatch
import json
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MASK = os.path.join(HERE, "apps_mask.sed")

# Configurations in table order: (name, what it is).
CONFIGS = [
    ("native", "the program alone"),
    ("shim", "through the shim, no probes (LD_LIBRARY_PATH=$BUILD/lib)"),
    ("a-fresh", "(a) entry+exit HASH counter, empty caches"),
    ("a-cached", "(a) again, caches from a-fresh"),
    ("b-fresh", "(b) memory-access counter, empty caches"),
    ("b-cached", "(b) again, cached"),
    ("c-fresh", "(c) basic-block instruction counter, empty caches"),
    ("c-cached", "(c) again, cached"),
    ("d-fresh", "(d) one ring-buffer event per block, empty caches"),
    ("d-cached", "(d) again, cached"),
    ("memcheck", "compute-sanitizer --tool memcheck, no gpuprobe (beside (b))"),
]
CONFIG_NAMES = [c for c, _ in CONFIGS]

# The five tensor-core GEMMs check against a single-threaded host GEMM (minutes of host time,
# corpus README): left out unless APPS_SLOW=1, and then run last.
SLOW = {"bf16TensorCoreGemm", "cudaTensorCoreGemm", "dmmaTensorCoreGemm", "immaTensorCoreGemm",
        "tf32TensorCoreGemm"}

# HeCBench reproductions (app-regressions): `make ARCH=sm_90`, `make run LAUNCHER=...`; pass =
# prints PASS and no FAIL. (-o main: never rebuilt inside a timed run, whatever the timestamps.)
HECBENCH_RULE = "PASS, not: FAIL"


# Named subsets (SUBSET=quick): "regressions", the six reproductions of issue 11; "quick", four of
# them (not fma-cuda, 12.6 s natively, nor zoom-cuda) and ten short samples covering the ways
# kernels arrive (runtime, driver API + fatbin/PTX, NVRTC, graphs, dynamic parallelism, cooperative
# launch, textures, a library's SASS-only kernels): about 20 s natively in all, so with 11 runs
# each and probes at 2-3x it fits one 10-minute device call with the build.
PRESETS = {
    "regressions": "chemv-cuda fft-cuda fma-cuda graphExecution-cuda groupnorm-cuda zoom-cuda",
    "quick": "fft-cuda graphExecution-cuda groupnorm-cuda chemv-cuda vectorAdd matrixMulDrv "
             "vectorAdd_nvrtc simpleTemplates jacobiCudaGraphs cdpSimpleQuicksort "
             "reductionMultiBlockCG simpleTexture ptxjit simpleCUBLAS",
}


def list_programs(corpora, subset, slow):
    """name, kind, source dir, build command, run command, verdict rule (TSV, no header).
    Build commands run in a writable copy of the source dir with NVCC and COMMON set; run
    commands run there too with GP_L set to the launcher (empty natively)."""
    progs = []
    reg = os.path.join(corpora, "app-regressions")
    if os.path.isdir(reg):
        for d in sorted(os.listdir(reg)):
            if os.path.isfile(os.path.join(reg, d, "Makefile")):
                progs.append((d, "hecbench", os.path.join(reg, d),
                              'make -s ARCH=sm_90 CC="$NVCC"',
                              'make -s -o main run ARCH=sm_90 CC="$NVCC" LAUNCHER="$GP_L"', HECBENCH_RULE))
    tsv = os.path.join(corpora, "cuda-samples", "samples.tsv")
    slow_tail = []
    if os.path.isfile(tsv):
        with open(tsv) as f:
            rows = [l.rstrip("\n").split("\t") for l in f if l.strip()]
        for r in rows[1:]:
            name, _cat, build, run, verdict = r[:5]
            p = (name, "sample", os.path.join(corpora, "cuda-samples", "samples", name), build,
                 "$GP_L " + run, verdict)
            if name in SLOW:
                if slow:
                    slow_tail.append(p)
            else:
                progs.append(p)
    progs += slow_tail
    if subset:
        s = " ".join(PRESETS.get(w, w) for w in re.split(r"[,\s]+", subset.strip()) if w)
        if re.fullmatch(r"\d+", s):
            progs = progs[:int(s)]
        elif re.fullmatch(r"\d*:\d*", s):
            a, b = s.split(":")
            progs = progs[int(a) if a else 0:int(b) if b else None]
        else:
            pats = [p for p in re.split(r"[,\s]+", s) if p]
            progs = [p for p in progs if any(fnmatch.fnmatchcase(p[0], q) for q in pats)]
    return progs


def output_text(path):
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


def verdict(rule, rc, path):
    """The corpus rule on a run's output (stdout and stderr), our own lines left out."""
    if rc == 124 or rc == 137:
        return "TIMEOUT"
    if rc > 128 and rc < 160:
        return "CRASH (signal %d)" % (rc - 128)
    text = "\n".join(l for l in output_text(path).splitlines() if not l.startswith("gpuprobe: "))
    need, _, forbid = rule.partition(", not: ")
    need = need.strip()
    if rc != 0:
        return "FAIL (exit %d)" % rc
    if need != "exit 0" and need not in text:
        return "FAIL (no '%s')" % need
    if forbid and forbid in text:
        return "FAIL ('%s' printed)" % forbid
    return "PASS"


def masked(path):
    r = subprocess.run(["sed", "-E", "-f", MASK, path], stdout=subprocess.PIPE, check=False)
    return r.stdout.decode("utf-8", "replace").splitlines()


def same_as_native(path, native, diff_path):
    if not native or not os.path.exists(native):
        return "-"
    a, b = masked(native), masked(path)
    if a == b:
        return "yes"
    import difflib
    d = list(difflib.unified_diff(a, b, "native (masked)", "this run (masked)", lineterm="", n=1))
    with open(diff_path, "w") as f:
        f.write("\n".join(d[:60]) + "\n")
    return "no"


SETUP_RE = re.compile(r"\bin ([0-9]+(?:\.[0-9]+)?) ms\b|, ([0-9]+(?:\.[0-9]+)?) ms\)")
WARN_RE = re.compile(r"disabled|skipp|falls? back|without probes|no PTX|cannot|error|fail", re.I)


def setup_ms(path):
    """First-launch set-up the shim logged (GPUPROBE_LOG=1): the sum of its timed lines ("probes:
    ... in X ms", "module N: instrumented ... in X ms", "compiled in X ms", "cubin from the cache
    (..., X ms)"); '-' when it logged none. Also its warning lines."""
    total, seen, warns = 0.0, False, []
    for l in output_text(path).splitlines():
        if not l.startswith("gpuprobe: "):
            continue
        m = SETUP_RE.search(l)
        if m and (l.startswith("gpuprobe: probes:") or l.startswith("gpuprobe: module ")
                  or l.startswith("gpuprobe: kernel ")):
            total += float(m.group(1) or m.group(2))
            seen = True
        if WARN_RE.search(l) and "first launch of" not in l:
            warns.append(l[len("gpuprobe: "):])
    return ("%.1f" % total if seen else "-"), warns


def json_lines(path):
    out = []
    try:
        with open(path, errors="replace") as f:
            for l in f:
                l = l.strip()
                if l.startswith("{"):
                    try:
                        out.append(json.loads(l))
                    except ValueError:
                        pass
    except OSError:
        return None
    return out


def last_maps(lines):
    maps = {}
    for j in lines:
        if j.get("type") in ("map", "top"):
            maps[j.get("name")] = j.get("data")
    return maps


def as_dict(data):
    if isinstance(data, dict):
        return {k: v for k, v in data.items()}
    if isinstance(data, list):   # "top" rows: key (kernel name), id, value
        return {str(e.get("key", e.get("id"))): e.get("value") for e in data}
    return {}


def check(cfg, jpath):
    """What the probes collected, checked where there is something to check."""
    probe = cfg.split("-")[0]
    if probe not in "abcd" or not jpath:
        return "-"
    lines = json_lines(jpath)
    if lines is None:
        return "no JSON output"
    if any(j.get("type") == "none" for j in lines):   # gpuprobe run: no process set up probes
        return "no probes set up (no GPU module loaded)"
    maps = last_maps(lines)
    if probe == "a":
        if "enter" not in maps or "leave" not in maps:
            return "no enter/leave maps" + (" (maps: %s)" % ",".join(sorted(maps)) if maps else "")
        e, x = as_dict(maps["enter"]), as_dict(maps["leave"])
        bad = [k for k in sorted(set(e) | set(x)) if e.get(k) != x.get(k)]
        if bad:
            k = bad[0]
            return "EXITS != ENTRIES in %d of %d kernels (%s: %s entries, %s exits)" % (
                len(bad), len(set(e) | set(x)), k, e.get(k), x.get(k))
        return "exits = entries (%d kernels, %d threads)" % (len(e), sum(v for v in e.values()
                                                                          if isinstance(v, int)))
    if probe == "b":
        d = as_dict(maps.get("by_dir"))
        if not d:
            return "no by_dir map"
        return "loads %s stores %s atomics %s" % (d.get("1", 0), d.get("2", 0), d.get("3", 0))
    if probe == "c":
        d = as_dict(maps.get("insns_by_kernel"))
        if not d:
            return "no insns_by_kernel map"
        return "%d kernels, %d instructions" % (len(d), sum(v for v in d.values() if isinstance(v, int)))
    ev = sum(1 for j in lines if j.get("type") == "event")
    lost = sum(int(j.get("count", 0)) for j in lines if j.get("type") == "lost")
    return "%d block events, %d lost" % (ev, lost)


def cmd_analyze(a):
    v = verdict(a.rule, a.rc, a.out)
    # native: the same comparison with the untimed first native run (is the masked output stable?)
    same = same_as_native(a.out, a.native, a.diff)
    ms, warns = setup_ms(a.out)
    chk = check(a.cfg, a.json)
    note = ("%d gpuprobe warning line(s), first: %s" % (len(warns), warns[0][:160])) if warns else ""
    clean = lambda s: s.replace("\t", " ").replace("\n", " ")
    print("\x1f".join(clean(x) for x in (v, same, ms, chk, note)))   # read by bash with IFS=$'\037'


# ---- the table ------------------------------------------------------------------------------

COLS = ["program", "config", "verdict", "same_as_native", "wall_s", "ratio", "first_launch_ms",
        "check", "notes"]


def read_rows(paths):
    rows = {}
    order = []
    for p in paths:
        with open(p) as f:
            head = f.readline().rstrip("\n").split("\t")
            for l in f:
                v = l.rstrip("\n").split("\t")
                r = dict(zip(head, v + [""] * (len(head) - len(v))))
                key = (r["program"], r["config"])
                if r["program"] not in order:
                    order.append(r["program"])
                rows[key] = r
    return rows, order


def fnum(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def short(v):
    if v.startswith("PASS"):
        return "PASS"
    if v.startswith("FAIL"):
        return "**FAIL**"
    if v.startswith("TIMEOUT"):
        return "**TIMEOUT**"
    if v.startswith("CRASH"):
        return "**CRASH**"
    return v.split(" (")[0]


def cmd_table(a):
    rows, order = read_rows(a.tsv)
    dev = open(a.device).read().strip() if a.device and os.path.exists(a.device) else "unknown device"
    cfgs = [c for c in CONFIG_NAMES if any(k[1] == c for k in rows)]
    native_pass = [p for p in order if rows.get((p, "native"), {}).get("verdict") == "PASS"]
    built = [p for p in order if rows.get((p, "native"), {}).get("verdict") != "BUILD FAILED"]
    L = []
    L.append("### Real programs under probes (tests/gpu/apps.sh)")
    L.append("")
    L.append("%s. %d programs (%d built, %d pass natively); one program at a time on the GPU; whole-run "
             "wall time over native (native: seconds)." % (dev, len(order), len(built), len(native_pass)))
    L.append("")
    # summary per configuration
    L.append("| configuration | run | pass (of native passes) | same output as native | median ratio | worst ratio "
             "| median set-up ms (shim's log) |")
    L.append("| --- | --- | --- | --- | --- | --- | --- |")
    med = {}
    worst = {}
    for c in cfgs:
        if c == "native":
            continue
        ran = [p for p in order if (p, c) in rows and rows[(p, c)]["verdict"] not in ("not run", "BUILD FAILED")]
        ok = [p for p in native_pass if rows.get((p, c), {}).get("verdict") == "PASS"]
        counted = [p for p in native_pass if (p, c) in rows and rows[(p, c)]["verdict"] != "not run"]
        same = [p for p in counted if rows[(p, c)].get("same_as_native") == "yes"]
        ratios = [(fnum(rows[(p, c)]["ratio"]), p) for p in ok if fnum(rows[(p, c)]["ratio"]) is not None]
        m = statistics.median([r for r, _ in ratios]) if ratios else None
        w = max(ratios) if ratios else None
        med[c], worst[c] = m, w
        fl = [fnum(rows[(p, c)]["first_launch_ms"]) for p in ok]
        fl = [x for x in fl if x is not None]
        L.append("| %s | %d | %d of %d | %d of %d | %s | %s | %s |" % (
            c, len(ran), len(ok), len(counted), len(same), len(counted),
            "%.3f" % m if m is not None else "-", "%.2f (%s)" % w if w else "-",
            "%.1f" % statistics.median(fl) if fl else "-"))
    L.append("")

    def tgt(label, c, limit, value=None):
        v = value if value is not None else med.get(c)
        if v is None:
            return "- %s: not measured" % label
        return "- %s: %.3f (target <= %s: %s)" % (label, v, limit, "met" if v <= limit else "**not met**")
    L.append("Issue 11's targets (medians over programs that pass natively and in that configuration):")
    L.append(tgt("no probes, median", "shim", 1.01))
    L.append(tgt("(a) entry+exit cached, median", "a-cached", 1.10))
    L.append(tgt("(a) entry+exit fresh, median", "a-fresh", 1.5))
    L.append(tgt("(b) memory counter cached, median", "b-cached", 1.3))
    if worst.get("a-cached"):
        L.append(tgt("(a) cached, worst program (%s)" % worst["a-cached"][1], "a-cached", 2.0,
                     worst["a-cached"][0]))
    if med.get("memcheck") is not None:
        L.append("- compute-sanitizer memcheck, median (beside (b) cached %s): %.2f" % (
            "%.3f" % med["b-cached"] if med.get("b-cached") else "-", med["memcheck"]))
    varies = [p for p in order if rows.get((p, "native"), {}).get("same_as_native") == "no"]
    if varies:
        L.append("- native output (masked) differs between two native runs of: %s (their 'output "
                 "differs' marks are not evidence)" % ", ".join(varies))
    all_ok = all(rows.get((p, c), {}).get("verdict") in ("PASS", "not run")
                 for p in native_pass for c in cfgs if c != "memcheck")
    L.append("- every program that passes natively passes in every configuration run: %s" %
             ("yes" if all_ok else "**no**"))
    L.append("")
    print("\n".join(L))   # the summary: apps.sh's output ends with it (the device tool returns the tail)
    # matrix
    L.append("| program | " + " | ".join(cfgs) + " |")
    L.append("| --- |" + " --- |" * len(cfgs))
    for p in order:
        cells = []
        for c in cfgs:
            r = rows.get((p, c))
            if not r:
                cells.append("")
                continue
            v = r["verdict"]
            if c == "native":
                cells.append(("%s %s s" % (short(v), r["wall_s"]) if r["wall_s"] else short(v)) +
                             (" (output varies)" if r.get("same_as_native") == "no" else ""))
                continue
            s = short(v)
            if r.get("ratio") and v not in ("not run",):
                s += " %s" % r["ratio"]
            if r.get("same_as_native") == "no":
                s += " (output differs)"
            if r.get("check", "").startswith(("EXITS", "no ")):
                s += " (" + r["check"].split(" (")[0] + ")"
            cells.append(s)
        L.append("| %s | %s |" % (p, " | ".join(cells)))
    L.append("")
    L.append("Configurations: " + "; ".join("%s: %s" % (c, d) for c, d in CONFIGS if c in cfgs) +
             ". Output compared after tests/gpu/apps_mask.sed (timing/throughput numbers, dates, "
             "addresses masked); ratio = whole-run wall time / native's. Per-run details "
             "(first-launch set-up ms from GPUPROBE_LOG=1, probe checks) in apps.tsv.")
    with open(a.out_md, "w") as f:
        f.write("\n".join(L) + "\n")


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("list")
    p.add_argument("corpora")
    p.add_argument("subset", nargs="?", default="")
    p.add_argument("--slow", action="store_true")
    p = sub.add_parser("analyze")
    p.add_argument("--cfg", required=True)
    p.add_argument("--rule", required=True)
    p.add_argument("--rc", type=int, required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--native", default="")
    p.add_argument("--diff", default="/dev/null")
    p.add_argument("--json", default="")
    p = sub.add_parser("table")
    p.add_argument("out_md")
    p.add_argument("tsv", nargs="+")
    p.add_argument("--device", default="")
    a = ap.parse_args()
    if a.cmd == "list":
        for prog in list_programs(a.corpora, a.subset, a.slow):
            print("\t".join(prog))
    elif a.cmd == "analyze":
        cmd_analyze(a)
    else:
        cmd_table(a)


if __name__ == "__main__":
    main()
