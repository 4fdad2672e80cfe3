"""The truth for a GGUF file: its forward pass in float64.

Every weight is dequantized by the `gguf` package (PyPI, the format's own reader), then the
model runs in float64 with nothing else rounded: no activation codes, no fp16 cache, no
fp16 attention. What it computes is what the quantized file means, so KVScope's and
llama.cpp's paths can be scored against it (score.py) instead of against each other.

    python3 fp64_forward.py MODEL.gguf --ids 1,403,407 [--first N] [--out logprobs.npy]
                            [--dump-layers DIR]

Architectures, as llama.cpp defines them for GGUF files (src/models/<arch>.cpp; metadata keys
are prefixed with the architecture's name, e.g. gemma3.block_count):
  llama   RMSNorm, RoPE on adjacent pairs, SiLU-gated FFN, untied or tied output
  qwen2   llama with Q/K/V biases, NeoX RoPE (pairs split in halves), optional output bias
  qwen3   llama with per-head RMSNorm of q and k before RoPE, NeoX RoPE, no biases
  gemma2  embeddings * sqrt(dim), NeoX RoPE, sliding window on alternate layers, attention
          and final logit soft-capping, norms after each sub-layer too, GELU(tanh)-gated FFN
  gemma3  gemma2 without attention soft-capping (final only if the file gives one) but with
          per-head q/k RMSNorm, five sliding-window layers in six, and rope base 10000 (or
          rope.freq_base_swa) and no rope scaling on the sliding-window layers
Per-layer differences (window, rope base and scale) live in is_swa / window / layer_rope_*.

Shapes: x [T][dim] residual stream; q [T][n_heads][head_dim]; k [T][n_kv_heads][head_dim];
v [T][n_kv_heads][head_dim_v]; logits [T][vocab]. Teacher forcing: position t sees tokens
0..t (or, in a sliding-window layer, the last `window` of them), so one pass over the prompt
and its continuation gives every position's distribution.
"""

import argparse
import os
import sys

import numpy as np
from gguf import GGUFReader
from gguf.quants import dequantize

ARCHS = ("llama", "qwen2", "qwen3", "gemma2", "gemma3")


def field(reader, name, default=None):
    f = reader.fields.get(name)
    return default if f is None else f.contents()


class Model:
    def __init__(self, path):
        r = GGUFReader(path)
        arch = field(r, "general.architecture")
        if arch not in ARCHS:
            raise SystemExit(f"{path}: architecture {arch!r}; this reference runs "
                             + ", ".join(ARCHS))
        self.arch = arch
        p = arch + "."
        self.gemma = arch in ("gemma2", "gemma3")
        self.n_layers = field(r, p + "block_count")
        self.dim = field(r, p + "embedding_length")
        self.n_heads = field(r, p + "attention.head_count")
        self.n_kv_heads = field(r, p + "attention.head_count_kv", self.n_heads)
        self.head_dim = field(r, p + "attention.key_length", self.dim // self.n_heads)
        self.head_dim_v = field(r, p + "attention.value_length", self.dim // self.n_heads)
        self.rope_dim = field(r, p + "rope.dimension_count", self.head_dim)
        self.rope_base = field(r, p + "rope.freq_base", 10000.0)
        self.rope_scale = self.read_rope_scale(r, p)
        # llama.cpp's "normal" RoPE for llama; every other family here is NeoX
        # (llama_model_rope_type in src/llama-model.cpp)
        self.rope_neox = arch != "llama"
        self.eps = field(r, p + "attention.layer_norm_rms_epsilon", 1e-5)
        # Gemma scales the embeddings by sqrt(dim) (multiplied, as llama.cpp does, in full
        # precision: no bfloat16 rounding of the factor as in Hugging Face's Gemma)
        self.embd_scale = np.sqrt(self.dim) if self.gemma else 1.0
        self.query_scalar = self.read_query_scalar()
        self.attn_softcap, self.final_softcap = self.read_softcaps(r, p)
        self.read_sliding_window(r, p)
        # [rows][cols] in float64, exactly what the file's blocks decode to
        self.w = {t.name: dequantize(t.data, t.tensor_type).astype(np.float64) for t in r.tensors}
        if "output.weight" not in self.w:  # tied embeddings
            self.w["output.weight"] = self.w["token_embd.weight"]
        self.refuse_unsupported(path)

    # --- metadata: what differs between families -------------------------------------------

    def read_rope_scale(self, r, p):
        """Position multiplier of linear RoPE scaling (llama_model::load_hparams: factor from
        rope.scaling.factor, else rope.scale_linear; freq_scale = 1 / factor; type "none"
        never scales). Other types (yarn, longrope) are refused rather than run wrong."""
        kind = field(r, p + "rope.scaling.type", "linear")
        factor = field(r, p + "rope.scaling.factor", field(r, p + "rope.scale_linear", 0.0))
        if kind not in ("none", "linear"):
            raise SystemExit(f"rope scaling {kind!r} is not implemented here")
        return 1.0 if kind == "none" or factor == 0.0 else 1.0 / factor

    def read_query_scalar(self):
        """Scores are q.k / sqrt(query_scalar). Gemma's query_pre_attn_scalar is not in the
        file: llama.cpp takes n_embd / n_head for the 27B models (recognized by layer count,
        46 for gemma2, 62 for gemma3) and head_dim otherwise (load_arch_hparams)."""
        if (self.arch, self.n_layers) in (("gemma2", 46), ("gemma3", 62)):
            return self.dim // self.n_heads
        return self.head_dim

    def read_softcaps(self, r, p):
        """(attention, final) soft-caps, cap * tanh(s / cap), or None. gemma2 always caps
        both (defaults 50 and 30, llama_hparams); gemma3 caps only the final logits and
        only when the file says so; the others never."""
        if self.arch == "gemma2":
            return (field(r, p + "attn_logit_softcapping", 50.0),
                    field(r, p + "final_logit_softcapping", 30.0))
        if self.arch == "gemma3":
            return None, field(r, p + "final_logit_softcapping", 0.0) or None
        return None, None

    def read_sliding_window(self, r, p):
        """llama.cpp's sliding-window layout (load_arch_hparams in src/models/gemma2.cpp and
        gemma3.cpp, llama_hparams::set_swa_pattern): with period P, layer il slides when
        il % P < P - 1, so the last layer of every P is global (P = 0: all slide). gemma2:
        window 4096 unless the file says, P = 2 (odd layers global), SWA layers keep the
        file's rope base and scale. gemma3: a window only when the file gives one > 0, P = 6
        (layers 5, 11, 17, ... global), SWA layers use rope base rope.freq_base_swa or
        10000 and no rope scaling. A sliding_window_pattern given as an array is ignored
        by llama.cpp (get_key_or_arr wants a scalar), so it is here too."""
        self.n_swa, self.swa_period = 0, 1
        self.rope_base_swa, self.rope_scale_swa = self.rope_base, self.rope_scale
        if self.arch == "gemma2":
            self.n_swa = field(r, p + "attention.sliding_window", 4096)
            self.swa_period = self.scalar(field(r, p + "attention.sliding_window_pattern"), 2)
            self.rope_base_swa = field(r, p + "rope.freq_base_swa", self.rope_base)
        elif self.arch == "gemma3":
            self.n_swa = field(r, p + "attention.sliding_window", 0)
            self.swa_period = self.scalar(field(r, p + "attention.sliding_window_pattern"), 6)
            self.rope_base_swa = field(r, p + "rope.freq_base_swa", 10000.0)
            self.rope_scale_swa = 1.0

    @staticmethod
    def scalar(value, default):
        return value if isinstance(value, (int, np.integer)) else default

    def refuse_unsupported(self, path):
        """Tensors llama.cpp would use but this reference does not: refuse, never ignore."""
        for name in ("rope_freqs.weight", "blk.0.attn_qkv.weight"):
            if name in self.w:
                raise SystemExit(f"{path}: {name} is not implemented here")

    # --- per layer -------------------------------------------------------------------------

    def is_swa(self, layer):
        return self.n_swa > 0 and (self.swa_period == 0
                                   or layer % self.swa_period < self.swa_period - 1)

    def window(self, layer):
        """Keys a query sees in this layer, counting itself; None = all earlier ones."""
        return self.n_swa if self.is_swa(layer) else None

    def layer_rope_base(self, layer):
        return self.rope_base_swa if self.is_swa(layer) else self.rope_base

    def layer_rope_scale(self, layer):
        return self.rope_scale_swa if self.is_swa(layer) else self.rope_scale

    def mask(self, layer, positions):
        """[T][T] additive mask: 0 where query t may see key s, -inf elsewhere. Causal, and
        in a sliding-window layer key s is hidden once p_t - p_s >= window, so a query sees
        itself and the window - 1 keys before it (llama_hparams::is_masked_swa, STANDARD)."""
        d = positions[:, None] - positions[None, :]  # [T][T] query position - key position
        hidden = d < 0
        window = self.window(layer)
        if window is not None:
            hidden |= d >= window
        return np.where(hidden, -np.inf, 0.0)

    # --- building blocks -------------------------------------------------------------------

    def weight(self, layer, name):
        return self.w[f"blk.{layer}.{name}.weight"]

    def linear(self, layer, name, x):
        """x [T][in] -> [T][out]; plus the bias when the file has one (qwen2's Q/K/V)."""
        y = x @ self.weight(layer, name).T
        bias = self.w.get(f"blk.{layer}.{name}.bias")
        return y if bias is None else y + bias

    def rms_norm(self, x, weight):
        # Gemma's (1 + w) is already in the file's weights (the converter adds the 1)
        return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + self.eps) * weight

    def head_norm(self, layer, name, x):
        """qwen3/gemma3 RMSNorm of each head of q or k, [T][heads][head_dim] with a weight
        [head_dim] shared by the heads; identity for files without it."""
        w = self.w.get(f"blk.{layer}.{name}.weight")
        return x if w is None else self.rms_norm(x, w)

    def post_norm(self, layer, name, x):
        """Gemma's RMSNorm of a sub-layer's output before the residual add; identity for
        files without it."""
        w = self.w.get(f"blk.{layer}.{name}.weight")
        return x if w is None else self.rms_norm(x, w)

    @staticmethod
    def softcap(x, cap):
        return x if cap is None else cap * np.tanh(x / cap)

    def rope(self, x, positions, layer):
        """x [T][heads][head_dim], turned in the first rope_dim values of each head by
        pos * scale * base^(-2i / rope_dim), base and scale those of this layer.
        Normal (llama): GGUF llama files hold Q and K rows permuted so that RoPE turns
        adjacent pairs (x[2i], x[2i+1]). NeoX (the rest): pairs (x[i], x[i + rope_dim/2])."""
        half = self.rope_dim // 2
        base = self.layer_rope_base(layer)
        freq = base ** (-np.arange(half, dtype=np.float64) * 2.0 / self.rope_dim)
        angle = (positions * self.layer_rope_scale(layer))[:, None] * freq[None, :]  # [T][half]
        cos, sin = np.cos(angle)[:, None, :], np.sin(angle)[:, None, :]
        out = x.copy()
        if self.rope_neox:
            first, second = slice(0, half), slice(half, self.rope_dim)
        else:
            first, second = slice(0, self.rope_dim, 2), slice(1, self.rope_dim, 2)
        a, b = x[..., first], x[..., second]
        out[..., first] = a * cos - b * sin
        out[..., second] = a * sin + b * cos
        return out

    def activation(self, gate):
        if self.gemma:  # GELU, tanh approximation (ggml_geglu_split)
            inner = np.sqrt(2.0 / np.pi) * (gate + 0.044715 * gate ** 3)
            return 0.5 * gate * (1.0 + np.tanh(inner))
        return gate / (1.0 + np.exp(-gate))  # SiLU

    # --- sub-layers ------------------------------------------------------------------------

    def attention(self, layer, x, positions):
        T = x.shape[0]
        q = self.linear(layer, "attn_q", x).reshape(T, self.n_heads, self.head_dim)
        k = self.linear(layer, "attn_k", x).reshape(T, self.n_kv_heads, self.head_dim)
        v = self.linear(layer, "attn_v", x).reshape(T, self.n_kv_heads, self.head_dim_v)
        q, k = self.head_norm(layer, "attn_q_norm", q), self.head_norm(layer, "attn_k_norm", k)
        q, k = self.rope(q, positions, layer), self.rope(k, positions, layer)
        group = self.n_heads // self.n_kv_heads
        k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)  # GQA: heads share
        scores = np.einsum("thd,shd->hts", q, k) / np.sqrt(self.query_scalar)  # [H][T][T]
        scores = self.softcap(scores, self.attn_softcap)  # gemma2: capped before the mask
        scores += self.mask(layer, positions)[None]
        scores -= scores.max(axis=-1, keepdims=True)
        p = np.exp(scores)
        p /= p.sum(axis=-1, keepdims=True)
        out = np.einsum("hts,shd->thd", p, v).reshape(T, self.n_heads * self.head_dim_v)
        return self.linear(layer, "attn_output", out)

    def ffn(self, layer, x):
        gate = self.linear(layer, "ffn_gate", x)
        hidden = self.activation(gate) * self.linear(layer, "ffn_up", x)  # [T][ff]
        return self.linear(layer, "ffn_down", hidden)

    def block(self, layer, x, positions):
        """One layer: x [T][dim] -> [T][dim]. Pre-norm residual sub-layers; Gemma also
        norms each sub-layer's output (post_attention_norm, post_ffw_norm) before adding."""
        h = self.attention(layer, self.rms_norm(x, self.weight(layer, "attn_norm")), positions)
        x = x + self.post_norm(layer, "post_attention_norm", h)
        h = self.ffn(layer, self.rms_norm(x, self.weight(layer, "ffn_norm")))
        return x + self.post_norm(layer, "post_ffw_norm", h)

    def embed(self, ids):
        return self.w["token_embd.weight"][np.asarray(ids)] * self.embd_scale  # [T][dim]

    def head(self, x):
        """x [T][dim] -> logits [T][vocab]: final norm, output matrix (+ bias, qwen2),
        final soft-cap (gemma2)."""
        logits = self.rms_norm(x, self.w["output_norm.weight"]) @ self.w["output.weight"].T
        if "output.bias" in self.w:
            logits = logits + self.w["output.bias"]
        return self.softcap(logits, self.final_softcap)

    def logits(self, ids, layer_outputs=None, first=0):
        """[T - first][vocab] logits of positions first.. of `ids` (the earlier positions
        still run through every layer, their logits are just not computed: over a 262k
        vocabulary they are the heavy part); the residual stream after each layer,
        [T][dim], is appended to `layer_outputs` when it is a list."""
        positions = np.arange(len(ids), dtype=np.float64)
        x = self.embed(ids)
        for layer in range(self.n_layers):
            x = self.block(layer, x, positions)
            if layer_outputs is not None:
                layer_outputs.append(x.copy())
        return self.head(x[first:])


def log_softmax(logits):
    z = logits - logits.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("--ids", required=True, help="token ids, comma-separated")
    ap.add_argument("--first", type=int, default=0,
                    help="compute and report positions FIRST.. only (default 0: all)")
    ap.add_argument("--out", help="write the log-probabilities [T - FIRST][vocab] here (.npy)")
    ap.add_argument("--dump-layers", metavar="DIR",
                    help="write the residual stream after each layer to DIR/layer_NN.npy")
    a = ap.parse_args()
    ids = [int(t) for t in a.ids.split(",")]
    layers = [] if a.dump_layers else None
    lp = log_softmax(Model(a.model).logits(ids, layers, a.first))
    if a.out:
        np.save(a.out, lp)
    if layers:
        os.makedirs(a.dump_layers, exist_ok=True)
        for i, x in enumerate(layers):
            np.save(os.path.join(a.dump_layers, f"layer_{i:02d}.npy"), x)
    for t, row in enumerate(lp, start=a.first):
        best = np.argsort(-row)[:5]
        print(t, " ".join(f"{i}:{row[i]:.6f}" for i in best))


if __name__ == "__main__":
    sys.exit(main())
