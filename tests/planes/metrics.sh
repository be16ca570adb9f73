#!/bin/bash
# gpuprobe run --metrics: the maps of a running application as OpenMetrics text over HTTP, read
# directly (the exact text) and scraped by Debian's Prometheus server on loopback, whose HTTP API
# must then give the series and values the probes counted (skipped, saying so, without
# prometheus). Over tests/shim_lazy's fake driver with the built-in tool `launches`.
# usage: metrics.sh GPUPROBE APP SHIM FAKE PTX LAUNCHES.bpf.o
set -u
gp=$1 app=$2 shim=$3 fake=$4 ptx=$5 tool=$6
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
export XDG_RUNTIME_DIR=$tmp/runtime
mkdir -m 0700 "$XDG_RUNTIME_DIR"
unset GPUPROBE_CONFIG GPUPROBE_PROBES GPUPROBE_JSON GPUPROBE_TOP GPUPROBE_INTERVAL GPUPROBE_SEGMENT_DIR
export GPUPROBE_REAL_LIBCUDA=$fake GPUPROBE_CACHE_DIR=$tmp/cache
fails=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fails=$((fails + 1)); }
check() { if [ "$2" = "$3" ]; then ok "$1"; else bad "$1"; printf '  expected: %s\n  got:      %s\n' "$2" "$3"; fi; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
get() { python3 - "$1" <<'PY'
import sys, urllib.request
try:
    r = urllib.request.urlopen(sys.argv[1], timeout=5)
    sys.stdout.write(r.headers.get("Content-Type", "") + "\n" + r.read().decode())
except Exception as e:
    print("error: %s" % e)
PY
}

# bad addresses: one line, exit 2, before the application starts
msg=$("$gp" run --metrics 70000 -p "$tool" -- true 2>&1)
check "--metrics 70000" "2 gpuprobe: run: --metrics 70000: the port must be a number from 1 to 65535 ([ADDR:]PORT, e.g. 9400 or 0.0.0.0:9400)" "$? $msg"
msg=$("$gp" run --metrics nohost:9400 -p "$tool" -- true 2>&1)
check "--metrics nohost:9400" "2 gpuprobe: run: --metrics nohost:9400: 'nohost' is not an IPv4 or IPv6 address ([ADDR:]PORT, e.g. 9400 or 0.0.0.0:9400)" "$? $msg"

port=$(free_port)
hold=$tmp/hold
"$gp" run --metrics "$port" -p "$tool" -- "$app" "$shim" "$ptx" 3 "$hold" 60 >"$tmp/out" 2>"$tmp/err" &
gpid=$!
pids+=($gpid)
for i in $(seq 100); do [ -s "$hold" ] && break; sleep 0.1; done
read -r apid <"$hold" 2>/dev/null || { bad "the application never started"; cat "$tmp/out" "$tmp/err"; exit 1; }
pids+=($apid)
# a snapshot after all three launches (the copier takes one every 200 ms; a loaded machine:
# later). One snapshot copies the maps one after another while the application runs, so one
# taken during the launches can hold the last launch in one map and not yet in another: wait
# for every per-kernel series to have all three.
for i in $(seq 100); do
	text=$(get "http://127.0.0.1:$port/metrics" | sed "s/pid=\"$apid\"/pid=\"P\"/")
	case $text in *'gpuprobe_launches_total{pid="P",kernel="k_use"} 3'*'gpuprobe_threads_total{pid="P",kernel="k_use"} 384'*)
		case $text in *'gpuprobe_blocks_total{pid="P",kernel="k_use"} 3'*) break ;; esac ;;
	esac
	sleep 0.1
done
check "GET /metrics: the exact text" 'application/openmetrics-text; version=1.0.0; charset=utf-8
# TYPE gpuprobe_block_threads histogram
# HELP gpuprobe_block_threads the map block_threads (log2 histogram)
gpuprobe_block_threads_bucket{pid="P",le="0"} 0
gpuprobe_block_threads_bucket{pid="P",le="1"} 0
gpuprobe_block_threads_bucket{pid="P",le="3"} 0
gpuprobe_block_threads_bucket{pid="P",le="7"} 0
gpuprobe_block_threads_bucket{pid="P",le="15"} 0
gpuprobe_block_threads_bucket{pid="P",le="31"} 0
gpuprobe_block_threads_bucket{pid="P",le="63"} 0
gpuprobe_block_threads_bucket{pid="P",le="127"} 0
gpuprobe_block_threads_bucket{pid="P",le="255"} 3
gpuprobe_block_threads_bucket{pid="P",le="+Inf"} 3
gpuprobe_block_threads_count{pid="P"} 3
# TYPE gpuprobe_blocks counter
# HELP gpuprobe_blocks the map blocks
gpuprobe_blocks_total{pid="P",kernel="k_use"} 3
# TYPE gpuprobe_calls counter
# HELP gpuprobe_calls the map calls
gpuprobe_calls_total{pid="P",api="cuLaunchKernel"} 3
# TYPE gpuprobe_grid_blocks histogram
# HELP gpuprobe_grid_blocks the map grid_blocks (log2 histogram)
gpuprobe_grid_blocks_bucket{pid="P",le="0"} 0
gpuprobe_grid_blocks_bucket{pid="P",le="1"} 3
gpuprobe_grid_blocks_bucket{pid="P",le="+Inf"} 3
gpuprobe_grid_blocks_count{pid="P"} 3
# TYPE gpuprobe_launches counter
# HELP gpuprobe_launches the map launches
gpuprobe_launches_total{pid="P",kernel="k_use"} 3
# TYPE gpuprobe_printk_lost counter
# HELP gpuprobe_printk_lost records lost by the map .printk
gpuprobe_printk_lost_total{pid="P"} 0
# TYPE gpuprobe_smem_bytes counter
# HELP gpuprobe_smem_bytes the map smem_bytes
# TYPE gpuprobe_threads counter
# HELP gpuprobe_threads the map threads
gpuprobe_threads_total{pid="P",kernel="k_use"} 384
# EOF' "$text"

if ! command -v prometheus >/dev/null; then
	echo "SKIP (part): prometheus is not installed (apt-get install prometheus): not scraped"
else
	pport=$(free_port)
	cat >"$tmp/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: gpuprobe
    static_configs:
      - targets: ['127.0.0.1:$port']
YML
	prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/data" \
		--web.listen-address="127.0.0.1:$pport" >"$tmp/prometheus.log" 2>&1 &
	pids+=($!)
	# query EXPR: the first result's value (and its labels), once Prometheus has one
	query() { python3 - "http://127.0.0.1:$pport/api/v1/query" "$1" "${2:-25}" <<'PY'
import json, sys, time, urllib.parse, urllib.request
url = sys.argv[1] + "?" + urllib.parse.urlencode({"query": sys.argv[2]})
end = time.time() + float(sys.argv[3])
while time.time() < end:
    try:
        r = json.load(urllib.request.urlopen(url, timeout=2))["data"]["result"]
        if r:
            m = r[0]["metric"]
            labels = ",".join("%s=%s" % (k, m[k]) for k in sorted(m) if k not in ("instance", "job", "pid"))
            print(r[0]["value"][1], labels)
            sys.exit(0)
    except Exception:
        pass
    time.sleep(0.2)
print("nothing")
PY
	}
	# why a scrape failed, from Prometheus itself
	targets() { python3 - "http://127.0.0.1:$pport/api/v1/targets" <<'PY'
import json, sys, urllib.request
try:
    for t in json.load(urllib.request.urlopen(sys.argv[1], timeout=2))["data"]["activeTargets"]:
        print("  target %s: %s %s" % (t["scrapeUrl"], t["health"], t.get("lastError", "")))
except Exception as e:
    print("  prometheus: %s" % e)
PY
	}
	got=$(query 'gpuprobe_launches_total{kernel="k_use"}' 30)
	check "prometheus: launches per kernel" "3 __name__=gpuprobe_launches_total,kernel=k_use" "$got"
	[ "$got" = nothing ] && { targets; tail -5 "$tmp/prometheus.log"; }
	check "prometheus: threads per kernel" "384 __name__=gpuprobe_threads_total,kernel=k_use" \
		"$(query 'gpuprobe_threads_total' 5)"
	check "prometheus: calls per driver function" "3 __name__=gpuprobe_calls_total,api=cuLaunchKernel" \
		"$(query 'gpuprobe_calls_total' 5)"
	check "prometheus: a histogram's bucket" "3 __name__=gpuprobe_block_threads_bucket,le=255" \
		"$(query 'gpuprobe_block_threads_bucket{le="255"}' 5)"
	check "prometheus: the histogram's median lies in [128, 255]" "191 " \
		"$(query 'histogram_quantile(0.5, gpuprobe_block_threads_bucket)' 5)"
	check "prometheus: the scrape's health" "1 __name__=up" "$(query 'up{job="gpuprobe"}' 5)"
fi
kill -KILL "$apid"
wait $gpid
[ $fails = 0 ] && echo "PASS: gpuprobe run --metrics"
exit $((fails > 0))
