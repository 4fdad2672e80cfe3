"""Where a path leaves the truth: the residual stream after every layer, against fp64.

Runs one prompt (by default the first of the model's reference file) through the fp64
reference (fp64_forward.py) and through kvscope-cli logprobs --dump-layers for KVScope's
default path and --f32-activations, and prints per layer the relative error of each path's
residual stream x [T][dim] over the prompt's positions:

    rel(layer) = ||x_path - x_truth|| / ||x_truth||   (Frobenius norms over [T][dim])

A path whose error jumps at one layer, while the others grow smoothly, has a step that is
less accurate there. --llama-cpp DIR adds llama.cpp's own dump of the same prompt (one
batch), layer_NN.npy files of its l_out-N tensors in the same [T][dim] float32 layout, made
with its eval callback (llama-eval-callback prints them). Its last layer keeps only the
rows that need logits, so that layer is compared on the last position for every path.

    python3 layer_drift.py --cli build/bin/kvscope-cli --model ../shared/models/X.gguf
                           [--reference ../shared/reference/x-greedy.json] [--llama-cpp DIR]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fp64_forward import Model  # noqa: E402

PATHS = [("KVScope default", []), ("KVScope --f32-activations", ["--f32-activations"])]


def engine_layers(cli, model, ids, options, workdir):
    out = os.path.join(workdir, "layers")
    subprocess.run([cli, "logprobs", "-m", model, "--ids", ",".join(map(str, ids)), "-o",
                    os.path.join(workdir, "lp.npy"), "-t", "2", "--dump-layers", out, *options],
                   check=True, stdout=subprocess.DEVNULL)
    return load_layers(out)


def load_layers(folder):
    names = sorted(n for n in os.listdir(folder) if n.startswith("layer_") and n.endswith(".npy"))
    return [np.load(os.path.join(folder, n)).astype(np.float64) for n in names]


def relative_error(x, truth, n_rows):
    """Over the last n_rows positions (a path that kept only the rows needing logits sets it)."""
    x, truth = x[-n_rows:], truth[-n_rows:]
    return float(np.linalg.norm(x - truth) / np.linalg.norm(truth))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cli", default="build/bin/kvscope-cli")
    ap.add_argument("--model", required=True)
    ap.add_argument("--reference", help="a *-greedy.json: its first prompt's ids are run")
    ap.add_argument("--ids", help="token ids, comma-separated (instead of --reference)")
    ap.add_argument("--llama-cpp", metavar="DIR", help="llama.cpp's layer_NN.npy dump")
    a = ap.parse_args()
    if a.ids:
        ids = [int(t) for t in a.ids.split(",")]
    elif a.reference:
        ids = json.load(open(a.reference))["cases"][0]["prompt_ids"]
    else:
        ap.error("give --reference or --ids")
    truth = []
    Model(a.model).logits(ids, truth)
    columns = {}
    with tempfile.TemporaryDirectory() as workdir:
        for label, options in PATHS:
            columns[label] = engine_layers(a.cli, a.model, ids, options, workdir)
    if a.llama_cpp:
        columns["llama.cpp"] = load_layers(a.llama_cpp)
    print(f"{len(ids)} prompt tokens; relative error of the residual stream per layer")
    print("| layer | " + " | ".join(columns) + " |")
    print("|---|" + "---|" * len(columns))
    for layer, t in enumerate(truth):
        n_rows = min(c[layer].shape[0] for c in columns.values() if layer < len(c))
        cells = [f"{relative_error(c[layer], t, n_rows):.2e}" if layer < len(c) else "-"
                 for c in columns.values()]
        if n_rows < t.shape[0]:
            cells[-1] += f" (last {n_rows})"
        print(f"| {layer} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
