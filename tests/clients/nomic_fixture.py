"""A tiny nomic-bert checkpoint (nomic-embed-text v1.5's layout and config.json, NomicBertModel from
nomic-ai's contrastors code) with a real WordPiece vocabulary, for test_nomic_arch.sh.

The vocabulary and tokenizer files are bert_fixture.py's (bge-small-en-v1.5's 30,522 WordPiece tokens, the
same bert-base-uncased vocabulary nomic-embed-text uses), and vocab_size is 30,528 as in nomic's config
(pad_vocab_size_multiple 64), so the vocabulary is padded as llama.cpp's converter pads it. The
config.json carries nomic-embed-text-v1.5's fields with a small width: GPT-2 names (n_embd, n_head,
n_inner, n_layer, n_positions 8192, max_trained_positions 2048), rotary_emb_base 1000, SwiGLU, no biases
on the linear layers. Weights: seeded random float32 (std 0.05 scaled, norms near 1) in safetensors;
modules.json + 1_Pooling/config.json give MEAN pooling, as nomic-embed-text's do.

Usage: nomic_fixture.py VOCAB.gguf OUT_DIR [--layers 2] [--mlx]
"""
import argparse
import json
import os

import numpy as np

from bert_fixture import (mlx_quantize, tokenizer_config, tokenizer_json, wordpiece_vocab, write_pooling_files,
                          write_safetensors)


def config(vocab_size, layers, mlx):
    cfg = {"model_type": "nomic_bert", "architectures": ["NomicBertModel"],
           "auto_map": {"AutoConfig": "nomic-ai/nomic-bert-2048--configuration_hf_nomic_bert.NomicBertConfig",
                        "AutoModel": "nomic-ai/nomic-bert-2048--modeling_hf_nomic_bert.NomicBertModel"},
           "activation_function": "swiglu", "attn_pdrop": 0.0, "bos_token_id": None, "causal": False,
           "dense_seq_output": True, "embd_pdrop": 0.0, "eos_token_id": None, "fused_bias_fc": True,
           "fused_dropout_add_ln": True, "initializer_range": 0.02, "layer_norm_epsilon": 1e-12,
           "max_trained_positions": 2048, "mlp_fc1_bias": False, "mlp_fc2_bias": False,
           "n_embd": 64, "n_head": 4, "n_inner": 128, "n_layer": layers, "n_positions": 8192,
           "pad_vocab_size_multiple": 64, "parallel_block": False, "parallel_block_tied_norm": False,
           "prenorm": False, "qkv_proj_bias": False, "reorder_and_upcast_attn": False, "resid_pdrop": 0.0,
           "rotary_emb_base": 1000, "rotary_emb_fraction": 1.0, "rotary_emb_interleaved": False,
           "rotary_emb_scale_base": None, "rotary_scaling_factor": None, "scale_attn_by_inverse_layer_idx": False,
           "scale_attn_weights": True, "summary_activation": None, "summary_first_dropout": 0.0,
           "summary_proj_to_labels": True, "summary_type": "cls_index", "summary_use_proj": True,
           "torch_dtype": "float32", "type_vocab_size": 2, "use_cache": True, "use_flash_attn": True,
           "use_rms_norm": False, "use_xentropy": True, "vocab_size": vocab_size}
    if mlx:
        cfg["quantization"] = {"group_size": 64, "bits": 4}
    return cfg


def weights(cfg, rng):
    e, f, v = cfg["n_embd"], cfg["n_inner"], cfg["vocab_size"]
    rand = lambda *shape: rng.normal(0, 0.05, shape).astype(np.float32)
    t = {"embeddings.word_embeddings.weight": rand(v, e) * 10,
         "embeddings.token_type_embeddings.weight": rand(cfg["type_vocab_size"], e) * 4,
         "emb_ln.weight": 1 + rand(e), "emb_ln.bias": rand(e)}
    for i in range(cfg["n_layer"]):
        p = f"encoder.layers.{i}."
        t[p + "attn.Wqkv.weight"] = rand(3 * e, e) * 4
        t[p + "attn.out_proj.weight"] = rand(e, e) * 4
        t[p + "mlp.fc11.weight"] = rand(f, e) * 4
        t[p + "mlp.fc12.weight"] = rand(f, e) * 4
        t[p + "mlp.fc2.weight"] = rand(e, f) * 4
        for norm in ("norm1", "norm2"):
            t[p + norm + ".weight"], t[p + norm + ".bias"] = 1 + rand(e), rand(e)
    return t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("vocab_gguf")
    ap.add_argument("out")
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--mlx", action="store_true", help="4-bit MLX (mlx-embeddings layout), group 64")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    vocab = wordpiece_vocab(args.vocab_gguf)
    cfg = config(30528, args.layers, args.mlx)
    json.dump(cfg, open(os.path.join(args.out, "config.json"), "w"), indent=1)
    json.dump(tokenizer_json(vocab), open(os.path.join(args.out, "tokenizer.json"), "w"), ensure_ascii=False)
    json.dump(tokenizer_config(), open(os.path.join(args.out, "tokenizer_config.json"), "w"), indent=1)
    write_pooling_files(args.out, cfg["n_embd"], "mean")
    tensors = weights(cfg, np.random.default_rng(26))
    write_safetensors(os.path.join(args.out, "model.safetensors"), mlx_quantize(tensors) if args.mlx else tensors)


if __name__ == "__main__":
    main()
