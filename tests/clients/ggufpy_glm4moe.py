"""Rebox-converted GGUFs of GLM-4.5 MoE (glm4moe) against llama.cpp's own converter class chain from the
bundle, bit for bit, several files in one process.

For each MODEL_DIR FILE.gguf TYPES triple: the source's values (source_values.py, the dequantized
checkpoint: mcq-v1, MLX or float) go through Glm4MoeModel -> TextModel -> ModelBase (run as written by
converter_run.py; torch.stack is np.stack): filter_tensors (e_score_correction_bias -> .bias, the MTP
layers kept), modify_tensors (the experts stacked once all of a layer's are in) and gguf-py's tensor name
map give every GGUF name and array llama.cpp's converter writes. An MLX switch_mlp tensor [E, out, in] is
handed to it as the E per-expert tensors a transformers checkpoint holds (the inverse of mlx-lm's
sanitize). gguf-py's GGUFReader reads FILE.gguf: every tensor must be one of those (name, ne, values bit
for bit) and every one of those must be in the file; every glm4moe.* KV set_gguf_parameters writes must
be in the file with the same type and value, in the same order, and the file may hold no other glm4moe.*
KV. tokenizer.ggml.pre must be "glm4" (_set_vocab_glm names GLM's tokenizer by its hash).

Usage: ggufpy_glm4moe.py LLAMA_SRC MODEL_DIR FILE.gguf TYPES [MODEL_DIR FILE.gguf TYPES ...]
"""
import logging
import re
import sys

import numpy as np

from converter_compare import compare_gguf, field_value, no_mtp_option, run_triples
from converter_run import Converter, block_id
from source_values import Source

CHAIN = [("glm.py", "Glm4MoeModel"), ("base.py", "TextModel"), ("base.py", "ModelBase")]


class Torch:
    @staticmethod
    def stack(items, dim=0):
        return np.stack(items, axis=dim)


def check(llama_src, model_dir, gguf_path, expect_types):
    problems = []
    expect_types, no_mtp = no_mtp_option(expect_types)
    logging.getLogger("gguf.gguf_writer").setLevel(logging.ERROR)  # expert_count written twice
    src = Source(model_dir)
    layers = src.config["num_hidden_layers"]
    attrs = {"_experts": None, "no_mtp": no_mtp, "mtp_only": False, "_n_main_layers": layers}
    left_out = 0
    conv = Converter(llama_src, CHAIN, model_dir, dict(src.config), attrs=attrs,
                     extra_globals={"torch": Torch, "re": re})
    conv.obj.set_gguf_parameters()
    arch = conv.obj.gguf_writer.arch
    want_kvs = {key: (value.type, value.value) for key, value in conv.obj.gguf_writer.kv_data[0].items()
                if not key.startswith("general.")}
    wanted, origin = {}, {}
    for name, values in src.hf_tensors():
        kept = conv.obj.filter_tensors((name, None))
        if kept is None and no_mtp and block_id(name) is not None and block_id(name) >= layers:
            left_out += 1  # --no-mtp
            continue
        if kept is None:
            problems.append(f"source tensor {name}: the converter skips it")
            continue
        renamed = kept[0]
        for g, data in conv.obj.modify_tensors(values, renamed, block_id(renamed)):
            if g in wanted:
                problems.append(f"{origin[g]} and {name} both become {g}")
            wanted[g], origin[g] = np.asarray(data, dtype=np.float32), name
    left = [k for d in (conv.obj._experts or []) for k in d]
    if left:
        problems.append(f"experts left unprocessed by the converter: {left[:4]}")

    if no_mtp and left_out == 0:
        problems.append("--no-mtp asked, but the checkpoint has no MTP layer tensor to leave out")
    # ModelOpt NVFP4: each N.scale multiplied into its NVFP4 N.weight, as llama.cpp's graph applies it.
    found, reader, same, types = compare_gguf(gguf_path, wanted, origin, want_kvs, arch, expect_types,
                                              in_order=True, fold_scales=src.format == "modelopt-nvfp4")
    problems += found
    pre = field_value(reader.fields["tokenizer.ggml.pre"])
    if pre != "glm4":
        problems.append(f"tokenizer.ggml.pre {pre!r}: _set_vocab_glm's tokenizer is llama.cpp's 'glm4'")
    print(f"  {gguf_path.rsplit('/', 1)[-1]} ({src.format}): {same}/{len(reader.tensors)} tensors and "
          f"{len(want_kvs)} {arch} KVs as llama.cpp's converter writes them; types {types}")
    return [f"{gguf_path}: {p}" for p in problems]


run_triples(check, sys.argv, __doc__)
