"""A tiny BERT checkpoint with a real WordPiece vocabulary, for the bert client tests.

The vocabulary is bge-small-en-v1.5's (30,522 WordPiece tokens), recovered from the vocabulary GGUF that
llama.cpp's own converter wrote for it and that llama.cpp ships in its source tree
(models/ggml-vocab-bert-bge.gguf): BertModel.set_vocab's phantom-space rewrite is undone (a control token
as it is, "\u2581x" -> "x", any other token -> "##x"), which is exact because the rewrite is one-to-one. The
tokenizer.json is the one transformers' BertTokenizerFast writes for bge (BertNormalizer lowercasing,
BertPreTokenizer, WordPiece with "##", the "[CLS] $A [SEP]" post-processor). The weights are seeded random
float32 values (std 0.05, norms near 1) in safetensors; sentence-transformers modules.json +
1_Pooling/config.json give the pooling.

Usage: bert_fixture.py VOCAB.gguf OUT_DIR [--pooling cls|mean|none] [--reranker] [--layers 2] [--mlx] [--tokenizer-only]
  --reranker: BertForSequenceClassification (names under "bert.", a pooler and a one-label classifier, no
  modules.json), as ms-marco cross-encoders are saved.
"""
import argparse
import json
import os
import struct

import numpy as np
from gguf import GGUFReader

CONTROL = 3


def wordpiece_vocab(vocab_gguf):
    reader = GGUFReader(vocab_gguf)
    tokens_field = reader.fields["tokenizer.ggml.tokens"]
    types_field = reader.fields["tokenizer.ggml.token_type"]
    tokens = [tokens_field.contents(i) for i in range(len(tokens_field.data))]
    types = [types_field.contents(i) for i in range(len(types_field.data))]
    vocab = []
    for token, kind in zip(tokens, types):
        if kind == CONTROL:
            vocab.append(token)
        elif token.startswith("\u2581"):
            vocab.append(token[1:])
        else:
            vocab.append("##" + token)
    return vocab


def tokenizer_json(vocab):
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    ids = {t: i for i, t in enumerate(vocab)}
    added = [{"id": ids[t], "content": t, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True} for t in specials]
    return {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
        "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                       "strip_accents": None, "lowercase": True},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                       {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": "[SEP]", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}},
                     {"SpecialToken": {"id": "[SEP]", "type_id": 1}}],
            "special_tokens": {t: {"id": t, "ids": [ids[t]], "tokens": [t]} for t in ("[CLS]", "[SEP]")}},
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100, "vocab": ids},
    }


def tokenizer_config():
    return {"do_lower_case": True, "model_max_length": 512, "tokenize_chinese_chars": True,
            "strip_accents": None, "tokenizer_class": "BertTokenizer", "clean_up_tokenization_spaces": True,
            "cls_token": "[CLS]", "sep_token": "[SEP]", "pad_token": "[PAD]", "unk_token": "[UNK]",
            "mask_token": "[MASK]"}


def mlx_quantize(tensors, bits=4, group=64):
    """mlx-embeddings' layout: every Linear and Embedding weight whose rows divide by the group (tables
    included) as uint32 words of LSB-first codes with f16 scales and biases per group; w = code * scale +
    bias. Codes are drawn at random, scale and bias fitted to the float weight's group range."""
    out = {}
    for name, w in tensors.items():
        if not (name.endswith(".weight") and w.ndim == 2 and w.shape[1] % group == 0):
            out[name] = w
            continue
        rows, cols = w.shape
        g = w.reshape(rows, cols // group, group)
        lo, hi = g.min(axis=2), g.max(axis=2)
        scales = ((hi - lo) / (2 ** bits - 1)).astype(np.float16)
        biases = lo.astype(np.float16)
        codes = np.clip(np.rint((g - biases[..., None].astype(np.float32)) /
                                np.maximum(scales[..., None].astype(np.float32), 1e-8)), 0, 2 ** bits - 1)
        codes = codes.astype(np.uint32).reshape(rows, cols)
        per_word = 32 // bits
        words = np.zeros((rows, cols // per_word), dtype=np.uint32)
        for k in range(per_word):
            words |= codes[:, k::per_word] << np.uint32(bits * k)
        stem = name[: -len(".weight")]
        out[name] = words
        out[stem + ".scales"] = scales
        out[stem + ".biases"] = biases
    return out


def write_safetensors(path, tensors):
    header, offset, blobs = {}, 0, []
    dtypes = {np.dtype(np.uint32): ("U32", "<u4"), np.dtype(np.float16): ("F16", "<f2")}
    for name, array in tensors.items():
        dtype, code = dtypes.get(array.dtype, ("F32", "<f4"))
        data = np.ascontiguousarray(array, dtype=code).tobytes()
        header[name] = {"dtype": dtype, "shape": list(array.shape), "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for blob in blobs:
            f.write(blob)


def weights(cfg, reranker, rng):
    e, f, p, v = cfg["hidden_size"], cfg["intermediate_size"], cfg["max_position_embeddings"], cfg["vocab_size"]
    rand = lambda *shape: rng.normal(0, 0.05, shape).astype(np.float32)
    norm = lambda: (1 + rand(e), rand(e))
    prefix = "bert." if reranker else ""
    t = {}
    t[prefix + "embeddings.word_embeddings.weight"] = rand(v, e) * 10
    t[prefix + "embeddings.position_embeddings.weight"] = rand(p, e) * 4
    t[prefix + "embeddings.token_type_embeddings.weight"] = rand(cfg["type_vocab_size"], e) * 4
    t[prefix + "embeddings.LayerNorm.weight"], t[prefix + "embeddings.LayerNorm.bias"] = norm()
    for i in range(cfg["num_hidden_layers"]):
        base = f"{prefix}encoder.layer.{i}."
        for stem, rows, cols in (("attention.self.query", e, e), ("attention.self.key", e, e),
                                 ("attention.self.value", e, e), ("attention.output.dense", e, e),
                                 ("intermediate.dense", f, e), ("output.dense", e, f)):
            t[base + stem + ".weight"] = rand(rows, cols) * 4
            t[base + stem + ".bias"] = rand(rows)
        for stem in ("attention.output.LayerNorm", "output.LayerNorm"):
            t[base + stem + ".weight"], t[base + stem + ".bias"] = norm()
    t[prefix + "pooler.dense.weight"] = rand(e, e) * 4
    t[prefix + "pooler.dense.bias"] = rand(e)
    t[prefix + "embeddings.position_ids"] = np.arange(p, dtype=np.float32)[None, :]  # a buffer, dropped
    if reranker:
        t["classifier.weight"] = rand(1, e) * 10
        t["classifier.bias"] = rand(1)
    return t


def write_pooling_files(out, hidden, pooling):
    """sentence-transformers' modules.json (Transformer, then Pooling in 1_Pooling) and 1_Pooling/config.json
    for CLS or MEAN pooling."""
    json.dump([{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
               {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}],
              open(os.path.join(out, "modules.json"), "w"), indent=1)
    os.makedirs(os.path.join(out, "1_Pooling"), exist_ok=True)
    json.dump({"word_embedding_dimension": hidden, "pooling_mode_cls_token": pooling == "cls",
               "pooling_mode_mean_tokens": pooling == "mean", "pooling_mode_max_tokens": False,
               "pooling_mode_mean_sqrt_len_tokens": False},
              open(os.path.join(out, "1_Pooling", "config.json"), "w"), indent=1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("vocab_gguf")
    ap.add_argument("out")
    ap.add_argument("--pooling", default="cls", choices=("cls", "mean", "none"))
    ap.add_argument("--reranker", action="store_true")
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--tokenizer-only", action="store_true",
                    help="only tokenizer.json and tokenizer_config.json (for rebox-mkfixture --tokenizer-json)")
    ap.add_argument("--mlx", action="store_true", help="4-bit MLX (mlx-embeddings layout), group 64")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    vocab = wordpiece_vocab(args.vocab_gguf)
    cfg = {"model_type": "bert", "architectures": ["BertForSequenceClassification" if args.reranker else "BertModel"],
           "hidden_size": 64, "num_hidden_layers": args.layers, "num_attention_heads": 4, "intermediate_size": 128,
           "max_position_embeddings": 128, "type_vocab_size": 2, "vocab_size": len(vocab), "layer_norm_eps": 1e-12,
           "hidden_act": "gelu", "pad_token_id": 0, "position_embedding_type": "absolute"}
    if args.mlx:
        cfg["quantization"] = {"group_size": 64, "bits": 4}
    if args.reranker:
        cfg["id2label"] = {"0": "LABEL_0"}
        cfg["label2id"] = {"LABEL_0": 0}
    json.dump(cfg, open(os.path.join(args.out, "config.json"), "w"), indent=1)
    json.dump(tokenizer_json(vocab), open(os.path.join(args.out, "tokenizer.json"), "w"), ensure_ascii=False)
    json.dump(tokenizer_config(), open(os.path.join(args.out, "tokenizer_config.json"), "w"), indent=1)
    if args.tokenizer_only:
        return
    if args.pooling != "none" and not args.reranker:
        write_pooling_files(args.out, cfg["hidden_size"], args.pooling)
    tensors = weights(cfg, args.reranker, np.random.default_rng(25))
    write_safetensors(os.path.join(args.out, "model.safetensors"), mlx_quantize(tensors) if args.mlx else tensors)


if __name__ == "__main__":
    main()
