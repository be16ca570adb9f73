#!/usr/bin/env python3
"""Decode a trace of gpuprobe run --trace and check it (tests/trace).

A Perfetto trace is decoded here from the protobuf wire format (Perfetto's published field
numbers), independently of gpuprobe's own reader; a Chrome trace with json. Both become one
list of tracks and spans, and the checks are the same:

  check_trace.py app FILE [--api-only GLOB]   trace_app.c's run over fake_driver.c
  check_trace.py capture FILE                 gen_capture.py's synthetic capture
  check_trace.py capture-noclock FILE         the same without its clock record
  check_trace.py generic FILE [--min-launches N] [--kernels 'NAME=LAUNCHES;...'] [--blocks N]
                                              a run on a GPU (tests/gpu/trace.sh)
Exit 0 when every check passes; each failure is one line "FAIL: ...".
"""
import fnmatch
import json
import struct
import sys

fails = []


def check(cond, what):
    if not cond:
        fails.append(what)
    return cond


# ---- protobuf wire format ------------------------------------------------------------------

def varint(b, i):
    v, shift = 0, 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        if c < 0x80:
            return v, i
        shift += 7


def fields(b):
    """(field number, wire type, value) of a message's bytes."""
    i, out = 0, []
    while i < len(b):
        key, i = varint(b, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 1:
            v = struct.unpack_from("<Q", b, i)[0]
            i += 8
        elif wt == 2:
            n, i = varint(b, i)
            v = bytes(b[i:i + n])
            i += n
        elif wt == 5:
            v = struct.unpack_from("<I", b, i)[0]
            i += 4
        else:
            raise ValueError("wire type %d" % wt)
        out.append((num, wt, v))
    return out


def annotation(b):
    name, val = None, None
    for num, wt, v in fields(b):
        if num == 12:   # array_values
            val = (val if isinstance(val, list) else []) + [annotation(v)[1]]
        elif num == 10:
            name = v.decode()
        elif num in (3, 4):
            val = v if num == 3 else (v - (1 << 64) if v >= 1 << 63 else v)
        elif num == 2:
            val = bool(v)
        elif num == 5:
            val = struct.unpack("<d", struct.pack("<Q", v))[0]
        elif num == 6:
            val = v.decode()
    if isinstance(val, str) and val[:1] in "[{":
        try:
            val = json.loads(val)
        except ValueError:
            pass
    return name, val


def load_pftrace(path):
    data = open(path, "rb").read()
    tracks, spans, stacks = {}, [], {}
    last_ts = {}
    for num, wt, pkt in fields(data):
        check(num == 1 and wt == 2, "Trace holds only packets (field 1)")
        ts, te, td = None, None, None
        for n, w, v in fields(pkt):
            if n == 8:
                ts = v
            elif n == 11:
                te = v
            elif n == 60:
                td = v
        if td is not None:
            t = {"kind": "track", "name": "", "parent": 0, "pid": None, "tid": None}
            for n, w, v in fields(td):
                if n == 1:
                    t["uuid"] = v
                elif n == 2:
                    t["name"] = v.decode()
                elif n == 5:
                    t["parent"] = v
                elif n == 3:
                    t["kind"] = "process"
                    for a, _, x in fields(v):
                        if a == 1:
                            t["pid"] = x
                        elif a == 6:
                            t["name"] = x.decode()
                elif n == 4:
                    t["kind"] = "thread"
                    for a, _, x in fields(v):
                        if a == 1:
                            t["pid"] = x
                        elif a == 2:
                            t["tid"] = x
                        elif a == 5:
                            t["name"] = x.decode()
            tracks[t["uuid"]] = t
        if te is not None:
            ev = {"type": 0, "track": 0, "name": None, "cat": None, "args": {}, "flow_out": [],
                  "flow_in": []}
            for n, w, v in fields(te):
                if n == 9:
                    ev["type"] = v
                elif n == 11:
                    ev["track"] = v
                elif n == 23:
                    ev["name"] = v.decode()
                elif n == 22:
                    ev["cat"] = v.decode()
                elif n == 4:
                    k, x = annotation(v)
                    ev["args"][k] = x
                elif n == 47:
                    check(w == 1, "flow_ids are fixed64")
                    ev["flow_out"].append(v)
                elif n == 48:
                    check(w == 1, "terminating_flow_ids are fixed64")
                    ev["flow_in"].append(v)
            tr = ev["track"]
            check(tr in tracks, "event on a described track (%s)" % ev["name"])
            check(ts >= last_ts.get(tr, 0), "events of a track in time order")
            last_ts[tr] = ts
            st = stacks.setdefault(tr, [])
            if ev["type"] == 1:
                ev["ts"] = ts
                st.append(ev)
            elif ev["type"] == 2:
                if check(st, "a slice end matches a begin on its track"):
                    b = st.pop()
                    b["dur"] = ts - b["ts"]
                    spans.append(b)
            elif ev["type"] == 3:
                ev["ts"], ev["dur"] = ts, None
                spans.append(ev)
    for tr, st in stacks.items():
        check(not st, "every slice on track %s ends" % tracks.get(tr, {}).get("name"))
    out = []
    for s in spans:
        t = tracks[s["track"]]
        out.append({"track": trackname(tracks, t), "kind": t["kind"], "pid": t["pid"],
                    "tid": t["tid"], "name": s["name"], "cat": s["cat"], "ts": s["ts"],
                    "dur": s["dur"], "args": s["args"],
                    "flow_out": s["flow_out"][0] if s["flow_out"] else None,
                    "flow_in": s["flow_in"][0] if s["flow_in"] else None})
    return out, [trackname(tracks, t) for t in tracks.values()]


def trackname(tracks, t):
    p = tracks.get(t["parent"])
    return (trackname(tracks, p) + "/" if p else "") + t["name"]


def load_chrome(path):
    d = json.load(open(path))
    base = d["otherData"]["base_ns"]
    names, procs = {}, {}
    for e in d["traceEvents"]:
        if e["ph"] == "M" and e["name"] == "process_name":
            procs[e["pid"]] = e["args"]["name"]
        elif e["ph"] == "M" and e["name"] == "thread_name":
            names[(e["pid"], e["tid"])] = e["args"]["name"]
    out, flows = [], []
    for e in d["traceEvents"]:
        if e["ph"] in ("X", "i"):
            key = (e["pid"], e["tid"])
            gpu = procs.get(e["pid"]) == "GPU 0"
            tname = names.get(key, "?")
            track = (procs.get(e["pid"], "?") + "/" + tname) if not gpu or tname != "GPU 0" else "GPU 0"
            if gpu and tname.startswith("SM "):
                track = "GPU 0/" + tname
            out.append({"track": track, "kind": "thread" if not gpu else "gpu", "pid": e["pid"],
                        "tid": e["tid"], "name": e["name"], "cat": e["cat"],
                        "ts": round(e["ts"] * 1000) + base,
                        "dur": round(e["dur"] * 1000) if e["ph"] == "X" else None,
                        "args": e.get("args", {}), "flow_out": None, "flow_in": None})
        elif e["ph"] in ("s", "f"):
            flows.append(e)
    for f in flows:
        ts = round(f["ts"] * 1000) + base
        hit = [s for s in out if s["pid"] == f["pid"] and s["tid"] == f["tid"] and s["ts"] == ts
               and s["dur"] is not None]
        if check(len(hit) >= 1, "flow %s %s binds to a span" % (f["ph"], f["id"])):
            hit[0]["flow_in" if f["ph"] == "f" else "flow_out"] = int(f["id"], 16)
    return out, sorted(set(s["track"] for s in out))


def nesting(spans):
    """Spans on a track nest or are apart."""
    by = {}
    for s in spans:
        if s["dur"] is not None:
            by.setdefault(s["track"], []).append(s)
    for track, lst in by.items():
        lst.sort(key=lambda s: (s["ts"], -s["dur"]))
        stack = []
        for s in lst:
            while stack and stack[-1] <= s["ts"]:
                stack.pop()
            check(not stack or s["ts"] + s["dur"] <= stack[-1],
                  "span %s on %s nests in its parent or stands apart" % (s["name"], track))
            stack.append(s["ts"] + s["dur"])


# ---- checks --------------------------------------------------------------------------------

def check_app(spans, api_only):
    nesting(spans)
    threads = {}
    for s in spans:
        if s["cat"] in ("api", "launch"):
            threads.setdefault(s["track"], []).append(s)
    for lst in threads.values():
        lst.sort(key=lambda s: s["ts"])
    names = {t: [s["name"] for s in lst] for t, lst in threads.items()}
    worker = ["cuModuleLoadData", "cuModuleGetFunction", "cuMemAlloc_v2", "cuMemcpyHtoD_v2",
              "cuLaunchKernel", "cuLaunchKernel", "cuCtxSynchronize", "cuMemcpyDtoH_v2",
              "cuMemFree_v2"]
    main = ["cuInit", "cuDeviceGet", "cuDevicePrimaryCtxRetain", "cuCtxSetCurrent"]
    if api_only:
        worker = [n for n in worker if n == "cuLaunchKernel" or fnmatch.fnmatch(n, api_only)]
        main = [n for n in main if fnmatch.fnmatch(n, api_only)]
    want = sorted([worker, worker] + ([main] if main else []))
    check(sorted(names.values()) == want,
          "thread tracks' driver calls in order: got %s" % sorted(names.values()))
    check(all("/" in t and t.rsplit("/", 1)[0].endswith("trace_app") for t in threads),
          "thread tracks under the process ./trace_app: %s" % list(threads))
    launches = sorted((s for s in spans if s["cat"] == "launch"), key=lambda s: s["ts"])
    kernels = sorted((s for s in spans if s["cat"] == "kernel"), key=lambda s: s["ts"])
    check([s["args"].get("kernel") for s in launches] == ["scaleA(float*)"] * 2 + ["scaleB(float*)"] * 2,
          "launches name their kernels, demangled: %s" % [s["args"].get("kernel") for s in launches])
    check(all(s["args"].get("grid") == [4, 1, 1] and s["args"].get("block") == [32, 1, 1] for s in launches),
          "launches carry grid [4,1,1] and block [32,1,1]")
    check([s["name"] for s in kernels] == ["scaleA(float*)"] * 2 + ["scaleB(float*)"] * 2,
          "GPU 0 has the 4 kernels in launch order: %s" % [s["name"] for s in kernels])
    check(all(s["track"] == "GPU 0" for s in kernels), "kernels on the GPU's track")
    # the fake GPU runs each kernel 400 us (grid.x * 100 us) after the one before it
    check(all(s["dur"] >= 380000 for s in kernels),
          "each kernel span covers its 400 us run: %s" % [s["dur"] for s in kernels])
    for a, b in zip(kernels, kernels[1:]):
        check(b["ts"] >= a["ts"] + a["dur"], "kernels of one stream do not overlap")
    by_flow = {s["flow_in"]: s for s in kernels if s["flow_in"]}
    for l in launches:
        k = by_flow.get(l["flow_out"])
        if check(l["flow_out"] and k, "launch %s has a flow to a kernel" % l["args"].get("launch")):
            check(k["args"].get("launch") == l["args"].get("launch"), "the flow reaches its own launch's kernel")
            check(k["ts"] >= l["ts"], "a kernel starts after its launch call began")
    check(len(by_flow) == 4, "4 flows")


def check_capture(spans, off):
    """off: the device-to-host offset the trace must have applied (1000 with the clock record;
    without it the first block starts where the first launch call ended: -4000)."""
    nesting(spans)
    blocks = sorted((s for s in spans if s["cat"] == "block"), key=lambda s: (s["track"], s["ts"]))
    got = [(s["track"], s["ts"], s["dur"], s["args"].get("block")) for s in blocks]
    want = [("GPU 0/SM 3", 2009000 + off, 20000, [0, 0, 0]), ("GPU 0/SM 3", 2039000 + off, 10000, [2, 0, 0]),
            ("GPU 0/SM 5", 2014000 + off, 30000, [1, 0, 0])]
    check(got == want, "block spans per SM on the corrected clock: %s" % got)
    kernels = [s for s in spans if s["cat"] == "kernel"]
    if check(len(kernels) == 1, "one kernel span: %d" % len(kernels)):
        k = kernels[0]
        check((k["name"], k["ts"], k["dur"]) == ("foo(float*)", 2009000 + off, 40000),
              "the kernel spans its first block's start to its last block's end: %s" % ((k["name"], k["ts"], k["dur"]),))
        check(k["args"].get("timed_by") == "block probes", "timed by the block probes")
        launch = [s for s in spans if s["cat"] == "launch"]
        check(len(launch) == 1 and launch[0]["flow_out"] == k["flow_in"] and k["flow_in"],
              "the launch's flow ends at the kernel")
    evs = [s for s in spans if s["cat"] == "event"]
    typed = [s for s in evs if s["name"] == "events"]
    if check(len(typed) == 1, "one typed ring record: %d" % len(typed)):
        a = typed[0]["args"]
        check(typed[0]["track"] == "GPU 0/SM 5", "on its SM's track (ring 5)")
        check(typed[0]["ts"] == 2019000 + off, "at its ns field + the clock offset: %s" % typed[0]["ts"])
        check((a.get("ns"), a.get("sm"), a.get("delta"), a.get("tag"), a.get("lanes")) ==
              (2019000, 5, -1, "begin", [1, 2]), "its fields as typed arguments: %s" % a)
    maps = [s for s in spans if s["cat"] == "map"]
    rec = maps[0]["args"].get("record") if maps else None
    rec = json.loads(rec) if isinstance(rec, str) else rec
    check(len(maps) == 1 and maps[0]["name"] == "@lat" and rec["data"][0]["count"] == 5,
          "the map's final record on the maps track: %s" % [(m["name"], m["args"]) for m in maps])


def check_generic(spans, opts):
    """Any real run: nesting; every launch that got a kernel span is joined to it by a flow and
    precedes it; blocks lie inside their kernel (device times on the host's clock); the kernels
    named are there with the number of launches asked for; with --blocks N, each launch of them
    was timed by its N blocks."""
    nesting(spans)
    launches = [s for s in spans if s["cat"] == "launch"]
    kernels = [s for s in spans if s["cat"] == "kernel"]
    blocks = [s for s in spans if s["cat"] == "block"]
    by_flow = {s["flow_in"]: s for s in kernels if s["flow_in"]}
    joined = 0
    for l in launches:
        k = by_flow.get(l["flow_out"])
        if not k:
            continue
        joined += 1
        check(k["args"].get("launch") == l["args"].get("launch"), "launch %s: its flow reaches its own kernel" % l["args"].get("launch"))
        check(k["ts"] >= l["ts"], "launch %s (%s): the kernel starts %d ns after the launch call began"
              % (l["args"].get("launch"), k["name"], k["ts"] - l["ts"]))
    check(len(kernels) == joined, "every kernel span is joined to its launch: %d kernels, %d joined" % (len(kernels), joined))
    min_launches = int(opts.get("--min-launches", "1"))
    check(len(launches) >= min_launches, "at least %d launches: %d" % (min_launches, len(launches)))
    check(len(kernels) == len(launches), "every launch has its kernel span: %d launches, %d kernels"
          % (len(launches), len(kernels)))
    want = [w for w in opts.get("--kernels", "").split(";") if w]
    for w in want:
        name, n = w.rsplit("=", 1)
        got = [k for k in kernels if k["name"] == name]
        check(len(got) == int(n), "kernel %s: %s spans, expected %s" % (name, len(got), n))
        nb = opts.get("--blocks")
        for k in got:
            if nb:
                check(k["args"].get("timed_by") == "block probes" and k["args"].get("blocks_seen") == int(nb),
                      "kernel %s launch %s timed by its %s blocks: %s" % (name, k["args"].get("launch"), nb, k["args"]))
                mine = [b for b in blocks if b["args"].get("launch") == k["args"].get("launch")]
                check(len(mine) == int(nb), "launch %s: %d block spans" % (k["args"].get("launch"), len(mine)))
                check(all(k["ts"] <= b["ts"] and b["ts"] + b["dur"] <= k["ts"] + k["dur"] for b in mine),
                      "launch %s: its blocks lie inside its kernel span" % k["args"].get("launch"))
                check(all(b["track"].startswith("GPU 0/SM ") for b in mine), "blocks on SM tracks")
    print("     %s: %d launches, %d kernels (%d joined by flows), %d blocks, %d driver calls"
          % (opts["path"], len(launches), len(kernels), joined, len(blocks),
             len([s for s in spans if s["cat"] == "api"])))


def main():
    mode, path = sys.argv[1], sys.argv[2]
    api_only = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--api-only" else None
    opts = dict(zip(sys.argv[3::2], sys.argv[4::2]))
    opts["path"] = path
    try:
        spans, tracks = load_pftrace(path) if not path.endswith(".json") else load_chrome(path)
    except (OSError, ValueError, KeyError, IndexError, struct.error) as e:
        print("FAIL: %s: does not decode: %s" % (path, e))
        return 1
    if mode == "generic":
        check_generic(spans, opts)
    elif mode == "app":
        check_app(spans, api_only)
    else:
        check_capture(spans, 1000 if mode == "capture" else -4000)
    for f in fails:
        print("FAIL: %s: %s" % (path, f))
    if not fails:
        print("ok   %s: %d tracks, %d spans and instants" % (path, len(tracks), len(spans)))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
