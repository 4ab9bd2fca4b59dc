"""Rebox-converted Qwen3-VL text GGUFs (qwen3vl) against llama.cpp's own converter class chain from the
bundle, bit for bit, several files in one process.

For each MODEL_DIR FILE.gguf TYPES triple: the source's values (source_values.py: the dequantized
checkpoint, or the float one widened) go through Qwen3VLTextModel -> Qwen3Model -> Qwen2Model -> TextModel
-> ModelBase (Qwen3-VL-MoE: Qwen3VLMoeTextModel -> Qwen3MoeModel -> Qwen2MoeModel -> TextModel ->
ModelBase, its modify_tensors transposing the fused experts) (conversion/qwen3vl.py, qwen.py and base.py, run as written by converter_run.py):
filter_tensors (TextModel's drops `model.visual.`, ModelBase's strips `language_model.`) and modify_tensors
with gguf-py's name map give every GGUF name and array the converter writes; set_gguf_parameters gives the
KVs, with rope.dimension_sections from the rope parameters' mrope_section padded to 4 and
n_deepstack_layers from vision_config.deepstack_visual_indexes. gguf-py's GGUFReader reads FILE.gguf:
every tensor must be one of those (name, ne, values bit for bit after dequantize) and every one of those
must be in the file; every qwen3vl.* KV must be in the file with the same type and value, in the
converter's order, and the file may hold no other qwen3vl.* KV.

Usage: ggufpy_qwen3vl.py LLAMA_SRC MODEL_DIR FILE.gguf TYPES [MODEL_DIR FILE.gguf TYPES ...]
"""
import sys

import numpy as np

from converter_compare import compare_gguf, run_triples
from converter_run import Converter, block_id
from ggufpy_qwen35 import T  # a torch tensor as far as modify_tensors uses one (permute, contiguous)
from source_values import Source


def check(llama_src, model_dir, gguf_path, expect_types):
    problems = []
    src = Source(model_dir)
    moe = src.config["architectures"][0] == "Qwen3VLMoeForConditionalGeneration"
    chain = [("qwen3vl.py", "Qwen3VLMoeTextModel"), ("qwen.py", "Qwen3MoeModel"), ("qwen.py", "Qwen2MoeModel")] \
        if moe else [("qwen3vl.py", "Qwen3VLTextModel"), ("qwen.py", "Qwen3Model"), ("qwen.py", "Qwen2Model")]
    conv = Converter(llama_src, chain + [("base.py", "TextModel"), ("base.py", "ModelBase")],
                     model_dir, dict(src.config), class_constants=True,  # Qwen3Model.is_rerank
                     attrs={"_experts": None})
    conv.obj.set_gguf_parameters()
    arch = conv.obj.gguf_writer.arch
    want_kvs = {key: (value.type, value.value) for key, value in conv.obj.gguf_writer.kv_data[0].items()
                if not key.startswith("general.")}
    wanted, origin, skipped = {}, {}, 0
    for name in src.names():
        kept = conv.obj.filter_tensors((name, None))
        if kept is None:
            skipped += 1
            continue
        renamed = kept[0]
        for g, data in conv.obj.modify_tensors(src.values(name).view(T), renamed, block_id(renamed)):
            if g in wanted:
                problems.append(f"{origin[g]} and {name} both become {g}")
            wanted[g], origin[g] = np.asarray(data, dtype=np.float32), name
    if skipped == 0:
        problems.append("the converter skipped no source tensor: the fixture has no vision tower")
    found, reader, same, types = compare_gguf(gguf_path, wanted, origin, want_kvs, arch, expect_types,
                                              in_order=True)
    problems += found
    for key in (f"{arch}.rope.dimension_sections", f"{arch}.n_deepstack_layers"):
        if key not in want_kvs:
            problems.append(f"the converter writes no {key} for this config")
    print(f"  {gguf_path.rsplit('/', 1)[-1]} ({src.format}): {same}/{len(reader.tensors)} tensors and "
          f"{len(want_kvs)} {arch} KVs as llama.cpp's converter writes them ({skipped} vision tensors it "
          f"leaves out); types {types}")
    return [f"{gguf_path}: {p}" for p in problems]


run_triples(check, sys.argv, __doc__)
