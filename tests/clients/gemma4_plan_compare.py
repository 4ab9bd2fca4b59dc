"""`rebox plan --json` of a Gemma 4 checkpoint against llama.cpp's own conversion code, tensor by tensor.

rebox refuses Gemma 4 for now (its tokenizer is not written) but still plans every tensor. The expected
tensors are the checkpoint's passed through the bundle's Gemma4Model -> Gemma3Model -> TextModel ->
ModelBase chain (converter_run.py, run as written): filter_tensors + modify_tensors for each source tensor
(gguf-py's names, the vision tower skipped, layer_scalar given ".weight"), and generate_extra_tensors for
the computed rope_freqs (torch_shim.py in place of torch). The plan must hold exactly those tensors, each
with the converter's ne (the array's shape reversed), the computed ones first, and no BLOCKER but the
tokenizer's. (The plan holds no values: rope_freqs' values are the unit test's, worked by hand.)

Usage: gemma4_plan_compare.py LLAMA_SRC MODEL_DIR PLAN.json
"""
import json
import sys

import numpy as np

from converter_run import Converter, block_id
from source_values import Source
from torch_shim import Torch

llama_src, model_dir, plan_path = sys.argv[1:4]
plan = json.load(open(plan_path))
src = Source(model_dir)
hparams = dict(src.config)
hparams.update(src.config.get("text_config") or {})  # TextModel.__init__ moves text_config up
chain = [("gemma.py", "Gemma4Model"), ("gemma.py", "Gemma3Model"), ("base.py", "TextModel"),
         ("base.py", "ModelBase")]
conv = Converter(llama_src, chain, model_dir, hparams, extra_globals={"torch": Torch})

wanted = {}  # gguf name -> ne
for name, data in conv.obj.generate_extra_tensors():
    wanted[name] = list(reversed(np.asarray(data).shape))
extra_names = list(wanted)
for hf in src.names():
    for gguf_name, data in conv.tensors(hf, src.native(hf), block_id(hf)):
        wanted[gguf_name] = list(reversed(np.asarray(data).shape))

problems = []
planned = {t["gguf_name"]: t for t in plan["tensors"]}
if len(planned) != len(plan["tensors"]):
    problems.append("a tensor is planned twice")
for name in sorted(set(wanted) - set(planned)):
    problems.append(f"{name}: the converter writes it, rebox does not plan it")
for name in sorted(set(planned) - set(wanted)):
    problems.append(f"{name}: planned by rebox, not written by the converter")
for name in sorted(set(wanted) & set(planned)):
    if planned[name]["ne"] != wanted[name]:
        problems.append(f"{name}: ne {planned[name]['ne']}, the converter's {wanted[name]}")
order = [t["gguf_name"] for t in plan["tensors"]]
if order[: len(extra_names)] != extra_names:
    problems.append(f"the computed tensors {extra_names} are not planned first: {order[:3]}")
blockers = plan.get("blockers", [])
if [b["tensor"] for b in blockers] != ["tokenizer.json"]:
    problems.append(f"blockers other than the tokenizer's: {blockers}")

if problems:
    print("FAIL gemma4 plan against the converter:\n  " + "\n  ".join(problems))
    sys.exit(1)
print(f"gemma4 plan: {len(planned)} tensors as the converter writes them (rope_freqs computed)")
