"""Grows one of rebox-mkfixture's tiny MoE fixtures to the tensor count of the largest release of its
family, with real tensor names and tiny shapes: every tensor is a copy of the template's tensor of
the same role (layer kind, expert index modulo the template's expert count) and only the routers,
whose rows are the expert count, are drawn anew. Names and entry count are the release's; the bytes
stay small. Shards are cut in name order with a model.safetensors.index.json, as releases are.

qwen35: nvidia/Qwen3.5-397B-A17B-NVFP4. 60 layers (three Gated DeltaNet layers, then one gated-
  attention layer), 512 routed experts per layer, each expert's gate / up / down projection in NVFP4
  as ModelOpt stores them (weight, weight_scale, weight_scale_2, input_scale), and, as in that
  release, everything else BF16: attention, the linear attention, routers, the shared expert, and
  the MTP layer with its 512 experts. Templates: rebox-mkfixture --preset tiny --arch qwen35moe
  --format float (everything but the routed experts) and --format modelopt-nvfp4 (the experts,
  moe_intermediate_size doubled here to 64, one NVFP4 row block).
kimi: moonshotai/Kimi-K2-Thinking. 61 layers (layer 0 dense), 384 routed experts per MoE layer in
  compressed-tensors pack-quantized int4 (weight_packed, weight_scale, weight_shape), the rest BF16,
  no MTP layer. Template: rebox-mkfixture --preset tiny --arch deepseek2 --format compressed-tensors
  (given twice).

Usage: scale_checkpoint.py qwen35|kimi TEMPLATE EXPERT_TEMPLATE OUT_DIR [--layers N] [--experts N]
                           [--shards N]
"""
import argparse
import json
import os
import random
import re
import shutil
import struct

FAMILIES = {
    # layers, experts, shards, experts per token
    "qwen35": (60, 512, 94, 10),
    "kimi": (61, 384, 62, 8),
}


def read_tensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        base = 8 + n
        header.pop("__metadata__", None)
        blobs = {}
        for name, info in header.items():
            start, end = info["data_offsets"]
            f.seek(base + start)
            blobs[name] = (info["dtype"], info["shape"], f.read(end - start))
    return blobs


def widened(name, dtype, shape, data):
    """A Qwen3.5 routed expert's projection with moe_intermediate_size doubled: gate / up get their
    rows twice, down each row's bytes twice."""
    if len(shape) != 2:
        return dtype, shape, data
    if ".down_proj." in name:
        width = len(data) // shape[0]
        rows = b"".join(data[r * width:(r + 1) * width] * 2 for r in range(shape[0]))
        return dtype, [shape[0], shape[1] * 2], rows
    return dtype, [shape[0] * 2, shape[1]], data * 2


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("family", choices=sorted(FAMILIES))
    ap.add_argument("template")
    ap.add_argument("expert_template")
    ap.add_argument("out")
    ap.add_argument("--layers", type=int)
    ap.add_argument("--experts", type=int)
    ap.add_argument("--shards", type=int)
    args = ap.parse_args()
    layers, experts, shards, used = FAMILIES[args.family]
    layers = args.layers or layers
    experts = args.experts or experts
    shards = args.shards or shards
    qwen = args.family == "qwen35"

    config = json.load(open(os.path.join(args.template, "config.json")))
    hidden = config["hidden_size"]
    template_experts = config["num_experts"] if qwen else config["n_routed_experts"]
    blobs = read_tensors(os.path.join(args.template, "model.safetensors"))
    routed = re.compile(r"^model\.layers\.\d+\.mlp\.experts\.")
    blobs = {n: b for n, b in blobs.items() if not routed.match(n)}
    blobs.update({n: (widened(n, *b) if qwen else b) for n, b in read_tensors(
        os.path.join(args.expert_template, "model.safetensors")).items() if routed.match(n)})
    if qwen:  # the MTP layer's BF16 experts are widened with the routed ones
        config["moe_intermediate_size"] *= 2
        blobs = {n: (widened(n, *b) if n.startswith("mtp.") and ".mlp.experts." in n else b)
                 for n, b in blobs.items()}

    # The template layer each layer copies: qwen35 by layer kind (interval 4), kimi layer 0 dense
    # and layer 1 for every MoE layer (template layer 3, the MTP stand-in, is left out).
    if qwen:
        kinds = config["layer_types"]
        layer_types = ["full_attention" if (i + 1) % 4 == 0 else "linear_attention"
                       for i in range(layers)]
        source_of = [kinds.index(kind) for kind in layer_types]
    else:
        dense = config["first_k_dense_replace"]
        source_of = [min(i, dense) for i in range(layers)]

    layer_re = re.compile(r"^model\.layers\.(\d+)\.(.*)$")
    expert_re = re.compile(r"^(.*\.experts\.)(\d+)\.(.*)$")
    per_layer, others = {}, []
    for name in blobs:
        m = layer_re.match(name)
        if m:
            per_layer.setdefault(int(m.group(1)), []).append(m.group(2))
        else:
            others.append(name)
    rng = random.Random(7)

    def router_rows(dtype, shape):
        rows = experts
        count = rows * (shape[1] if len(shape) == 2 else 1)
        if dtype == "F32":
            data = b"".join(struct.pack("<f", rng.uniform(-0.1, 0.1)) for _ in range(count))
        else:  # BF16 of magnitude below 0.125, either sign
            data = b"".join(struct.pack("<H", rng.randrange(0x3C00, 0x3E00) | rng.choice((0, 0x8000)))
                            for _ in range(count))
        return [rows] + list(shape[1:]), data

    entries = []

    def emit(prefix, suffixes, source_prefix):
        for suffix in suffixes:
            e = expert_re.match(suffix)
            if e:
                if int(e.group(2)) != 0:
                    continue
                for expert in range(experts):
                    src = f"{source_prefix}{e.group(1)}{expert % template_experts}.{e.group(3)}"
                    entries.append((f"{prefix}{e.group(1)}{expert}.{e.group(3)}", *blobs[src]))
            elif suffix.endswith("mlp.gate.weight") or suffix.endswith("e_score_correction_bias"):
                dtype, shape, _ = blobs[source_prefix + suffix]
                entries.append((prefix + suffix, dtype, *router_rows(dtype, shape)))
            else:
                entries.append((prefix + suffix, *blobs[source_prefix + suffix]))

    for layer in range(layers):
        emit(f"model.layers.{layer}.", per_layer[source_of[layer]],
             f"model.layers.{source_of[layer]}.")
    mtp = [n[len("mtp."):] for n in others if n.startswith("mtp.")]
    emit("mtp.", mtp, "mtp.")
    entries += [(n, *blobs[n]) for n in others if not n.startswith("mtp.")]
    entries.sort(key=lambda e: e[0])

    os.makedirs(args.out, exist_ok=True)
    for stale in os.listdir(args.out):
        if stale.startswith("model") and (stale.endswith(".safetensors") or stale.endswith(".json")):
            os.remove(os.path.join(args.out, stale))
    per_shard = -(-len(entries) // shards)
    weight_map = {}
    for shard in range(shards):
        part = entries[shard * per_shard:(shard + 1) * per_shard]
        file = (f"model-{shard + 1:05d}-of-{shards:05d}.safetensors" if shards > 1
                else "model.safetensors")
        header, offset = {}, 0
        for name, dtype, shape, data in part:
            header[name] = {"dtype": dtype, "shape": shape,
                            "data_offsets": [offset, offset + len(data)]}
            offset += len(data)
            weight_map[name] = file
        raw = json.dumps(header, separators=(",", ":")).encode()
        raw += b" " * (-len(raw) % 8)
        with open(os.path.join(args.out, file), "wb") as f:
            f.write(struct.pack("<Q", len(raw)))
            f.write(raw)
            for _, _, _, data in part:
                f.write(data)
    if shards > 1:
        with open(os.path.join(args.out, "model.safetensors.index.json"), "w") as f:
            json.dump({"metadata": {"total_size": sum(len(e[3]) for e in entries)},
                       "weight_map": weight_map}, f, indent=2)

    config["num_hidden_layers"] = layers
    config["num_experts_per_tok"] = min(used, experts)
    if qwen:
        config.update(num_experts=experts, full_attention_interval=4, layer_types=layer_types)
    else:
        config.update(n_routed_experts=experts, num_nextn_predict_layers=0)
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    for extra in os.listdir(args.expert_template):
        if not extra.startswith("model") and extra != "config.json":
            shutil.copy(os.path.join(args.expert_template, extra), os.path.join(args.out, extra))
    print(len(entries))


if __name__ == "__main__":
    main()
