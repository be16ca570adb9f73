#!/usr/bin/env python3
"""A synthetic capture for tests/trace (capture_test.sh): the records gpuprobe run reads for a
trace (the shim's trace records and the --json stream's), with device times known exactly:
one launch of foo(float*) whose 3 blocks ran on SMs 3 and 5 (include/gpuprobe/tools/blocks.bpf.c
records), a typed ring record of typed.bpf.c's `events`, a clock offset of 1000 ns
(CLOCK_REALTIME - %globaltimer) and a histogram map. check_trace.py capture knows the answers.
usage: gen_capture.py OUT.jsonl [--no-clock]"""
import json
import struct
import sys


def fnv(s):
    h = 2166136261
    for c in s.encode():
        h = ((h ^ c) * 16777619) & 0xFFFFFFFF
    return h


def block(sm, b, end, ns):
    data = struct.pack("<IIIIIIQ", fnv("_Z3fooPf"), sm, b, 0, 0, end, ns)
    return {"type": "event", "map": "trace_blocks", "ring": sm, "data": data.hex()}


recs = [
    {"type": "process", "pid": 4242, "ppid": 4200},
    {"type": "trace_process", "pid": 4242, "ppid": 4200, "clock": "CLOCK_REALTIME", "ts": 1000000, "cmd": "./app"},
    {"type": "thread", "pid": 4242, "tid": 4242, "name": "app"},
    {"type": "api", "pid": 4242, "tid": 4242, "name": "cuInit", "ts": 1000000, "dur": 500, "rc": 0},
    {"type": "launch", "pid": 4242, "tid": 4242, "name": "cuLaunchKernel", "ts": 2000000, "dur": 5000,
     "rc": 0, "id": 1, "kernel": "_Z3fooPf", "grid": [3, 1, 1], "block": [32, 1, 1], "smem": 0,
     "stream": "(nil)"},
    {"type": "clock", "corrected": True, "offset_ns": 1000, "uncertainty_ns": 50},
    block(3, 0, 0, 2009000), block(5, 1, 0, 2014000), block(3, 0, 1, 2029000),
    block(3, 2, 0, 2039000), block(5, 1, 1, 2044000), block(3, 2, 1, 2049000),
    {"type": "event", "map": "events", "ring": 5,
     "data": struct.pack("<QIi8sHHI", 2019000, 5, -1, b"begin", 1, 2, 0).hex()},
    {"type": "kernel_done", "pid": 4242, "id": 1, "ts": 2100000},
    {"type": "hist", "name": "lat", "time": 1.0, "data": [{"min": 2, "max": 3, "count": 5}]},
]
if "--no-clock" in sys.argv:
    recs = [r for r in recs if r["type"] != "clock"]
with open(sys.argv[1], "w") as f:
    for r in recs:
        f.write(json.dumps(r) + "\n")
