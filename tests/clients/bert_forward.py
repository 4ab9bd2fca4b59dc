"""A Hugging Face BERT forward pass of the source checkpoint in numpy, the reference for llama.cpp's
embeddings and reranker scores of rebox's bert GGUF: nothing here reads the GGUF or shares code with rebox.

The weights are the source values as source_values.Source computes them from the safetensors alone. Arithmetic
is float64. Mirrors transformers' modeling_bert, by function:
  BertEmbeddings.forward      word_embeddings[ids] + position_embeddings[0..T-1] + token_type_embeddings[0],
                              then LayerNorm (eps = layer_norm_eps); token type 0 throughout, as llama.cpp's
                              bert graph uses
  BertSelfAttention.forward   q, k, v Linear with bias; softmax(q k^T / sqrt(head_dim)) v, no mask
  BertSelfOutput.forward      LayerNorm(dense(ctx) + x)
  BertIntermediate/BertOutput LayerNorm(output.dense(gelu(intermediate.dense(x))) + x), gelu = erf form
  BertPooler.forward          tanh(dense(h[CLS]))
  BertForSequenceClassification  classifier(pooler); the score node-llama-cpp reports is sigmoid(logit)
and transformers' modeling_xlm_roberta where it differs (model_type "xlm-roberta"):
  create_position_ids_from_input_ids  position ids count from pad_token_id + 1 (non-pad tokens), so token i
                              takes position row pad_token_id + 1 + i of the source table
  XLMRobertaClassificationHead        out_proj(tanh(dense(h[<s>]))) (names under "roberta." / "classifier.")
then sentence-transformers' Pooling (cls / mean from modules.json + 1_Pooling/config.json), unnormalized.

Usage: bert_forward.py MODEL_DIR --embed IDS.json VECS.json [--min-cos 0.9999]
       bert_forward.py MODEL_DIR --rank RANK.json [--max-diff 1e-3] [--min-spread S]
Exit 1 when a cosine is below the bound, a score differs by more than --max-diff, or the reference's scores
spread (max - min) less than --min-spread (a test on near-constant scores would show nothing).
"""
import argparse
import json
import math
import os
import sys

import numpy as np

from hf_forward import pooled_cosines
from source_values import Source


class Bert:
    def __init__(self, model_dir):
        self.src = Source(model_dir)
        cfg = self.src.config
        self.layers = cfg["num_hidden_layers"]
        self.heads = cfg["num_attention_heads"]
        self.eps = float(cfg.get("layer_norm_eps", 1e-12))
        self.names = set(self.src.names())
        self.cache = {}
        self.roberta = cfg["model_type"] == "xlm-roberta"
        self.pad = cfg.get("pad_token_id", 1)

    def w(self, name):
        if name not in self.cache:
            stored = next((n for n in ("bert." + name, "roberta." + name, name) if n in self.names), None)
            if stored is None:
                raise SystemExit(f"bert_forward.py: the checkpoint has no {name}")
            self.cache[name] = self.src.values(stored).astype(np.float64)
        return self.cache[name]

    def linear(self, x, name):
        return x @ self.w(name + ".weight").T + self.w(name + ".bias")

    def layer_norm(self, x, name):
        mean = x.mean(axis=-1, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        return (x - mean) / np.sqrt(var + self.eps) * self.w(name + ".weight") + self.w(name + ".bias")

    def hidden(self, ids):
        ids = np.asarray(ids)
        if self.roberta:  # create_position_ids_from_input_ids
            mask = (ids != self.pad).astype(np.int64)
            positions = np.cumsum(mask) * mask + self.pad
        else:
            positions = np.arange(len(ids))
        x = (self.w("embeddings.word_embeddings.weight")[ids] +
             self.w("embeddings.position_embeddings.weight")[positions] +
             self.w("embeddings.token_type_embeddings.weight")[0])
        x = self.layer_norm(x, "embeddings.LayerNorm")
        erf = np.vectorize(math.erf)
        for i in range(self.layers):
            p = f"encoder.layer.{i}."
            t, e = x.shape
            d = e // self.heads
            split = lambda y: y.reshape(t, self.heads, d).transpose(1, 0, 2)
            q, k, v = (split(self.linear(x, p + "attention.self." + n)) for n in ("query", "key", "value"))
            scores = q @ k.transpose(0, 2, 1) / math.sqrt(d)
            scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
            ctx = (scores / scores.sum(axis=-1, keepdims=True)) @ v
            ctx = ctx.transpose(1, 0, 2).reshape(t, e)
            x = self.layer_norm(self.linear(ctx, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
            inter = self.linear(x, p + "intermediate.dense")
            inter = 0.5 * inter * (1 + erf(inter / math.sqrt(2)))
            x = self.layer_norm(self.linear(inter, p + "output.dense") + x, p + "output.LayerNorm")
        return x

    def logit(self, ids):
        if self.roberta:  # XLMRobertaClassificationHead
            dense = np.tanh(self.linear(self.hidden(ids)[0], "classifier.dense"))
            return float(self.linear(dense, "classifier.out_proj")[0])
        pooled = np.tanh(self.linear(self.hidden(ids)[0], "pooler.dense"))
        return float(self.linear(pooled, "classifier")[0])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model_dir")
    ap.add_argument("--embed", nargs=2, metavar=("IDS", "VECS"))
    ap.add_argument("--rank")
    ap.add_argument("--min-cos", type=float, default=0.9999)
    ap.add_argument("--max-diff", type=float, default=1e-3)
    ap.add_argument("--min-spread", type=float, default=0.0)
    args = ap.parse_args()
    model = Bert(args.model_dir)
    name = os.path.basename(os.path.normpath(args.model_dir))
    problems = []
    if args.embed:
        pooling, cosines, label, lists = pooled_cosines(model.hidden, args.model_dir, *args.embed)
        worst = min(cosines)
        print(f"  {name}: HF BERT forward ({model.layers} layers, pooling {pooling}) vs llama.cpp on "
              f"{len(cosines)} token lists: min cos {worst:.7f} = 1 - {1 - worst:.1e}; need >= {args.min_cos}")
        if len(cosines) != lists or not worst >= args.min_cos:
            problems.append(f"{label}: min cosine {worst:.7f} below {args.min_cos}")
    if args.rank:
        got = json.load(open(args.rank))
        diffs, reference = [], []
        for ids, score in zip(got["inputs"], got["scores"]):
            logit = model.logit(ids)
            reference.append(1 / (1 + math.exp(-logit)))
            diffs.append(abs(reference[-1] - score))
            print(f"    logit {logit:+.4f}: HF sigmoid {1 / (1 + math.exp(-logit)):.6f}, llama.cpp {score:.6f}")
        print(f"  {name}: reranker scores of {len(diffs)} pairs, max |HF - llama.cpp| {max(diffs):.1e}; "
              f"need <= {args.max_diff}")
        if not max(diffs) <= args.max_diff:
            problems.append(f"{got['label']}: a score differs by {max(diffs):.1e} > {args.max_diff}")
        spread = max(reference) - min(reference)
        if args.min_spread:
            print(f"  {name}: the reference scores spread {spread:.3f}; need >= {args.min_spread}")
        if not spread >= args.min_spread:
            problems.append(f"{got['label']}: the reference scores spread only {spread:.3f} < {args.min_spread}")
    if problems:
        print("FAIL: bert_forward: " + "; ".join(problems))
        sys.exit(1)


if __name__ == "__main__":
    main()
