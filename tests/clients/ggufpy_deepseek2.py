"""Rebox-converted GGUFs of DeepSeek-V3 (deepseek2) against llama.cpp's own converter class chain from the
bundle, bit for bit, several files in one process.

For each MODEL_DIR FILE.gguf TYPES triple: the source's values (source_values.py, the dequantized
checkpoint: mcq-v1, MLX or float; MLX's embed_q / unembed_out joined back into the kv_b_proj they were
split from, the inverse of mlx-lm's sanitize) go through DeepseekV2Model -> TextModel -> ModelBase (run as written by
converter_run.py; torch.stack is np.stack, and kv_b_proj is handed over as a small tensor stand-in whose
view / split / transpose are numpy's reshape / split / swapaxes, so the converter's own split of
kv_b_proj into attn_k_b and attn_v_b runs as written): filter_tensors, modify_tensors (the MTP layer
dropped (GLM-4.7-Flash: Glm4MoeLiteModel on top, which keeps it), the experts stacked once all of a layer's are in, e_score_correction_bias -> exp_probs_b.bias)
and gguf-py's tensor name map give every GGUF name and array llama.cpp's converter writes. gguf-py's
GGUFReader reads FILE.gguf: every tensor must be one of those (name, ne, values bit for bit) and every one
of those must be in the file; every deepseek2.* KV set_gguf_parameters writes must be in the file with
the same type and value, and the file may hold no other deepseek2.* KV; the keys other than
rope.scaling.* come in the converter's order (rebox writes the YaRN keys after them).

Usage: ggufpy_deepseek2.py LLAMA_SRC MODEL_DIR FILE.gguf TYPES [MODEL_DIR FILE.gguf TYPES ...]
"""
import ast
import json
import logging
import os
import re
import sys

import numpy as np

from converter_compare import compare_gguf, no_mtp_option, run_triples
from converter_run import Converter, block_id
from source_values import Source

CHAIN = [("deepseek.py", "DeepseekV2Model"), ("base.py", "TextModel"), ("base.py", "ModelBase")]
# GLM-4.7-Flash (model_type glm4_moe_lite): Glm4MoeLiteModel keeps the MTP layers, reads GLM's vocabulary.
LITE_CHAIN = [("glm.py", "Glm4MoeLiteModel")] + CHAIN


class Tensor:
    """The torch.Tensor calls DeepseekV2Model.modify_tensors makes on kv_b_proj, on a numpy array."""

    def __init__(self, array):
        self.array = np.asarray(array)

    @property
    def shape(self):
        return self.array.shape

    def view(self, *shape):
        return Tensor(self.array.reshape(shape))

    def transpose(self, a, b):
        return Tensor(np.swapaxes(self.array, a, b))

    def __array__(self, dtype=None, copy=None):
        return self.array if dtype is None else self.array.astype(dtype)


class Torch:
    @staticmethod
    def stack(items, dim=0):
        return np.stack([np.asarray(i) for i in items], axis=dim)

    @staticmethod
    def split(tensor, sizes, dim=0):
        return tuple(Tensor(part) for part in np.split(tensor.array, np.cumsum(sizes)[:-1], axis=dim))


def kv_b_joined(tensors):
    """mlx-lm's deepseek_v3 stores kv_b_proj split (its sanitize): embed_q [heads, kv_lora, nope] is
    each head's nope rows transposed, unembed_out [heads, v, kv_lora] its v rows. The inverse gives
    the converter the kv_b_proj [heads * (nope + v), kv_lora] a transformers checkpoint holds."""
    out, parts = [], {}
    for name, values in tensors:
        for part in ("embed_q", "unembed_out"):
            if name.endswith(f".self_attn.{part}.weight"):
                parts.setdefault(name[: -len(f"{part}.weight")], {})[part] = np.asarray(values)
                break
        else:
            out.append((name, values))
    for prefix, p in parts.items():
        heads = [np.concatenate([p["embed_q"][h].T, p["unembed_out"][h]]) for h in range(p["embed_q"].shape[0])]
        out.append((prefix + "kv_b_proj.weight", np.concatenate(heads)))
    return out


def class_constants(llama_src, module, class_name):
    """The class-level constant assignments of a converter class (DeepseekV2Model.skip_mtp, merge_expert),
    read from its source as written."""
    body = ast.parse(open(os.path.join(llama_src, "conversion", module), encoding="utf-8").read()).body
    node = next(n for n in body if isinstance(n, ast.ClassDef) and n.name == class_name)
    return {t.id: item.value.value for item in node.body if isinstance(item, ast.Assign)
            and isinstance(item.value, ast.Constant) for t in item.targets if isinstance(t, ast.Name)}


def pre_tokenizer_problems(llama_src, model_dir, reader):
    """The fixture's tokenizer.json carries DeepSeek-V3's three Split regexes: they must be the ones
    llama-vocab.cpp lists for LLAMA_VOCAB_PRE_TYPE_DEEPSEEK3_LLM (which spells \\r \\n as the
    control characters), and the file must name them "deepseek-v3", the name the converter gives
    deepseek-ai/DeepSeek-V3's tokenizer (conversion/base.py) and llama-vocab.cpp maps to that type."""
    vocab_cpp = open(os.path.join(llama_src, "src", "llama-vocab.cpp"), encoding="utf-8").read()
    block = re.search(r"case LLAMA_VOCAB_PRE_TYPE_DEEPSEEK3_LLM:.*?regex_exprs = \{(.*?)\};", vocab_cpp, re.S)
    theirs = [ast.literal_eval('"' + lit + '"') for lit in re.findall(r'"((?:[^"\\]|\\.)*)"', block.group(1))]
    tokenizer = json.load(open(os.path.join(model_dir, "tokenizer.json"), encoding="utf-8"))
    ours = [p["pattern"]["Regex"] for p in tokenizer["pre_tokenizer"]["pretokenizers"] if p["type"] == "Split"]
    problems = []
    if [r.replace("\\r", "\r").replace("\\n", "\n") for r in ours] != theirs:
        problems.append(f"the fixture's Split regexes {ours} are not llama-vocab.cpp's deepseek3 list {theirs}")
    field = reader.fields.get("tokenizer.ggml.pre")
    pre = bytes(field.parts[field.data[0]]).decode() if field else None
    if pre != "deepseek-v3":
        problems.append(f"tokenizer.ggml.pre is {pre!r}, not 'deepseek-v3'")
    return problems


def check(llama_src, model_dir, gguf_path, expect_types):
    problems = []
    expect_types, no_mtp = no_mtp_option(expect_types)
    logging.getLogger("gguf.gguf_writer").setLevel(logging.ERROR)  # expert_count written twice
    src = Source(model_dir)
    lite = src.config.get("model_type") == "glm4_moe_lite"
    assert lite or not no_mtp, "DeepseekV2Model does not take --no-mtp"
    left_out = 0
    chain = LITE_CHAIN if lite else CHAIN
    attrs = {"_experts": None, **class_constants(llama_src, *CHAIN[0])}
    if lite:  # Glm4MoeLiteModel's own constants, and index_tensors' main layer count
        attrs.update(class_constants(llama_src, *LITE_CHAIN[0]))
        attrs["_n_main_layers"] = src.config["num_hidden_layers"]
        attrs.update(no_mtp=no_mtp, mtp_only=False)  # ModelBase's defaults unless --no-mtp
    conv = Converter(llama_src, chain, model_dir, dict(src.config), attrs=attrs,
                     extra_globals={"torch": Torch, "re": re})
    # As ModelBase.write: the tensors first (modify_tensors views kv_b_proj by config.json's
    # num_key_value_heads), then set_gguf_parameters (which sets it to 1).
    wanted, origin = {}, {}
    for name, values in kv_b_joined(src.hf_tensors()):
        kept = conv.obj.filter_tensors((name, None))
        if kept is None and no_mtp and block_id(name) is not None and \
                block_id(name) >= src.config["num_hidden_layers"]:
            left_out += 1  # --no-mtp
            continue
        if kept is None:
            problems.append(f"source tensor {name}: the converter skips it")
            continue
        renamed = kept[0]
        data = Tensor(values) if renamed.endswith("kv_b_proj.weight") else values
        for g, out in conv.obj.modify_tensors(data, renamed, block_id(renamed)):
            if g in wanted:
                problems.append(f"{origin[g]} and {name} both become {g}")
            wanted[g], origin[g] = np.asarray(out, dtype=np.float32), name
    conv.obj.set_gguf_parameters()
    arch = conv.obj.gguf_writer.arch
    want_kvs = {key: (value.type, value.value) for key, value in conv.obj.gguf_writer.kv_data[0].items()
                if not key.startswith("general.")}
    left = [k for d in (conv.obj._experts or []) for k in d]
    if left:
        problems.append(f"experts left unprocessed by the converter: {left[:4]}")

    if no_mtp and left_out == 0:
        problems.append("--no-mtp asked, but the checkpoint has no MTP layer tensor to leave out")
    # ModelOpt NVFP4: each N.scale (llama.cpp's factor of an NVFP4 N.weight) multiplied into N.weight
    # as the graph applies it, against the converter on the dequantized checkpoint.
    found, reader, same, types = compare_gguf(gguf_path, wanted, origin, want_kvs, arch, expect_types,
                                              fold_scales=src.format == "modelopt-nvfp4")
    problems += found
    order = [k for k in want_kvs if k.startswith(arch + ".") and ".rope.scaling." not in k]
    got = [k for k in reader.fields if k.startswith(arch + ".") and ".rope.scaling." not in k]
    if got != order:
        problems.append(f"{arch}.* keys (without rope.scaling.*) in the order {got}, the converter's {order}")
    if lite:  # _set_vocab_glm names GLM's tokenizer "glm4"
        field = reader.fields.get("tokenizer.ggml.pre")
        pre = bytes(field.parts[field.data[0]]).decode() if field else None
        if pre != "glm4":
            problems.append(f"tokenizer.ggml.pre is {pre!r}, not 'glm4'")
    else:
        problems += pre_tokenizer_problems(llama_src, model_dir, reader)
    print(f"  {gguf_path.rsplit('/', 1)[-1]} ({src.format}): {same}/{len(reader.tensors)} tensors and "
          f"{len(want_kvs)} {arch} KVs as llama.cpp's converter writes them; types {types}")
    return [f"{gguf_path}: {p}" for p in problems]


run_triples(check, sys.argv, __doc__)
