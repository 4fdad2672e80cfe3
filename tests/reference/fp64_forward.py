"""The truth for a GGUF file: its llama forward pass in float64.

Every weight is dequantized by the `gguf` package (PyPI, the format's own reader), then the
model runs in float64 with nothing else rounded: no activation codes, no fp16 cache, no
fp16 attention. What it computes is what the quantized file means, so KVScope's and
llama.cpp's paths can be scored against it (score.py) instead of against each other.

    python3 fp64_forward.py MODEL.gguf --ids 1,403,407 [--out logprobs.npy] [--dump-layers DIR]

Shapes: x [T][dim] residual stream; q [T][n_heads][head_dim]; k, v [T][n_kv_heads][head_dim];
logits [T][vocab]. Teacher forcing: position t sees tokens 0..t, so one pass over the prompt
and its continuation gives every position's distribution.
"""

import argparse
import os
import sys

import numpy as np
from gguf import GGUFReader
from gguf.quants import dequantize


def field(reader, name, default=None):
    f = reader.fields.get(name)
    return default if f is None else f.contents()


class Model:
    def __init__(self, path):
        r = GGUFReader(path)
        arch = field(r, "general.architecture")
        if arch != "llama":
            raise SystemExit(f"{path}: architecture {arch!r}; this reference runs llama only")
        p = "llama."
        self.n_layers = field(r, p + "block_count")
        self.dim = field(r, p + "embedding_length")
        self.n_heads = field(r, p + "attention.head_count")
        self.n_kv_heads = field(r, p + "attention.head_count_kv", self.n_heads)
        self.head_dim = field(r, p + "attention.key_length", self.dim // self.n_heads)
        self.rope_dim = field(r, p + "rope.dimension_count", self.head_dim)
        self.rope_base = field(r, p + "rope.freq_base", 10000.0)
        self.eps = field(r, p + "attention.layer_norm_rms_epsilon", 1e-5)
        # [rows][cols] in float64, exactly what the file's blocks decode to
        self.w = {t.name: dequantize(t.data, t.tensor_type).astype(np.float64) for t in r.tensors}
        if "output.weight" not in self.w:  # tied embeddings
            self.w["output.weight"] = self.w["token_embd.weight"]

    def rms_norm(self, x, weight):
        return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + self.eps) * weight

    def rope(self, x, positions):
        # GGUF llama files hold Q and K rows permuted so that RoPE turns adjacent pairs
        # (x[2i], x[2i+1]) by pos * base^(-2i / rope_dim) (llama.cpp's "normal" RoPE).
        half = self.rope_dim // 2
        freq = self.rope_base ** (-np.arange(half, dtype=np.float64) * 2.0 / self.rope_dim)
        angle = positions[:, None] * freq[None, :]  # [T][half]
        cos, sin = np.cos(angle)[:, None, :], np.sin(angle)[:, None, :]
        out = x.copy()
        a, b = x[..., 0 : self.rope_dim : 2], x[..., 1 : self.rope_dim : 2]
        out[..., 0 : self.rope_dim : 2] = a * cos - b * sin
        out[..., 1 : self.rope_dim : 2] = a * sin + b * cos
        return out

    def attention(self, layer, x, positions):
        w = lambda n: self.w[f"blk.{layer}.{n}.weight"]
        T = x.shape[0]
        q = (x @ w("attn_q").T).reshape(T, self.n_heads, self.head_dim)
        k = (x @ w("attn_k").T).reshape(T, self.n_kv_heads, self.head_dim)
        v = (x @ w("attn_v").T).reshape(T, self.n_kv_heads, self.head_dim)
        q, k = self.rope(q, positions), self.rope(k, positions)
        group = self.n_heads // self.n_kv_heads
        k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)  # GQA: heads share
        scores = np.einsum("thd,shd->hts", q, k) / np.sqrt(self.head_dim)
        scores += np.triu(np.full((T, T), -np.inf), k=1)[None]  # causal
        scores -= scores.max(axis=-1, keepdims=True)
        p = np.exp(scores)
        p /= p.sum(axis=-1, keepdims=True)
        out = np.einsum("hts,shd->thd", p, v).reshape(T, self.n_heads * self.head_dim)
        return out @ w("attn_output").T

    def ffn(self, layer, x):
        w = lambda n: self.w[f"blk.{layer}.{n}.weight"]
        gate = x @ w("ffn_gate").T
        return ((gate / (1.0 + np.exp(-gate))) * (x @ w("ffn_up").T)) @ w("ffn_down").T

    def logits(self, ids, layer_outputs=None):
        """[T][vocab] logits of every position of `ids`; the residual stream after each layer,
        [T][dim], is appended to `layer_outputs` when it is a list."""
        positions = np.arange(len(ids), dtype=np.float64)
        x = self.w["token_embd.weight"][np.asarray(ids)]
        for layer in range(self.n_layers):
            norm = lambda n: self.w[f"blk.{layer}.{n}.weight"]
            x = x + self.attention(layer, self.rms_norm(x, norm("attn_norm")), positions)
            x = x + self.ffn(layer, self.rms_norm(x, norm("ffn_norm")))
            if layer_outputs is not None:
                layer_outputs.append(x.copy())
        return self.rms_norm(x, self.w["output_norm.weight"]) @ self.w["output.weight"].T


def log_softmax(logits):
    z = logits - logits.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("--ids", required=True, help="token ids, comma-separated")
    ap.add_argument("--out", help="write the log-probabilities [T][vocab] here (.npy)")
    ap.add_argument("--dump-layers", metavar="DIR",
                    help="write the residual stream after each layer to DIR/layer_NN.npy")
    a = ap.parse_args()
    ids = [int(t) for t in a.ids.split(",")]
    layers = [] if a.dump_layers else None
    lp = log_softmax(Model(a.model).logits(ids, layers))
    if a.out:
        np.save(a.out, lp)
    if layers:
        os.makedirs(a.dump_layers, exist_ok=True)
        for i, x in enumerate(layers):
            np.save(os.path.join(a.dump_layers, f"layer_{i:02d}.npy"), x)
    for t, row in enumerate(lp):
        best = np.argsort(-row)[:5]
        print(t, " ".join(f"{i}:{row[i]:.6f}" for i in best))


if __name__ == "__main__":
    sys.exit(main())
