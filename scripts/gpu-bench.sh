#!/usr/bin/env bash
# GPU benchmarks of the low-order step (docs/gpu.md shows the tables this prints).
#   scripts/gpu-bench.sh single BUILD_DIR OUT_DIR   one GPU: n = 1024..4864 (time/step, FOM,
#       device memory per node), the largest n that fits, kernel bytes vs copy bandwidth
#   scripts/gpu-bench.sh multi BUILD_DIR OUT_DIR    weak scaling on 1, 2, 4 GPUs of one host
#       (4096^2 nodes per GPU, to 1%: n = 4096, 5760, 8192; -w 2 would give n = 5792 =
#       32 x 181, whose prime factor makes cuFFT 6x slower), each transport
# Low order, periodic, no output. Results files land in OUT_DIR; tables go to stdout.
set -uo pipefail
mode=$1 build=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
bin=$build/beatnik
report="python3 $here/gpu_bench_report.py"
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0  # never NVLink multicast on shared machines

# Device-to-device copy bandwidth (bytes read + written), the ceiling of memory-bound kernels.
copy_bw() {
  python3 - <<'PY' 2>/dev/null || echo 3.0
import torch
x = torch.empty(2 * 1024**3 // 8, dtype=torch.float64, device="cuda").uniform_()
y = torch.empty_like(x)
for _ in range(3): y.copy_(x)
s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
ts = []
for _ in range(20):
    s.record(); y.copy_(x); e.record(); e.synchronize(); ts.append(s.elapsed_time(e) / 1e3)
ts.sort()
print(f"{2 * x.numel() * 8 / ts[len(ts)//2] / 1e12:.3f}")
PY
}

# Time step for n nodes: the default (tau/25) is stable at n = 128 but the viscous term
# (mu = M h) limits dt to O(h); tau/25 * 64/n keeps large meshes well inside that limit.
dt() { python3 -c "print(0.2312 / $1)"; }

run() {  # run NAME RANKS ARGS...
  local name=$1 np=$2; shift 2
  timeout 180 "$here/mpirun.sh" "$np" "$bin" -x cuda --progress-every 0 --results "$out/$name.json" "$@" \
    >"$out/$name.log" 2>&1
  local rc=$?
  [ $rc -ne 0 ] && { echo "run $name failed (exit $rc):"; tail -5 "$out/$name.log"; }
  return $rc
}

if [ "$mode" = single ]; then
  bw=$(copy_bw)
  echo "device: $(nvidia-smi --query-gpu=name,memory.total --format=csv,noheader)"
  echo "device-to-device copy bandwidth: $bw TB/s (read + write)"
  files=()
  for n in 1024 2048 4096 4864; do
    steps=20; [ "$n" -ge 4096 ] && steps=12
    run "n$n" 1 -n "$n" -t "$steps" -d "$(dt "$n")" && files+=("$out/n$n.json")
  done
  echo; echo "## Size sweep (1 GPU, low order, periodic)"; $report size "$bw" "${files[@]}"
  # Per-region device times need plain launches (a CUDA graph's step has none: docs/gpu-small.md).
  run "n4096_plain" 1 -n 4096 -t 12 -d "$(dt 4096)" --gpu-graph off
  echo; echo "## Kernels at n = 4096 (--gpu-graph off)"; $report kernels "$bw" "$out/n4096_plain.json"
  # Largest n: from the measured device bytes per node and the free memory, then tried.
  bpn=$(python3 -c "import json;print(json.load(open('$out/n4864.json'))['performance']['device_bytes_per_node_max_rank'])")
  free=$(nvidia-smi --query-gpu=memory.free --format=csv,noheader,nounits | head -1)
  n=$(python3 -c "import math;print(int(math.sqrt(0.97*$free*2**20/$bpn))//64*64)")
  echo; echo "## Largest n: $bpn B/node, $free MiB free -> try n = $n"
  for try in 1 2 3 4; do
    if run "nmax" 1 -n "$n" -t 2 -d "$(dt "$n")"; then
      echo "n = $n fits ($(python3 -c "import json;d=json.load(open('$out/nmax.json'));p=d['performance'];print(f\"{p['device_bytes_max_rank']/2**30:.1f} GiB, {p['device_bytes_per_node_max_rank']:.0f} B/node, {p['seconds_per_step']*1e3:.0f} ms/step\")"))"
      break
    fi
    n=$(( n * 24 / 25 / 64 * 64 ))
  done
elif [ "$mode" = multi ]; then
  gpus=$(nvidia-smi -L | wc -l)
  files=()
  for np in 1 2 4; do
    [ "$np" -gt "$gpus" ] && continue
    for t in staged cuda-aware nccl; do
      [ "$np" = 1 ] && [ "$t" = nccl ] && continue
      n=4096; [ "$np" = 2 ] && n=5760; [ "$np" = 4 ] && n=8192
      run "weak_np${np}_$t" "$np" -n "$n" -t 12 --gpu-transport "$t" -d "$(dt "$n")" && files+=("$out/weak_np${np}_$t.json")
    done
  done
  echo; echo "## Weak scaling (n = 4096 per GPU)"; $report scaling "${files[@]}"
else
  sed -n 2,8p "$0"; exit 2
fi
