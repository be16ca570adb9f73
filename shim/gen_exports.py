#!/usr/bin/env python3
"""Generate the shim's export list and forwarding wrappers from the CUDA headers.

The real driver exports each API function under every name the headers ever mapped it to:
the plain name, _v2/_v3 forms (the header's "#define cuXxx cuXxx_v2"), the per-thread
default-stream forms (_ptds/_ptsz, selected by CUDA_API_PER_THREAD_DEFAULT_STREAM), and the
legacy names the header declares only for the driver's own build (__CUDA_API_VERSION_INTERNAL).
Rather than re-implement the header's macro logic, we let the C preprocessor expand the header
in each of those modes and collect every function it declares. The union is our export list.

Usage: gen_exports.py --cc CC --header cuda.h [--header more.h] [--include-dir D] --outdir DIR
Writes DIR/shim_exports.txt (sorted names), shim_exports.map (linker version script),
shim_fn.h (ids and prototypes), shim_forward.c (weak forwarding wrappers + name table) and
shim_trace.c (timing wrappers for gpuprobe run --trace, shim/api_trace.c).
"""
import argparse
import os
import re
import subprocess
import sys

# Preprocessor modes whose union gives every exported name.
MODES = [
    [],                                        # default: cuXxx_v2 names, legacy-stream forms
    ["-DCUDA_API_PER_THREAD_DEFAULT_STREAM"],  # _ptds / _ptsz forms
    ["-D__CUDA_API_VERSION_INTERNAL"],         # legacy (pre-_v2) names the driver still exports
]

DECL_RE = re.compile(r"^(?:extern\s+)?(?:__attribute__\s*\(\(.*?\)\)\s*)*"
                     r"CUresult\s+(cu\w+)\s*\((.*)\)\s*$", re.S)


def preprocess(cc, header, flags, incdirs):
    src = '#include "%s"\n' % header
    inc = []
    for d in incdirs + [os.path.dirname(header)]:
        inc += ["-I", d]
    out = subprocess.run([cc, "-E", "-P", "-x", "c"] + inc + ["-"] + flags,
                         input=src, text=True,
                         capture_output=True)
    if out.returncode != 0:
        sys.exit("gen_exports: preprocessing %s failed:\n%s" % (header, out.stderr))
    return out.stdout


def top_level_statements(text):
    """Split preprocessed C at ';' outside braces; drop statements carrying a body."""
    depth, start, has_body = 0, 0, False
    for i, ch in enumerate(text):
        if ch == "{":
            depth += 1
            has_body = True
        elif ch == "}":
            depth -= 1
            if depth == 0 and text[start:i].lstrip().startswith("static"):
                start, has_body = i + 1, False   # a static inline function: no ';' follows
        elif ch == ";" and depth == 0:
            if not has_body:
                yield " ".join(text[start:i].split())
            start, has_body = i + 1, False


def split_params(params):
    out, depth, cur = [], 0, ""
    for ch in params:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


TYPE_WORDS = {"const", "volatile", "struct", "union", "enum", "unsigned", "signed", "int", "char",
              "short", "long", "void", "float", "double", "size_t", "restrict"}


def param_name(p, idx):
    """Name of a parameter; (declarator with a name inserted, name) when it had none."""
    m = re.search(r"\(\s*\*\s*(\w+)\s*\)\s*\(", p)          # function pointer
    if m:
        return p, m.group(1)
    m = re.match(r"^(.*?)(\w+)\s*((?:\[[^\]]*\]\s*)*)$", p)
    words = re.findall(r"\w+", p)
    if m and len(words) >= 2 and m.group(2) not in TYPE_WORDS:
        return p, m.group(2)
    name = "a%d" % idx                                        # unnamed: give it one
    if "[" in p:
        p = p.replace("[", " %s[" % name, 1)
    else:
        p = "%s %s" % (p, name)
    return p, name


def collect(cc, headers, incdirs):
    funcs = {}
    for header in headers:
        for flags in MODES:
            for st in top_level_statements(preprocess(cc, header, flags, incdirs)):
                m = DECL_RE.match(st)
                if not m:
                    continue
                name, params = m.group(1), m.group(2).strip()
                funcs.setdefault(name, params)
    return funcs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cc", default="cc")
    ap.add_argument("--header", action="append", required=True)
    ap.add_argument("--include-dir", action="append", default=[])
    ap.add_argument("--outdir", required=True)
    a = ap.parse_args()

    funcs = collect(a.cc, a.header, a.include_dir)
    if len(funcs) < 400:
        sys.exit("gen_exports: only %d functions found in %s" % (len(funcs), a.header))
    names = sorted(funcs)
    os.makedirs(a.outdir, exist_ok=True)

    def write(fname, text):
        path = os.path.join(a.outdir, fname)
        old = open(path).read() if os.path.exists(path) else None
        if old != text:                       # keep timestamps when nothing changed
            with open(path, "w") as f:
                f.write(text)

    write("shim_exports.txt", "".join(n + "\n" for n in names))
    write("shim_exports.map", "{\n  global:\n" + "".join("    %s;\n" % n for n in names)
          + "  local: *;\n};\n")

    hdr = ["/* Generated by shim/gen_exports.py from the CUDA headers: do not edit. */",
           "#ifndef GPUPROBE_SHIM_FN_H", "#define GPUPROBE_SHIM_FN_H",
           "#ifndef __CUDA_API_VERSION_INTERNAL",
           "#define __CUDA_API_VERSION_INTERNAL 1 /* every legacy type and name */", "#endif",
           "#include <cuda.h>"]
    for h in a.header[1:]:
        hdr.append('#include "%s"' % h)
    hdr.append("/* The header maps names by macro; the shim defines every name itself. */")
    hdr += ["#undef %s" % n for n in names]
    hdr.append("enum shim_fn_id {")
    hdr += ["\tSHIM_FN_%s," % n for n in names]
    hdr += ["\tSHIM_FN_COUNT", "};", ""]
    fixed = {}
    for n in names:
        ps = split_params(funcs[n])
        if ps == ["void"] or not ps:
            fixed[n] = ([], [])
            continue
        decls, args = [], []
        for i, p in enumerate(ps):
            d, nm = param_name(p, i)
            decls.append(d)
            args.append(nm)
        fixed[n] = (decls, args)
    for n in names:
        decls = fixed[n][0]
        hdr.append("typedef CUresult shim_fnty_%s(%s);" % (n, ", ".join(decls) or "void"))
        hdr.append("CUresult %s(%s);" % (n, ", ".join(decls) or "void"))
        hdr.append("CUresult shim_first_%s(%s);" % (n, ", ".join(decls) or "void"))
    hdr += ["", "#define SHIM_FN_NAMES_COUNT %d" % len(names), "#endif", ""]
    write("shim_fn.h", "\n".join(hdr))

    c = ["/* Generated by shim/gen_exports.py: one forwarding wrapper per driver export.",
         " * Weak, so that a strong definition in intercept*.c takes the name over. */",
         '#include "shim_fn.h"', '#include "shim/forward.h"', "",
         "const char *const shim_fn_names[SHIM_FN_COUNT] = {"]
    c += ['\t"%s",' % n for n in names]
    c += ["};", "", "void *const shim_fn_exports[SHIM_FN_COUNT] = {"]
    c += ["\t(void *)%s," % n for n in names]
    c += ["};", ""]
    for n in names:
        decls, args = fixed[n]
        params = ", ".join(decls) or "void"
        call = ", ".join(args)
        # First call of the process (slot still empty): load the driver, then call. Kept out
        # of line so that the wrapper itself is a load, a test and two tail jumps.
        c.append("__attribute__((noinline, cold)) CUresult shim_first_%s(%s)" % (n, params))
        c.append("{")
        c.append("\tshim_fnty_%s *shim_fn_ = (shim_fnty_%s *)shim_resolve(SHIM_FN_%s);"
                 % (n, n, n))
        c.append("\tif (!shim_fn_)")
        c.append("\t\treturn shim_unavailable(SHIM_FN_%s);" % n)
        c.append("\treturn shim_fn_(%s);" % call)
        c.append("}")
        c.append("__attribute__((weak)) CUresult %s(%s)" % (n, params))
        c.append("{")
        c.append("\tSHIM_TAILCALL(%s%s);" % (n, (", " + call) if call else ""))
        c.append("}")
    c.append("")
    write("shim_forward.c", "\n".join(c))

    # gpuprobe run --trace (shim/api_trace.c): a timing wrapper per export. Installed into the
    # forwarding table only when tracing is on; the plain path never sees them.
    t = ["/* Generated by shim/gen_exports.py: one timing wrapper per driver export, for",
         " * shim/api_trace.c (gpuprobe run --trace). */",
         '#include "shim_fn.h"', '#include "shim/api_trace.h"', "",
         "void *shim_trace_real[SHIM_FN_COUNT];", ""]
    for n in names:
        decls, args = fixed[n]
        params = ", ".join(decls) or "void"
        t.append("static CUresult shim_trace_%s(%s)" % (n, params))
        t.append("{")
        t.append("\tuint64_t t0_ = shim_api_trace_now();")
        t.append("\tCUresult rc_ = ((shim_fnty_%s *)shim_trace_real[SHIM_FN_%s])(%s);"
                 % (n, n, ", ".join(args)))
        t.append("\tshim_api_trace_call(SHIM_FN_%s, t0_, (int)rc_);" % n)
        t.append("\treturn rc_;")
        t.append("}")
    t += ["", "void *const shim_trace_fns[SHIM_FN_COUNT] = {"]
    t += ["\t(void *)shim_trace_%s," % n for n in names]
    t += ["};", ""]
    write("shim_trace.c", "\n".join(t))


if __name__ == "__main__":
    main()
