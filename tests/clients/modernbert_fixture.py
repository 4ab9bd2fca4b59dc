"""A tiny ModernBERT checkpoint (transformers' ModernBertModel layout and config.json) with a real byte-level
BPE vocabulary, for test_modernbert_arch.sh.

The vocabulary is GPT-NeoX-20B's (the family ModernBERT's OLMo tokenizer comes from), recovered from the
vocabulary GGUF llama.cpp ships in its source tree (models/ggml-vocab-gpt-neox.gguf): its NORMAL and
CONTROL tokens in id order (50,254) and its 50,009 merges, under ModernBERT's tokenizer.json shape
(a lone ByteLevel pre-tokenizer with add_prefix_space false, the ByteLevel decoder, "[CLS] $A [SEP]").
ModernBERT's special tokens follow as added tokens ([UNK] [CLS] [SEP] [PAD] [MASK], [MASK] with lstrip as
ModernBERT's has it), and vocab_size 50,304 leaves padding rows as ModernBERT's 50,368 does. config.json
carries ModernBERT-base's fields with a small width: 3 layers with global attention every 2nd (layers 0
and 2 global, 1 local), a sliding window of 8 (so the corpus lines reach past it), global rope theta
160000 and local 10000, GeGLU ("gelu"), norm_eps only (no layer_norm_eps). Weights: seeded random
float32 in safetensors; modules.json + 1_Pooling/config.json give MEAN pooling, as modernbert-embed's do.

Usage: modernbert_fixture.py VOCAB.gguf OUT_DIR [--layers 3] [--mlx] [--also-mlx MLX_DIR] [--reranker]
  --also-mlx: write the 4-bit MLX twin of the float checkpoint too (the same weights quantized)
  --reranker: ModernBertForSequenceClassification as transformers saves it (the encoder under "model.",
  head.dense / head.norm and a one-label classifier with bias, classifier_pooling "mean" as
  gte-reranker-modernbert-base has it), no sentence-transformers files
"""
import argparse
import json
import os

import numpy as np
from bert_fixture import mlx_quantize, write_pooling_files, write_safetensors
from gguf_fast import FastGguf

NORMAL, CONTROL = 1, 3
SPECIALS = ["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"]


def neox_vocab(vocab_gguf):
    kv = FastGguf(vocab_gguf).kv
    tokens, types = kv["tokenizer.ggml.tokens"][1], kv["tokenizer.ggml.token_type"][1]
    vocab, control = [], []
    for token, kind in zip(tokens, types):
        if kind not in (NORMAL, CONTROL):
            break
        if kind == CONTROL:
            control.append(len(vocab))
        vocab.append(token)
    return vocab, control, list(kv["tokenizer.ggml.merges"][1])


def tokenizer_json(vocab, control, merges):
    ids = {t: i for i, t in enumerate(vocab)}
    added = [{"id": i, "content": vocab[i], "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True} for i in control]
    for k, token in enumerate(SPECIALS):
        added.append({"id": len(vocab) + k, "content": token, "single_word": False, "lstrip": token == "[MASK]",
                      "rstrip": False, "normalized": False, "special": True})
    special = lambda t: {"SpecialToken": {"id": t, "type_id": 0}}
    seq = lambda s, t: {"Sequence": {"id": s, "type_id": t}}
    return {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
        "normalizer": {"type": "NFC"},
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [special("[CLS]"), seq("A", 0), special("[SEP]")],
            "pair": [special("[CLS]"), seq("A", 0), special("[SEP]"), seq("B", 0), special("[SEP]")],
            "special_tokens": {t: {"id": t, "ids": [len(vocab) + SPECIALS.index(t)], "tokens": [t]}
                               for t in ("[CLS]", "[SEP]")}},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                  "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": ids, "merges": [m.split(" ") for m in merges]},
    }


def tokenizer_config():
    return {"clean_up_tokenization_spaces": True, "cls_token": "[CLS]", "mask_token": "[MASK]",
            "model_input_names": ["input_ids", "attention_mask"], "model_max_length": 8192,
            "pad_token": "[PAD]", "sep_token": "[SEP]", "tokenizer_class": "PreTrainedTokenizerFast",
            "unk_token": "[UNK]"}


def config(base, layers, mlx, reranker=False):
    cls, sep, pad = base + 1, base + 2, base + 3
    cfg = {"architectures": ["ModernBertModel"], "attention_bias": False, "attention_dropout": 0.0,
           "bos_token_id": cls, "classifier_activation": "gelu", "classifier_bias": False,
           "classifier_dropout": 0.0, "classifier_pooling": "mean", "cls_token_id": cls, "decoder_bias": True,
           "deterministic_flash_attn": False, "embedding_dropout": 0.0, "eos_token_id": sep,
           "global_attn_every_n_layers": 2, "global_rope_theta": 160000.0, "gradient_checkpointing": False,
           "hidden_activation": "gelu", "hidden_size": 64, "initializer_cutoff_factor": 2.0,
           "initializer_range": 0.02, "intermediate_size": 128, "local_attention": 8,
           "local_rope_theta": 10000.0, "max_position_embeddings": 8192, "mlp_bias": False, "mlp_dropout": 0.0,
           "model_type": "modernbert", "norm_bias": False, "norm_eps": 1e-05, "num_attention_heads": 4,
           "num_hidden_layers": layers, "pad_token_id": pad, "position_embedding_type": "absolute",
           "sep_token_id": sep, "tie_word_embeddings": True, "torch_dtype": "float32", "vocab_size": 50304}
    if mlx:
        cfg["quantization"] = {"group_size": 64, "bits": 4}
    if reranker:
        cfg.update({"architectures": ["ModernBertForSequenceClassification"], "id2label": {"0": "LABEL_0"},
                    "label2id": {"LABEL_0": 0}, "num_labels": 1})
    return cfg


def weights(cfg, rng):
    e, f, v = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    rand = lambda *shape: rng.normal(0, 0.05, shape).astype(np.float32)
    t = {"embeddings.tok_embeddings.weight": rand(v, e) * 10, "embeddings.norm.weight": 1 + rand(e)}
    for i in range(cfg["num_hidden_layers"]):
        p = f"layers.{i}."
        if i != 0:  # layer 0's attn_norm is an Identity
            t[p + "attn_norm.weight"] = 1 + rand(e)
        t[p + "attn.Wqkv.weight"] = rand(3 * e, e) * 4
        t[p + "attn.Wo.weight"] = rand(e, e) * 4
        t[p + "mlp_norm.weight"] = 1 + rand(e)
        t[p + "mlp.Wi.weight"] = rand(2 * f, e) * 4
        t[p + "mlp.Wo.weight"] = rand(e, f) * 4
    t["final_norm.weight"] = 1 + rand(e)
    return t


def reranker_weights(t, cfg, rng):
    e = cfg["hidden_size"]
    rand = lambda *shape: rng.normal(0, 0.05, shape).astype(np.float32)
    out = {"model." + name: value for name, value in t.items()}
    out["head.dense.weight"] = rand(e, e) * 4
    out["head.norm.weight"] = 1 + rand(e)
    out["classifier.weight"] = rand(1, e) * 10
    out["classifier.bias"] = rand(1)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("vocab_gguf")
    ap.add_argument("out")
    ap.add_argument("--layers", type=int, default=3)
    ap.add_argument("--mlx", action="store_true", help="4-bit MLX (mlx-embeddings layout), group 64")
    ap.add_argument("--also-mlx")
    ap.add_argument("--reranker", action="store_true")
    args = ap.parse_args()
    vocab, control, merges = neox_vocab(args.vocab_gguf)
    write(args.out, vocab, control, merges, args.layers, args.mlx, args.reranker)
    if args.also_mlx:
        write(args.also_mlx, vocab, control, merges, args.layers, True)


def write(out, vocab, control, merges, layers, mlx, reranker=False):
    os.makedirs(out, exist_ok=True)
    cfg = config(len(vocab), layers, mlx, reranker)
    json.dump(cfg, open(os.path.join(out, "config.json"), "w"), indent=1)
    json.dump(tokenizer_json(vocab, control, merges), open(os.path.join(out, "tokenizer.json"), "w"), ensure_ascii=False)
    json.dump(tokenizer_config(), open(os.path.join(out, "tokenizer_config.json"), "w"), indent=1)
    if not reranker:
        write_pooling_files(out, cfg["hidden_size"], "mean")
    rng = np.random.default_rng(25)
    tensors = weights(cfg, rng)
    if reranker:
        tensors = reranker_weights(tensors, cfg, rng)
    write_safetensors(os.path.join(out, "model.safetensors"), mlx_quantize(tensors) if mlx else tensors)


if __name__ == "__main__":
    main()
