#!/usr/bin/env bash
# gpuprobe report in Debian's headless Chromium: the report of trace_app's run (over the fake
# driver) and of gen_capture.py's capture render with no console message at all (an error, a
# warning, a log line: each would be a CONSOLE line), the page's tables list the kernels, the
# driver calls and the map, and a screenshot shows the timeline: its canvas area has the spans'
# colours. Skips (77) where no Chromium is installed.
# usage: report_chromium.sh GPUPROBE FAKE_DRIVER_DIR TRACE_APP SRC_DIR [SCREENSHOT_DIR]
set -u
gp=$1 fake=$2 app=$3 src=$4 keep=${5:-}
chrome=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$chrome" ] || { echo "SKIP: no chromium (apt-get install chromium)"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fails=$((fails + 1)); }
export XDG_RUNTIME_DIR=$tmp/run HOME=$tmp
mkdir -m 700 "$tmp/run"
GPUPROBE_REAL_LIBCUDA=$fake/libcuda.so.1 "$gp" run --trace "$tmp/app.pftrace" -- "$app" >/dev/null 2>&1 ||
	{ bad "run --trace"; exit 1; }
python3 "$src/gen_capture.py" "$tmp/cap.jsonl"
"$gp" report "$tmp/app.pftrace" 2>/dev/null && "$gp" report "$tmp/cap.jsonl" 2>/dev/null || { bad "report"; exit 1; }
flags=(--headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$tmp/profile"
	--window-size=1400,900 --enable-logging=stderr --v=0)
for r in app cap; do
	timeout 120 "$chrome" "${flags[@]}" --dump-dom "file://$tmp/$r.html" >"$tmp/$r.dom" 2>"$tmp/$r.log"
	timeout 120 "$chrome" "${flags[@]}" --screenshot="$tmp/$r.png" "file://$tmp/$r.html" >/dev/null 2>>"$tmp/$r.log"
	if grep -q ':CONSOLE' "$tmp/$r.log"; then
		bad "$r.html: console messages:"; grep ':CONSOLE' "$tmp/$r.log"
	else
		ok "$r.html: no console messages"
	fi
	python3 - "$r" "$tmp/$r.dom" "$tmp/$r.png" <<'PY' || fails=$((fails + 1))
import re, struct, sys, zlib
name, dom, png = sys.argv[1], open(sys.argv[2]).read(), sys.argv[3]
want = {"app": ["scaleA(float*)", "scaleB(float*)", "cuCtxSynchronize", "cuLaunchKernel"],
        "cap": ["foo(float*)", "@lat (hist)", "[2, 4)"]}[name]
missing = [w for w in want if w not in dom]
rows = len(re.findall(r"<tr>", dom))
# the screenshot: decode the PNG (8-bit RGB/RGBA, the filters of the format) and count strongly
# coloured pixels inside the timeline's canvas (below the header, left of nothing: x >= 240)
data = open(png, "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n"
i, idat, w, h, ct = 8, b"", 0, 0, 0
while i < len(data):
    n, typ = struct.unpack(">I4s", data[i:i + 8])
    body = data[i + 8:i + 8 + n]
    if typ == b"IHDR":
        w, h, depth, ct = struct.unpack(">IIBB", body[:10])
    elif typ == b"IDAT":
        idat += body
    i += 12 + n
raw = zlib.decompress(idat)
bpp = 4 if ct == 6 else 3
stride = w * bpp
img, prev, off = [], bytearray(stride), 0
for y in range(h):
    f = raw[off]; line = bytearray(raw[off + 1:off + 1 + stride]); off += 1 + stride
    for x in range(stride):
        a = line[x - bpp] if x >= bpp else 0
        b = prev[x]; c = prev[x - bpp] if x >= bpp else 0
        if f == 1: line[x] = (line[x] + a) & 255
        elif f == 2: line[x] = (line[x] + b) & 255
        elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    img.append(line); prev = line
coloured = 0
for y in range(120, min(h, 330)):
    for x in range(240, w - 20, 2):
        r, g, b = img[y][x * bpp], img[y][x * bpp + 1], img[y][x * bpp + 2]
        if max(r, g, b) - min(r, g, b) > 60:
            coloured += 1
ok = not missing and rows >= 3 and coloured >= 100
print(("ok  " if ok else "FAIL") + " %s.html: tables (%d rows) name %s%s; %d coloured pixels in the timeline"
      % (name, rows, want, " (missing %s)" % missing if missing else "", coloured))
sys.exit(0 if ok else 1)
PY
	[ -n "$keep" ] && cp "$tmp/$r.png" "$tmp/$r.html" "$keep/" 2>/dev/null
done
[ $fails = 0 ] && echo "PASS" || echo "$fails FAILED"
exit $((fails > 0))
