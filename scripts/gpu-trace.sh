#!/usr/bin/env bash
# A GPU timeline of one beatnik run (measurement only): builds the CUPTI tracer
# (scripts/cupti_trace.cpp) against the CUDA toolkit's CUPTI, runs one rank of the given command
# under it (CUDA_INJECTION64_PATH), and prints the last call's timeline
# (scripts/gpu_trace_report.py; the records stay in OUT_DIR/trace.<pid>.csv).
#   scripts/gpu-trace.sh OUT_DIR [--calls K] -- build/cuda/beatnik -x cuda -S tree ... 
# e.g. scripts/gpu-trace.sh /tmp/tr -- build/cuda/beatnik -x cuda -S tree -O high -b periodic -I cos -n 2048 -t 2 --warmup 1
# The report splits the calls at the tree solver's downward kernel (the dual traversal's; pass
# --marker to gpu_trace_report.py for another solver).
set -euo pipefail
[ $# -ge 3 ] || { sed -n 2,9p "$0"; exit 2; }
out=$1; shift
report=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do report+=("$1"); shift; done
[ "${1:-}" = "--" ] || { echo "gpu-trace.sh: '--' before the command expected" >&2; exit 2; }
shift
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
nvcc=$(command -v nvcc) || { echo "gpu-trace.sh: nvcc not found (the CUDA toolkit's CUPTI is needed)" >&2; exit 2; }
cuda=$(dirname "$(dirname "$(readlink -f "$nvcc")")")
inc=$(dirname "$(find "$cuda" -name cupti.h 2>/dev/null | head -1)")
lib=$(dirname "$(find "$cuda" -name 'libcupti.so*' 2>/dev/null | head -1)")
[ -f "$inc/cupti.h" ] && [ -d "$lib" ] || { echo "gpu-trace.sh: no CUPTI under $cuda" >&2; exit 2; }
g++ -std=c++17 -shared -fPIC -O2 -I"$inc" "$here/cupti_trace.cpp" -o "$out/libcupti_trace.so" -L"$lib" -lcupti \
  -Wl,-rpath,"$lib"
rm -f "$out"/trace.*.csv
CUDA_INJECTION64_PATH="$out/libcupti_trace.so" BEATNIK_TRACE_OUT="$out/trace" "$@" > "$out/run.log" 2>&1 ||
  { tail -20 "$out/run.log"; exit 1; }
trace=$(ls -S "$out"/trace.*.csv | head -1)
python3 "$here/gpu_trace_report.py" "$trace" "${report[@]}"
