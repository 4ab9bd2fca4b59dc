"""A rebox-converted mixture-of-experts GGUF (qwen3moe, qwen2moe, mixtral as llama) against llama.cpp's
own conversion code, bit for bit.

gguf-py (GGUFReader + gguf.quants.dequantize) reads every tensor of FILE.gguf. The expected tensors are
what the bundle's converter class chain (converter_run.py: Qwen3MoeModel -> Qwen2MoeModel, or LlamaModel
for Mixtral, -> TextModel -> ModelBase, run as written; its modify_tensors stacks the experts with
torch.stack, numpy's np.stack here, and for Mixtral permutes Q/K) yields when fed the source values read in
numpy by source_values.py (mcq-v1, MLX or float). The converter reads Hugging Face checkpoints, which
hold one tensor per expert; an MLX switch_mlp tensor [E, out, in] is handed to it as those E tensors
(slice e = expert e, the inverse of mlx-lm's sanitize, which stacks experts.{e} in index order; Mixtral's
switch_mlp gate/down/up are w1/w2/w3). Every GGUF tensor must be one the converter yields, with the
same shape and the same float32 bit patterns, and the other way round. Every key the converter's
set_gguf_parameters writes (gguf-py's own GGUFWriter) must be in the file with the same GGUF type and
value; general.* are left out (general.file_type follows the outtype, docs/gguf.md).

Usage: ggufpy_moe.py LLAMA_SRC MODEL_DIR FILE.gguf [--expect-types T1,T2,...]
"""
import sys

import numpy as np
import gguf

from converter_run import Converter, block_id
from source_values import Source

llama_src, model_dir, gguf_path = sys.argv[1:4]
expect_types = set()
if "--expect-types" in sys.argv:
    expect_types = set(sys.argv[sys.argv.index("--expect-types") + 1].split(","))
problems = []

src = Source(model_dir)
cfg = src.config
mixtral = cfg["model_type"] == "mixtral"
SWITCH = {"gate_proj": "w1", "down_proj": "w2", "up_proj": "w3"} if mixtral else {
    "gate_proj": "gate_proj", "down_proj": "down_proj", "up_proj": "up_proj"}

# The source as a transformers checkpoint: names with "model." (lm_head without), experts one by one.
hf_tensors = src.hf_tensors(SWITCH)


class Torch:
    """torch as the experts' merge uses it: torch.stack is np.stack."""

    @staticmethod
    def stack(items, dim=0):
        return np.stack(items, axis=dim)


CHAIN = {"qwen3_moe": [("qwen.py", "Qwen3MoeModel"), ("qwen.py", "Qwen2MoeModel")],
         "qwen2_moe": [("qwen.py", "Qwen2MoeModel")],
         "mixtral": [("llama.py", "LlamaModel")]}[cfg["model_type"]]
# the classes' own class attributes: _experts (None, the per-layer buffer modify_tensors fills) in both MoE
# classes, undo_permute (True) in LlamaModel
attrs = {"_experts": None, **({"undo_permute": True} if mixtral else {})}
conv = Converter(llama_src, CHAIN + [("base.py", "TextModel"), ("base.py", "ModelBase")], model_dir, dict(cfg),
                 attrs=attrs, extra_globals={"torch": Torch})
want_all = {}
for name, data in hf_tensors:
    for gguf_name, array in conv.tensors(name, data, block_id(name)):
        want_all[gguf_name] = np.asarray(array, dtype=np.float32)
left = [k for d in (conv.obj._experts or []) for k in d]
if left:
    problems.append(f"experts left unprocessed by the converter: {left[:4]}")

reader = gguf.GGUFReader(gguf_path)
seen, types = set(), {}
same = stacked = 0
for t in reader.tensors:
    seen.add(t.name)
    types[t.tensor_type.name] = types.get(t.tensor_type.name, 0) + 1
    if t.name not in want_all:
        problems.append(f"GGUF tensor {t.name}: llama.cpp's converter yields no such tensor")
        continue
    want = want_all[t.name]
    if t.tensor_type == gguf.GGMLQuantizationType.F32:
        got = np.asarray(t.data, dtype=np.float32)
    else:
        got = gguf.quants.dequantize(t.data, t.tensor_type)
    ne = [int(x) for x in t.shape]
    if ne[::-1] != list(want.shape):
        problems.append(f"{t.name}: ne {ne}, expected the reverse of {list(want.shape)}")
        continue
    got = got.reshape(want.shape)
    diff = got.view(np.uint32) != want.view(np.uint32)
    if diff.any():
        i = tuple(int(x) for x in np.argwhere(diff)[0])
        problems.append(f"{t.name} ({t.tensor_type.name}): {int(diff.sum())} of {want.size} values differ from "
                        f"llama.cpp's conversion; first at {i}: gguf {got[i]!r}, expected {want[i]!r}")
        continue
    same += 1
    if len(want.shape) == 3:
        stacked += 1
        if np.array_equal(want[0], want[1]):
            problems.append(f"{t.name}: experts 0 and 1 are equal; the fixture cannot tell their order")
    if "ffn_gate_inp" in t.name and t.tensor_type != gguf.GGMLQuantizationType.F32:
        problems.append(f"{t.name}: router stored as {t.tensor_type.name}, expected F32")
for name in want_all:
    if name not in seen:
        problems.append(f"{name}: llama.cpp's converter writes it; missing from the GGUF")
if stacked != 3 * cfg["num_hidden_layers"]:
    problems.append(f"{stacked} stacked expert tensors checked, expected 3 per layer")
if expect_types and set(types) != expect_types:
    problems.append(f"tensor types {sorted(types)}, expected {sorted(expect_types)}")

# Every key set_gguf_parameters writes, with gguf-py's type, compared with the file.
conv.obj.set_gguf_parameters()
want_kvs = {k: (v.type, v.value) for k, v in conv.obj.gguf_writer.kv_data[0].items() if not k.startswith("general.")}
arch = bytes(reader.fields["general.architecture"].parts[-1]).decode()
keys_checked = 0
for key, (vtype, value) in want_kvs.items():
    field = reader.fields.get(key)
    if field is None:
        problems.append(f"{key}: llama.cpp's converter writes {vtype.name} {value!r}; missing from the GGUF")
        continue
    got = field.parts[field.data[0]]
    got = bytes(got).decode("utf-8") if vtype == gguf.GGUFValueType.STRING else got[0]
    if field.types[0] != vtype:
        problems.append(f"{key}: type {field.types[0].name} in the GGUF, llama.cpp's converter writes {vtype.name}")
    elif vtype == gguf.GGUFValueType.FLOAT32:
        if np.float32(got).view(np.uint32) != np.float32(value).view(np.uint32):
            problems.append(f"{key}: {got!r} in the GGUF, llama.cpp's converter writes {value!r}")
    elif got != value:
        problems.append(f"{key}: {got!r} in the GGUF, llama.cpp's converter writes {value!r}")
    keys_checked += 1
if keys_checked < 10:
    problems.append(f"only {keys_checked} keys written by set_gguf_parameters; the converter run is incomplete")

print(f"  {gguf_path.rsplit('/', 1)[-1]} ({src.format}, {arch}): {same}/{len(reader.tensors)} tensors equal to "
      f"llama.cpp's conversion of the source ({stacked} stacked from {cfg.get('num_experts', cfg.get('num_local_experts'))} "
      f"experts); {keys_checked} keys as set_gguf_parameters writes them; types {types}")
if problems:
    print(f"FAIL: {gguf_path} vs {model_dir}:")
    for p in problems[:40]:
        print("  " + p)
    sys.exit(1)
