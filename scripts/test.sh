#!/usr/bin/env bash
# Run every test (ctest). GPU tests skip, saying so, where no GPU is present.
# Usage: scripts/test.sh [ctest options]
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d build ] || { echo "test.sh: build/ missing: run scripts/build.sh first" >&2; exit 2; }
cd build
ctest --output-on-failure -j"$(nproc)" "$@"
