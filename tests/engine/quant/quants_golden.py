#!/usr/bin/env python3
"""Prints the golden vectors of quants_golden_test.cpp, made with gguf-py (llama.cpp's
Python implementation of the ggml formats): `pip install gguf` (0.19 was used), then run
this script. Inputs come from the same LCG as test::Lcg in quant_test_helpers.h."""
import numpy as np
import gguf.quants as Q
from gguf import GGMLQuantizationType as T


def lcg(seed):
    s = seed
    while True:
        s = (s * 1103515245 + 12345) & 0xFFFFFFFF
        yield s


def lcg_floats(n, seed):
    g = lcg(seed)
    out = []
    for _ in range(n):
        v = next(g)
        signed = v - (1 << 32) if v & 0x80000000 else v
        out.append((signed >> 8) * 2.0**-20)  # Lcg::next_float
    return np.array(out, dtype=np.float32)


def lcg_bytes(n, seed):
    g = lcg(seed)
    return bytearray(next(g) >> 24 for _ in range(n))  # Lcg::next_byte


x = lcg_floats(64, 7)
for t in [T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1, T.Q8_0]:
    print(t.name, Q.quantize(x.reshape(1, -1), t).tobytes().hex())

# (type, block bytes, [(byte offset of an fp16 scale, value)])
for t, size, scales in [(T.Q4_K, 144, [(0, 0.0234375), (2, 0.01171875)]),
                        (T.Q5_K, 176, [(0, 0.0234375), (2, 0.005859375)]),
                        (T.Q6_K, 210, [(208, 0.0234375)])]:
    b = lcg_bytes(size, 11)
    for off, v in scales:
        b[off:off + 2] = np.array([v], dtype=np.float16).tobytes()
    y = Q.dequantize(np.frombuffer(bytes(b), dtype=np.uint8).reshape(1, -1), t).reshape(-1)
    idx = [i * 16 + (i * 5) % 16 for i in range(16)]
    print(t.name, "sum", repr(float(np.sum(y.astype(np.float64)))))
    print(t.name, "samples", ", ".join(f"{{{i}, {float(y[i])!r}f}}" for i in idx))
