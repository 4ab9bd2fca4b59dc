"""A tiny XLM-RoBERTa checkpoint with the real XLM-R SentencePiece Unigram vocabulary, for the xlm-roberta
client test.

The vocabulary is XLM-R's (250,002 pieces with their Unigram scores and the nmt_nfkc precompiled charsmap),
recovered from the vocabulary GGUF llama.cpp ships in its source tree (models/ggml-vocab-nomic-bert-moe.gguf,
written by its converter from XLM-R's sentencepiece.bpe.model with the fairseq id realignment and <mask> at
250001); its first 250,002 entries are exactly the pieces of XLM-R's tokenizer.json. The tokenizer.json is
the one transformers' XLMRobertaConverter writes: a Unigram model of [piece, score] pairs (unk_id 3), the
Precompiled normalizer (at the top level, or with --sequence-normalizer inside a Sequence as newer
converters write it), the Metaspace pre-tokenizer, the "<s> $A </s>" / "<s> $A </s> </s> $B </s>"
TemplateProcessing post-processor (or with --roberta-processing a RobertaProcessing), and the five special
added tokens. The weights are seeded random float32 values (std 0.05, norms near 1) in safetensors.

Kinds:
  xlmr     XLMRobertaModel (bge-m3 / multilingual-e5 layout): the position table has max_position_embeddings =
           128 + pad_token_id + 1 rows, a pooler (unused), sentence-transformers pooling (--pooling)
  rerank   XLMRobertaForSequenceClassification (bge-reranker-v2-m3 layout): names under "roberta.", the
           RoBERTa classification head classifier.dense / classifier.out_proj, one label, no modules.json
  bert     BertModel with the XLM-R tokenizer (multilingual-e5-small / paraphrase-multilingual-MiniLM):
           BERT positions (128 rows), token types 2

With --spm-model M.model: M (a SentencePiece Unigram model) as sentencepiece.bpe.model, with the tokenizer.json
transformers' XLMRobertaConverter makes of it (<s> <pad> </s> <unk>, pieces 3.., <mask>; its charsmap).

Usage: xlmr_fixture.py VOCAB.gguf OUT_DIR [--kind xlmr|rerank|bert] [--pooling cls|mean|none] [--mlx]
       [--sequence-normalizer] [--roberta-processing] [--layers 2] [--spm-model M.model] [--tokenizer-only]
"""
import argparse
import base64
import json
import os

import numpy as np

from gguf_fast import FastGguf
from bert_fixture import mlx_quantize, write_pooling_files, write_safetensors

PIECES = 250002  # XLM-R's tokenizer.json vocabulary (mask included)
SPECIALS = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3, "<mask>": 250001}


def unigram_vocab(vocab_gguf):
    gguf = FastGguf(vocab_gguf)  # gguf-py's reader takes ~20 s on 250k strings; this one reads arrays at once
    tokens = gguf.kv["tokenizer.ggml.tokens"][1]
    scores = gguf.kv["tokenizer.ggml.scores"][1]
    charsmap = np.asarray(gguf.kv["tokenizer.ggml.precompiled_charsmap"][1], dtype=np.uint8).tobytes()
    vocab = [[tokens[i], float(scores[i])] for i in range(PIECES)]
    for piece, i in SPECIALS.items():
        assert vocab[i][0] == piece, (i, vocab[i])
    return vocab, charsmap


def tokenizer_json(vocab, charsmap, sequence_normalizer, roberta_processing):
    added = [{"id": i, "content": t, "single_word": False, "lstrip": t == "<mask>", "rstrip": False,
              "normalized": False, "special": True} for t, i in SPECIALS.items()]
    precompiled = {"type": "Precompiled", "precompiled_charsmap": base64.b64encode(charsmap).decode()}
    normalizer = precompiled
    if sequence_normalizer:
        normalizer = {"type": "Sequence", "normalizers": [
            precompiled, {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]}
    s, e = {"SpecialToken": {"id": "<s>", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}}
    a, b = {"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 0}}
    if roberta_processing:
        post = {"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 0], "trim_offsets": True,
                "add_prefix_space": True}
    else:
        post = {"type": "TemplateProcessing", "single": [s, a, e], "pair": [s, a, e, e, b, e],
                "special_tokens": {t: {"id": t, "ids": [SPECIALS[t]], "tokens": [t]} for t in ("<s>", "</s>")}}
    return {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
        "normalizer": normalizer,
        # add_prefix_space (the older spelling, still read by tokenizers) next to prepend_scheme: transformers.js
        # (@lenml/tokenizers) reads only the former.
        "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "add_prefix_space": True,
                          "prepend_scheme": "always", "split": True},
        "post_processor": post,
        "decoder": {"type": "Metaspace", "replacement": "\u2581", "add_prefix_space": True,
                    "prepend_scheme": "always", "split": True},
        "model": {"type": "Unigram", "unk_id": 3, "vocab": vocab, "byte_fallback": False},
    }


def tokenizer_config():
    return {"model_max_length": 512, "tokenizer_class": "XLMRobertaTokenizer", "clean_up_tokenization_spaces": True,
            "bos_token": "<s>", "eos_token": "</s>", "sep_token": "</s>", "cls_token": "<s>", "unk_token": "<unk>",
            "pad_token": "<pad>", "mask_token": {"__type": "AddedToken", "content": "<mask>", "lstrip": True, "normalized": False,
                                                 "rstrip": False, "single_word": False, "special": True}}


def weights(cfg, kind, rng):
    e, f, p, v = cfg["hidden_size"], cfg["intermediate_size"], cfg["max_position_embeddings"], cfg["vocab_size"]
    rand = lambda *shape: rng.normal(0, 0.05, shape).astype(np.float32)
    norm = lambda: (1 + rand(e), rand(e))
    prefix = "roberta." if kind == "rerank" else ""
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
    if kind == "rerank":
        t["classifier.dense.weight"] = rand(e, e) * 4
        t["classifier.dense.bias"] = rand(e)
        t["classifier.out_proj.weight"] = rand(1, e) * 10
        t["classifier.out_proj.bias"] = rand(1)
    else:
        t["pooler.dense.weight"] = rand(e, e) * 4
        t["pooler.dense.bias"] = rand(e)
    t[prefix + "embeddings.position_ids"] = np.arange(p, dtype=np.float32)[None, :]  # a buffer, dropped
    return t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("vocab_gguf")
    ap.add_argument("out")
    ap.add_argument("--kind", default="xlmr", choices=("xlmr", "rerank", "bert"))
    ap.add_argument("--pooling", default="cls", choices=("cls", "mean", "none"))
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--tokenizer-only", action="store_true",
                    help="only tokenizer.json and tokenizer_config.json (for rebox-mkfixture --tokenizer-json)")
    ap.add_argument("--mlx", action="store_true", help="4-bit MLX (mlx-embeddings layout), group 64")
    ap.add_argument("--sequence-normalizer", action="store_true")
    ap.add_argument("--roberta-processing", action="store_true")
    ap.add_argument("--spm-model", help="a SentencePiece Unigram model: written as sentencepiece.bpe.model "
                    "beside its tokenizer.json (vocab_size = its pieces + 2, fairseq's <pad> and XLM-R's <mask>)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if args.spm_model:  # transformers' XLMRobertaConverter.vocab on the model
        import shutil
        import sentencepiece
        from sentencepiece import sentencepiece_model_pb2
        proto = sentencepiece_model_pb2.ModelProto()
        proto.ParseFromString(open(args.spm_model, "rb").read())
        vocab = [["<s>", 0.0], ["<pad>", 0.0], ["</s>", 0.0], ["<unk>", 0.0]]
        vocab += [[p.piece, p.score] for p in proto.pieces[3:]] + [["<mask>", 0.0]]
        SPECIALS["<mask>"] = len(vocab) - 1
        shutil.copy(args.spm_model, os.path.join(args.out, "sentencepiece.bpe.model"))
        write_model(args, vocab, proto.normalizer_spec.precompiled_charsmap)
        return
    base = os.path.join(os.path.dirname(os.path.abspath(args.out)), ".xlmr-vocab.json")
    if not os.path.isfile(base):  # reading 250k strings with gguf-py is slow: once per work folder
        vocab, charsmap = unigram_vocab(args.vocab_gguf)
        json.dump({"vocab": vocab, "charsmap": base64.b64encode(charsmap).decode()}, open(base, "w"))
    cached = json.load(open(base))
    vocab, charsmap = cached["vocab"], base64.b64decode(cached["charsmap"])
    write_model(args, vocab, charsmap)


def write_model(args, vocab, charsmap):
    roberta = args.kind != "bert"
    arch = {"xlmr": "XLMRobertaModel", "rerank": "XLMRobertaForSequenceClassification", "bert": "BertModel"}
    cfg = {"model_type": "xlm-roberta" if roberta else "bert", "architectures": [arch[args.kind]],
           "hidden_size": 64, "num_hidden_layers": args.layers, "num_attention_heads": 4, "intermediate_size": 128,
           "max_position_embeddings": 130 if roberta else 128, "type_vocab_size": 1 if roberta else 2,
           "vocab_size": len(vocab), "layer_norm_eps": 1e-05 if roberta else 1e-12, "hidden_act": "gelu",
           "pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2, "position_embedding_type": "absolute"}
    if args.mlx:
        cfg["quantization"] = {"group_size": 64, "bits": 4}
    if args.kind == "rerank":
        cfg["id2label"] = {"0": "LABEL_0"}
        cfg["label2id"] = {"LABEL_0": 0}
    json.dump(cfg, open(os.path.join(args.out, "config.json"), "w"), indent=1)
    json.dump(tokenizer_json(vocab, charsmap, args.sequence_normalizer, args.roberta_processing),
              open(os.path.join(args.out, "tokenizer.json"), "w"), ensure_ascii=False)
    json.dump(tokenizer_config(), open(os.path.join(args.out, "tokenizer_config.json"), "w"), indent=1)
    if args.tokenizer_only:
        return
    if args.pooling != "none" and args.kind != "rerank":
        write_pooling_files(args.out, cfg["hidden_size"], args.pooling)
    tensors = weights(cfg, args.kind, np.random.default_rng(2502))
    write_safetensors(os.path.join(args.out, "model.safetensors"), mlx_quantize(tensors) if args.mlx else tensors)


if __name__ == "__main__":
    main()
