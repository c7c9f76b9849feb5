#!/usr/bin/env python3
# Run on the GPU machine: python3 scripts/cufft_shapes.py (needs CuPy). docs/gpu.md, "cuFFT plan shapes".
# cuFFT plan shapes for an awkward length (4864 = 2^8 * 19) against 4096 (issue 12): complex128,
# n x n, time per transform of the whole array (median of 20), and the bytes-moved rate.
import cupy as cp
from cupyx.scipy import fftpack

def t(f, x, reps=20):
    for _ in range(3): f(x)
    s, e = cp.cuda.Event(), cp.cuda.Event()
    ts = []
    for _ in range(reps):
        s.record(); f(x); e.record(); e.synchronize(); ts.append(cp.cuda.get_elapsed_time(s, e) / 1e3)
    ts.sort(); return ts[len(ts) // 2]

for n in (4096, 4864, 4860, 5000, 5120):
    x = (cp.random.random((n, n)) + 1j * cp.random.random((n, n))).astype(cp.complex128)
    b = n * n * 16 * 2
    rows = t(lambda a: cp.fft.fft(a, axis=1), x)            # contiguous batch of n lines
    cols = t(lambda a: cp.fft.fft(a, axis=0), x)            # strided batch
    plan2 = fftpack.get_fft_plan(x, axes=(0, 1))
    both = t(lambda a: fftpack.fft2(a, plan=plan2, overwrite_x=False), x)  # one 2-D plan
    print(f"n={n}: rows {rows*1e3:.3f} ms ({b/rows/1e12:.2f} TB/s)  cols {cols*1e3:.3f} ms  "
          f"2-D plan {both*1e3:.3f} ms vs rows+cols {(rows+cols)*1e3:.3f} ms")
