"""Re-stores a Qwen3-VL fixture (rebox-mkfixture --arch qwen3_vl, BF16) as Qwen3-VL-MoE, written here
from Qwen/Qwen3-VL-30B-A3B-Instruct's published layout (config.json: Qwen3VLMoeForConditionalGeneration,
model_type qwen3_vl_moe, text_config qwen3_vl_moe_text with num_experts, num_experts_per_tok,
moe_intermediate_size, decoder_sparse_step 1, mlp_only_layers []; model.safetensors: every
layer's model.language_model.layers.N.mlp.{gate_proj,up_proj,down_proj}.weight replaced by the
router mlp.gate.weight [E, hidden] and the experts fused and transposed as transformers stores
them, mlp.experts.gate_up_proj [E, hidden, 2F] (gate columns, then up) and
mlp.experts.down_proj [E, F, hidden], no ".weight"; BF16, seeded). The vision tower is kept.

Usage: qwen3vl_moe_restore.py QWEN3VL_DIR OUT_DIR
"""
import json
import os
import shutil
import sys

import numpy as np

EXPERTS, USED, FFN = 4, 2, 32
src, dst = sys.argv[1:3]
shutil.copytree(src, dst)
rng = np.random.default_rng(30)


def bf16(values):
    bits = np.asarray(values, dtype=np.float32).view(np.uint32)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype("<u2").tobytes()


config = json.load(open(f"{dst}/config.json"))
text = config["text_config"]
hidden = text["hidden_size"]
for f in sorted(x for x in os.listdir(src) if x.endswith(".safetensors")):
    raw = open(f"{src}/{f}", "rb").read()
    n = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8 : 8 + n])
    meta = header.pop("__metadata__", None)
    out, blobs, offset = {}, [], 0

    def add(name, shape, data, dtype="BF16"):
        global offset
        out[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)

    for name, e in header.items():
        begin, end = e["data_offsets"]
        if ".mlp.gate_proj.weight" in name and "language_model" in name:
            p = name[: -len("gate_proj.weight")]
            # a decisive router (wide logits), so BF16 and F32 arithmetic pick the same experts
            add(p + "gate.weight", [EXPERTS, hidden], bf16(rng.uniform(-1, 1, (EXPERTS, hidden))))
            add(p + "experts.gate_up_proj", [EXPERTS, hidden, 2 * FFN],
                bf16(rng.uniform(-1, 1, (EXPERTS, hidden, 2 * FFN)) / np.sqrt(hidden)))
            add(p + "experts.down_proj", [EXPERTS, FFN, hidden],
                bf16(rng.uniform(-1, 1, (EXPERTS, FFN, hidden)) / np.sqrt(FFN)))
            continue
        if (".mlp.up_proj.weight" in name or ".mlp.down_proj.weight" in name) and "language_model" in name:
            continue
        add(name, e["shape"], raw[8 + n + begin : 8 + n + end], e["dtype"])
    if meta:
        out["__metadata__"] = meta
    head = json.dumps(out).encode()
    head += b" " * ((8 - len(head) % 8) % 8)
    with open(f"{dst}/{f}", "wb") as w:
        w.write(len(head).to_bytes(8, "little") + head + b"".join(blobs))
config["architectures"] = ["Qwen3VLMoeForConditionalGeneration"]
config["model_type"] = "qwen3_vl_moe"
text.update({"model_type": "qwen3_vl_moe_text", "num_experts": EXPERTS, "num_experts_per_tok": USED,
             "moe_intermediate_size": FFN, "decoder_sparse_step": 1, "mlp_only_layers": [],
             "norm_topk_prob": True})
config["vision_config"]["model_type"] = "qwen3_vl_moe"
json.dump(config, open(f"{dst}/config.json", "w"), indent=2)
