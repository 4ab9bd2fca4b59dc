"""A tiny gpt-oss checkpoint as openai publishes gpt-oss-20b (config.json, model.safetensors,
tokenizer.json / tokenizer_config.json, chat_template.jinja), written here with numpy and nothing of
rebox, for tests/clients/test_gptoss_arch.sh.

The experts are packed from the format's own definition (OCP Microscaling MXFP4, as openai's
gpt_oss/torch/weights.py reads it): `P_blocks` U8 [E, rows, cols/32, 16], byte j of a 32-value block
holding element 2j in its low nibble and 2j+1 in its high nibble; `P_scales` U8 [E, rows, cols/32],
an E8M0 exponent (value 2^(s-127)); an E2M1 code is sign << 3 | index into 0, .5, 1, 1.5, 2, 3, 4, 6.
gate_up_proj interleaves gate (even rows) and up (odd rows), as does its bias. Every other tensor is
BF16 (round to nearest even from float32). The tokenizer files are the real o200k ones given.

Usage: gptoss_fixture.py OUT_DIR TOKENIZER_DIR [--defect scale-nan|scale-shape|swiglu|layer-types]
       [--seed N]
"""
import json
import os
import shutil
import sys

import numpy as np

out_dir, tok_dir = sys.argv[1:3]
defect = sys.argv[sys.argv.index("--defect") + 1] if "--defect" in sys.argv else ""
seed = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else 1
rng = np.random.default_rng(seed)

H, L, NH, NKV, HD, F, E, K, V = 64, 2, 4, 2, 32, 64, 4, 2, 201088
config = {
    "architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss",
    "hidden_size": H, "num_hidden_layers": L, "num_attention_heads": NH, "num_key_value_heads": NKV,
    "head_dim": HD, "intermediate_size": F, "num_local_experts": E, "num_experts_per_tok": K,
    "experts_per_token": K, "vocab_size": V, "max_position_embeddings": 131072,
    "sliding_window": 8, "layer_types": ["sliding_attention", "full_attention"],
    "rope_theta": 150000, "rope_scaling": {"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0,
                                           "beta_slow": 1.0, "truncate": False,
                                           "original_max_position_embeddings": 4096},
    "rms_norm_eps": 1e-05, "swiglu_limit": 7.0, "attention_bias": True, "attention_dropout": 0.0,
    "hidden_act": "silu", "initializer_range": 0.02, "tie_word_embeddings": False,
    "eos_token_id": 200002, "pad_token_id": 199999, "output_router_logits": False,
    "router_aux_loss_coef": 0.9, "use_cache": True, "torch_dtype": "bfloat16",
    "quantization_config": {"quant_method": "mxfp4", "modules_to_not_convert": [
        "model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens", "lm_head"]},
}
if defect == "swiglu":
    config["swiglu_limit"] = 6.0
if defect == "layer-types":
    config["layer_types"] = ["full_attention", "sliding_attention"]


def bf16(a):
    u = np.asarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def mxfp4(rows, cols):
    """[E, rows, cols] random E2M1 codes -> (blocks U8 [E, rows, cols/32, 16], scales U8)."""
    codes = rng.integers(0, 16, size=(E, rows, cols), dtype=np.uint8)
    pairs = codes.reshape(E, rows, cols // 32, 16, 2)
    blocks = (pairs[..., 0] | (pairs[..., 1] << 4)).astype(np.uint8)
    scales = rng.integers(119, 125, size=(E, rows, cols // 32), dtype=np.uint8)
    return blocks, scales


tensors = {}  # name -> (dtype, array)


def put(name, array, dtype="BF16"):
    tensors[name] = (dtype, bf16(array) if dtype == "BF16" else array)


def normal(*shape, scale=0.05):
    return rng.normal(0.0, scale, size=shape).astype(np.float32)


put("model.embed_tokens.weight", normal(V, H, scale=0.5))
put("lm_head.weight", normal(V, H))
put("model.norm.weight", 1.0 + normal(H, scale=0.1))
for i in range(L):
    p = f"model.layers.{i}."
    put(p + "input_layernorm.weight", 1.0 + normal(H, scale=0.1))
    put(p + "post_attention_layernorm.weight", 1.0 + normal(H, scale=0.1))
    put(p + "self_attn.q_proj.weight", normal(NH * HD, H, scale=0.2))
    put(p + "self_attn.q_proj.bias", normal(NH * HD))
    put(p + "self_attn.k_proj.weight", normal(NKV * HD, H, scale=0.2))
    put(p + "self_attn.k_proj.bias", normal(NKV * HD))
    put(p + "self_attn.v_proj.weight", normal(NKV * HD, H, scale=0.2))
    put(p + "self_attn.v_proj.bias", normal(NKV * HD))
    put(p + "self_attn.o_proj.weight", normal(H, NH * HD, scale=0.1))
    put(p + "self_attn.o_proj.bias", normal(H))
    put(p + "self_attn.sinks", normal(NH, scale=1.0))
    put(p + "mlp.router.weight", normal(E, H, scale=0.5))
    put(p + "mlp.router.bias", normal(E, scale=0.2))
    blocks, scales = mxfp4(2 * F, H)
    if defect == "scale-nan" and i == 0:
        scales[1, 3, 1] = 0xFF
    if defect == "scale-shape" and i == 1:
        scales = scales[:, :-1, :]
    put(p + "mlp.experts.gate_up_proj_blocks", blocks, "U8")
    put(p + "mlp.experts.gate_up_proj_scales", scales, "U8")
    put(p + "mlp.experts.gate_up_proj_bias", normal(E, 2 * F, scale=0.1))
    blocks, scales = mxfp4(H, F)
    put(p + "mlp.experts.down_proj_blocks", blocks, "U8")
    put(p + "mlp.experts.down_proj_scales", scales, "U8")
    put(p + "mlp.experts.down_proj_bias", normal(E, H, scale=0.1))

os.makedirs(out_dir, exist_ok=True)
header, offset, chunks = {}, 0, []
for name in sorted(tensors):
    dtype, array = tensors[name]
    data = np.ascontiguousarray(array).tobytes()
    header[name] = {"dtype": dtype, "shape": list(array.shape), "data_offsets": [offset, offset + len(data)]}
    offset += len(data)
    chunks.append(data)
header["__metadata__"] = {"format": "pt"}
text = json.dumps(header).encode()
text += b" " * (-len(text) % 8)
with open(os.path.join(out_dir, "model.safetensors"), "wb") as f:
    f.write(len(text).to_bytes(8, "little"))
    f.write(text)
    for c in chunks:
        f.write(c)
with open(os.path.join(out_dir, "config.json"), "w") as f:
    json.dump(config, f, indent=2)
for name in ("tokenizer.json", "tokenizer_config.json"):
    shutil.copyfile(os.path.join(tok_dir, name), os.path.join(out_dir, name))
with open(os.path.join(out_dir, "chat_template.jinja"), "w") as f:
    f.write("{%- for message in messages -%}<|start|>{{ message['role'] }}<|message|>"
            "{{ message['content'] }}<|end|>{%- endfor -%}"
            "{%- if add_generation_prompt -%}<|start|>assistant{%- endif -%}")
# The real repository also ships openai's own copy of the weights under original/ and metal/: ignored.
for sub, name in (("original", "model.safetensors"), ("metal", "model.bin")):
    os.makedirs(os.path.join(out_dir, sub), exist_ok=True)
    head = json.dumps({"embedding.weight": {"dtype": "BF16", "shape": [2, 2], "data_offsets": [0, 8]}}).encode()
    head += b" " * (-len(head) % 8)
    with open(os.path.join(out_dir, sub, name), "wb") as f:
        f.write(len(head).to_bytes(8, "little") + head + bytes(8))
with open(os.path.join(out_dir, "original", "config.json"), "w") as f:
    json.dump({"num_hidden_layers": L}, f)
