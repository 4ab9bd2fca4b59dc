"""Rebox-converted GGUFs of the llama-shaped families (seed_oss, olmo2 / olmo3, smollm3, mistral3, apertus) against
llama.cpp's own converter class chain from the bundle, bit for bit, several files in one process.

For each MODEL_DIR FILE.gguf pair: the source's values (source_values.py: mcq-v1, MLX or float, the
dequantized checkpoint) are passed through the family's converter chain (e.g. SeedOssModel -> TextModel ->
ModelBase, run as written by converter_run.py): filter_tensors, modify_tensors and gguf-py's own tensor name
map give every GGUF name and array llama.cpp's converter writes, generate_extra_tensors the tensors it
computes from config.json. gguf-py's GGUFReader reads FILE.gguf: every
tensor must be one of those (name, ne, values bit for bit after gguf.quants.dequantize), and every one of
those must be in the file (a tensor the converter skips is a problem, but for a multimodal family's vision tower
and projector). Every KV set_gguf_parameters and modify_tensors write (apertus' xielu.* arrays, built from
the layers' scalar tensors) must be in the file with the same type and value (arrays element for element),
and the file may hold no other {arch}.* or xielu.* KV (pooling_type aside, which rebox adds from
modules.json). general.architecture must be the converter's.

Usage: ggufpy_llama_shaped.py FAMILY LLAMA_SRC MODEL_DIR FILE.gguf TYPES [MODEL_DIR FILE.gguf TYPES ...]
  TYPES: the tensor types the file must hold, e.g. F32,Q4_1
"""
import math
import sys

import numpy as np
import gguf

from converter_compare import compare_gguf
from converter_run import Converter, block_id
from source_values import Source
from torch_shim import Torch

CHAINS = {
    "seed_oss": [("olmo.py", "SeedOssModel")],
    "olmo2": [("olmo.py", "Olmo2Model")],
    "olmo3": [("olmo.py", "Olmo2Model")],
    "smollm3": [("llama.py", "SmolLM3Model"), ("llama.py", "LlamaModel")],
    # Mistral3Model hands everything to its nested Ministral3Model (a LlamaModel) for these configs
    "mistral3": [("mistral3.py", "Mistral3Model.Ministral3Model"), ("llama.py", "LlamaModel")],
    "apertus": [("llama.py", "ApertusModel"), ("llama.py", "LlamaModel")],
}
# Class attributes the chain's methods read: LlamaModel's (ApertusModel sets undo_permute False) and
# ApertusModel's dicts of xIELU values (class-level in the source, fresh per file here).
ATTRS = {"apertus": lambda: {"_experts": None, "undo_permute": False, "_alpha_n": {}, "_alpha_p": {},
                             "_beta": {}, "_eps": {}}}


class TorchScalar(np.ndarray):
    """A one-value array answering the torch calls ApertusModel makes on it (.to("cpu").float().item())."""

    def to(self, *args, **kwargs):
        return self

    def float(self):
        return self
# The source tensors a family's converter leaves out of the text GGUF (a vision tower), after "model."
VISION = {"mistral3": ("vision_tower.", "multi_modal_projector.")}
# Source tensors the converter takes into KVs instead of tensors (ApertusModel: the xielu.* arrays)
INTO_KVS = {"apertus": (".mlp.act_fn.alpha_n", ".mlp.act_fn.alpha_p", ".mlp.act_fn.beta", ".mlp.act_fn.eps")}
family, llama_src = sys.argv[1:3]
triples = sys.argv[3:]
assert family in CHAINS and triples and len(triples) % 3 == 0, __doc__
chain = CHAINS[family] + [("base.py", "TextModel"), ("base.py", "ModelBase")]


def hf_name(name):
    """The name in a Hugging Face checkpoint (mcq-v1 fixtures store the decoder without "model.")."""
    return name if name.startswith(("model.", "lm_head.")) else "model." + name


def check(model_dir, gguf_path, expect_types):
    problems = []
    src = Source(model_dir)
    # LlamaModel's class attributes its methods read (undo_permute: q/k rows permuted)
    attrs = ATTRS[family]() if family in ATTRS else (
        {"_experts": None, "undo_permute": True} if ("llama.py", "LlamaModel") in chain else {})
    conv = Converter(llama_src, chain, model_dir, dict(src.config), attrs=attrs,
                     extra_globals={"torch": Torch, "math": math})
    conv.obj.set_gguf_parameters()
    arch = conv.obj.gguf_writer.arch
    wanted, origin = {}, {}
    for g, data in conv.obj.generate_extra_tensors():  # rope_freqs and the like
        wanted[g], origin[g] = np.asarray(data, dtype=np.float32), "(generated from config.json)"
    for name in src.names():
        values = src.values(name)
        if np.size(values) == 1:
            values = np.asarray(values).view(TorchScalar)
        converted = conv.tensors(hf_name(name), values, block_id(name))
        unprefixed = name[len("model."):] if name.startswith("model.") else name
        if not converted and not unprefixed.startswith(VISION.get(family, ())) and \
                not name.endswith(INTO_KVS.get(family, ())):
            problems.append(f"source tensor {name}: the converter skips it")
        if converted and unprefixed.startswith(VISION.get(family, ("-",))):
            problems.append(f"source tensor {name}: the converter keeps a vision tensor")
        for g, data in converted:
            if g in wanted:
                problems.append(f"{origin[g]} and {name} both become {g}")
            wanted[g], origin[g] = np.asarray(data, dtype=np.float32), name

    # every KV, those modify_tensors added while reading the tensors included
    want_kvs = {key: (value.type, value.value) for key, value in conv.obj.gguf_writer.kv_data[0].items()
                if not key.startswith("general.")}
    found, reader, same, types = compare_gguf(gguf_path, wanted, origin, want_kvs, arch, expect_types,
                                               own_kvs=(arch + ".pooling_type",), kv_prefixes=("xielu.",))
    problems += found
    print(f"  {gguf_path.rsplit('/', 1)[-1]} ({src.format}): {same}/{len(reader.tensors)} tensors and "
          f"{len(want_kvs)} {arch} KVs as llama.cpp's converter writes them; types {types}")
    return [f"{gguf_path}: {p}" for p in problems]


problems = []
for i in range(0, len(triples), 3):
    problems += check(*triples[i:i + 3])
if problems:
    print("FAIL:")
    for p in problems[:60]:
        print("  " + p)
    sys.exit(1)
