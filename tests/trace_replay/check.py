#!/usr/bin/env python3
"""Replay a warp-record memory trace of patterns.cu against the accesses the program makes.

usage: check.py PATTERNS_STDOUT TRACE_JSON [--divergent]
       check.py --summary TRACE_JSON      (any program: records, lane accesses, strides, lost)
       check.py --vectoradd TRACE_JSON    (cuda-samples' vectorAdd under vectoradd.bpf.o: the
                                           kernel's A, B, C from the params ring; every lane's
                                           address checked)

PATTERNS_STDOUT is what patterns printed (its buffers' addresses and launch shape), TRACE_JSON
the `gpuprobe run --json` output of replay.bpf.o (one JSON object per line; ring records are
{"type": "event", "data": HEX}) or `gpuprobe decode --json` of a `gpuprobe run --output` capture
({"map": .., "data": HEX} and a {"type": "summary", "lost": N} line per map). Every record is a
struct gp_warp_record
(include/gpuprobe/warp.h); check.py computes, for every warp of every launch, which lanes access
which address at each access of each kernel, and requires exactly one record per warp access
with exactly those lanes and addresses, no other record, and nothing lost. Prints one PASS or
FAIL line per kernel and a summary; exit 0 when all pass."""
import json
import struct
import sys

GLOBAL, SHARED = 1, 2
LOAD, STORE = 1, 2
HDR = struct.Struct("<QQIiIHBB")


def fnv1a(s):
    h = 2166136261
    for c in s.encode():
        h = ((h ^ c) * 16777619) & 0xFFFFFFFF
    return h


def mix(i):
    h = ((i ^ (i >> 3)) * 0x9E3779B1) & 0xFFFFFFFF
    return h ^ (h >> 15)


def decode(data):
    tag, base, mask, stride, block, warp, nvals, flags = HDR.unpack_from(data, 0)
    lanes = [l for l in range(32) if mask >> l & 1]
    if not lanes:
        raise ValueError("record with no lanes")
    if nvals == 0:
        vals = {l: (base + stride * (l - lanes[0])) & (2**64 - 1) for l in lanes}
    else:
        if nvals != len(lanes) or len(data) < HDR.size + 8 * nvals:
            raise ValueError(f"record with {nvals} values for {len(lanes)} lanes, {len(data)} bytes")
        vals = {l: struct.unpack_from("<Q", data, HDR.size + 8 * k)[0] for k, l in enumerate(lanes)}
    return {"kernel": tag >> 32, "space": tag >> 24 & 0xFF, "dir": tag >> 16 & 0xFF, "size": tag & 0xFFFF,
            "block": block, "warp": warp, "mask": mask, "vals": vals, "nvals": nvals, "base": base}


def expected(p, divergent):
    """{kernel name: {(space, dir, block, warp): {lane: address or ('shared', offset)}}}"""
    n, blocks, inb, outb = p["n"], p["blocks"], p["in"], p["out"]
    out = {}
    names = ["k_coalesced", "k_strided", "k_random", "k_banks"] + (["k_partial"] if divergent else [])
    for k in names:
        acc = {}
        for b in range(blocks):
            for w in range(8):
                def put(space, d, f, lanes=range(32)):
                    acc[(space, d, b, w)] = {l: f(b * 256 + w * 32 + l, l) for l in lanes}
                if k == "k_coalesced":
                    put(GLOBAL, LOAD, lambda i, l: inb + 4 * i)
                    put(GLOBAL, STORE, lambda i, l: outb + 4 * i)
                elif k == "k_strided":
                    put(GLOBAL, LOAD, lambda i, l: inb + 28 * i)
                    put(GLOBAL, STORE, lambda i, l: outb + 4 * i)
                elif k == "k_random":
                    put(GLOBAL, LOAD, lambda i, l: inb + 4 * (mix(i) & (n - 1)))
                    put(GLOBAL, STORE, lambda i, l: outb + 4 * i)
                elif k == "k_banks":
                    put(SHARED, STORE, lambda i, l: ("shared", 132 * l))
                    put(SHARED, LOAD, lambda i, l: ("shared", 128 * l))
                    put(GLOBAL, STORE, lambda i, l: outb + 4 * i)
                elif k == "k_partial":
                    lanes = [l for l in range(32) if l % 3]
                    put(GLOBAL, LOAD, lambda i, l: inb + 4 * i, lanes)
                    put(GLOBAL, STORE, lambda i, l: outb + 4 * i, lanes)
        out[k] = acc
    return out


def read_trace(path, mapname="trace"):
    """The trace's records (decoded), the lost count, and the malformed records' count."""
    recs, lost, bad = [], 0, 0
    for line in open(path):
        line = line.strip()
        if not line.startswith("{"):
            continue
        j = json.loads(line)
        if j.get("type") in ("lost", "summary"):
            if j.get("map", mapname) == mapname:
                lost += int(j.get("count", j.get("lost", 0)))
        elif j.get("type", "event") == "event" and j.get("map") == mapname and "data" in j:
            try:
                recs.append(decode(bytes.fromhex(j["data"])))
            except ValueError as e:
                bad += 1
                print(f"FAIL: malformed record: {e}")
    return recs, lost, bad


def summary(path):
    recs, lost, bad = read_trace(path)
    lanes = sum(bin(r["mask"]).count("1") for r in recs)
    regular = sum(1 for r in recs if r["nvals"] == 0)
    strides = {}
    for r in recs:
        if r["nvals"] == 0:
            st = 0 if r["mask"] & (r["mask"] - 1) == 0 else \
                r["vals"][max(r["vals"])] - r["vals"][min(r["vals"])]
            k = st // max(1, max(r["vals"]) - min(r["vals"])) if st else 0
            strides[k] = strides.get(k, 0) + 1
    nbytes = sum(8 + HDR.size + 8 * r["nvals"] for r in recs)
    print(f"SUMMARY records {len(recs)} lane_accesses {lanes} regular {regular} "
          f"lost {lost} malformed {bad} ring_bytes {nbytes} "
          f"strides {' '.join(f'{k}:{v}' for k, v in sorted(strides.items()))}")
    return 0 if not bad else 1


def vectoradd(path):
    """vectorAdd(A, B, C, n): thread i < n loads A[i] and B[i] and stores C[i], 256 per block."""
    launches = []
    for line in open(path):
        line = line.strip()
        if line.startswith("{"):
            j = json.loads(line)
            if j.get("map") == "params" and "data" in j:
                a, b, c, n, _ = struct.unpack_from("<QQQII", bytes.fromhex(j["data"]))
                launches.append((a, b, c, n))
    recs, lost, bad = read_trace(path)
    if len(launches) != 1:
        print(f"FAIL vectorAdd: {len(launches)} launches' parameters, expected 1")
        return 1
    a, b, c, n = launches[0]
    want = {}
    for i0 in range(0, n, 32):
        blk, w = i0 // 256, i0 % 256 // 32
        lanes = [l for l in range(32) if i0 + l < n]
        for d, bases in ((LOAD, (a, b)), (STORE, (c,))):
            for base in bases:
                want[(d, blk, w, base)] = {l: base + 4 * (i0 + l) for l in lanes}
    got, problems = {}, []
    for r in recs:
        lo = min(r["vals"])
        i0 = r["block"] * 256 + r["warp"] * 32
        base = r["vals"][lo] - 4 * (i0 + lo)   # the array this record's lowest lane accessed
        key = (r["dir"], r["block"], r["warp"], base)
        if key in got:
            problems.append(f"{key}: two records")
        got[key] = r
    for key, lanes in want.items():
        r = got.get(key)
        if not r:
            problems.append(f"{key}: no record")
        elif r["mask"] != sum(1 << l for l in lanes) or r["vals"] != lanes or r["size"] != 4:
            problems.append(f"{key}: mask {r['mask']:#x}, values differ")
    extra = len(set(got) - set(want))
    if extra:
        problems.append(f"{extra} records of accesses vectorAdd does not make")
    lanes_total = sum(len(v) for v in want.values())
    if problems or lost or bad:
        print(f"FAIL vectorAdd: {'; '.join(problems[:4])} (+{max(0, len(problems) - 4)}), lost {lost}, malformed {bad}")
        return 1
    print(f"PASS vectorAdd: A={a:#x} B={b:#x} C={c:#x} n={n}: {len(recs)} warp records, one per warp "
          f"access, {lanes_total} lane addresses as the kernel computes them, 0 lost")
    return 0


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if "--vectoradd" in sys.argv and len(args) == 1:
        return vectoradd(args[0])
    divergent = "--divergent" in sys.argv
    if "--summary" in sys.argv and len(args) == 1:
        return summary(args[0])
    if len(args) != 2:
        print(__doc__)
        return 2
    p = None
    for line in open(args[0]):
        f = line.split()
        if f[:2] == ["PATTERNS", "n"]:
            p = {"n": int(f[2]), "blocks": int(f[4]), "in": int(f[8], 16), "out": int(f[10], 16)}
    if not p:
        print("FAIL: no PATTERNS line in the program's output")
        return 1
    recs, lost, bad = read_trace(args[1])
    exp = expected(p, divergent)
    byhash = {fnv1a(k): k for k in exp}
    got = {k: {} for k in exp}
    stray = 0
    for r in recs:
        k = byhash.get(r["kernel"])
        if k is None:
            stray += 1
            continue
        got[k].setdefault((r["space"], r["dir"], r["block"], r["warp"]), []).append(r)
    fails = bad + (1 if stray else 0) + (1 if lost else 0)
    if stray:
        print(f"FAIL: {stray} records of kernels the program does not have")
    if lost:
        print(f"FAIL: {lost} records lost in a lossless ring")
    total_lanes = 0
    for k, acc in exp.items():
        problems = []
        sbase = {}
        shapes = {"regular": 0, "listed": 0}
        for key, lanes in acc.items():
            rs = got[k].get(key, [])
            if len(rs) != 1:
                problems.append(f"{key}: {len(rs)} records, expected 1")
                continue
            r = rs[0]
            mask = sum(1 << l for l in lanes)
            if r["mask"] != mask:
                problems.append(f"{key}: mask {r['mask']:#x}, expected {mask:#x}")
                continue
            if r["size"] != 4:
                problems.append(f"{key}: size {r['size']}, expected 4")
            shapes["listed" if r["nvals"] else "regular"] += 1
            for l, want in lanes.items():
                have = r["vals"][l]
                if isinstance(want, tuple):   # shared: offsets from the array's base
                    base = sbase.setdefault(key[0], have - want[1])
                    want = base + want[1]
                if have != want:
                    problems.append(f"{key} lane {l}: {have:#x}, expected {want:#x}")
                    break
            total_lanes += len(lanes)
        extra = sum(len(v) for kk, v in got[k].items() if kk not in acc)
        if extra:
            problems.append(f"{extra} records of accesses the kernel does not make")
        # the record shapes the helper must choose: base + stride for regular lanes, values
        # listed for the random gather
        want_listed = len(acc) // 2 if k == "k_random" else 0
        if not problems and shapes["listed"] != want_listed:
            problems.append(f"{shapes['listed']} records list their values, expected {want_listed}")
        if problems:
            fails += 1
            print(f"FAIL {k}: " + "; ".join(problems[:4]) + (f" (+{len(problems) - 4})" if len(problems) > 4 else ""))
        else:
            print(f"PASS {k}: {len(acc)} warp accesses, each one record with the addresses the "
                  f"program computes ({shapes['regular']} base+stride, {shapes['listed']} listed)")
    nbytes = sum(8 + HDR.size + 8 * r["nvals"] for r in recs)
    print(f"records {len(recs)} lane_accesses {total_lanes} ring_bytes {nbytes} "
          f"bytes_per_access {nbytes / max(total_lanes, 1):.2f} lost {lost}")
    print("ALL PASS" if not fails else f"{fails} FAILED")
    return 0 if not fails else 1


if __name__ == "__main__":
    sys.exit(main())
