"""A rebox mmproj GGUF (the vision tower and projector beside a text model) against llama.cpp's own mmproj
conversion of the same checkpoint, as `convert_hf_to_gguf.py --mmproj` writes it.

The converter's class chain from the bundle (Gemma3VisionModel, Gemma4VisionAudioModel for Gemma 4 (no audio_config:
vision only), Qwen2VLVisionModel for Qwen2-VL / Qwen2.5-VL, Qwen3VLVisionModel, or LlavaVisionModel for Mistral 3
(conversion/llava.py, with LlamaModel.permute from llama.py as written),
-> MmprojModel -> ModelBase, conversion/gemma.py / qwenvl.py and base.py, run as written by converter_run.py;
chosen by config.json's architectures[0] as the converter chooses it) gives the KVs (general.architecture, general.type from
set_type, then every key set_gguf_parameters writes) and, per source tensor, filter_tensors + modify_tensors
(soft_emb_norm + 1, the "_weight" rename, gguf-py's name map). The type and bytes of each tensor come from
ModelBase.prepare_tensors' own statements (tensor_force_quant, the 1-D / norm / position-table rules, the
file type's default, gguf.quants.quantize), extracted from the bundle's source with `ast` and run as
written. Every GGUF tensor must be one the converter writes, with its name, shape, type and every value bit
for bit, and every converter tensor must be in the file (Qwen2VLVisionModel's q/k/v split of the fused qkv and
its two temporal slices of the Conv3D patch embedding included); every converter KV must be in the file with the
same type and value, in the converter's order.

One documented difference (docs/architectures.md "Vision"): where the converter's forced F16 would round a
value (mm.input_projection from F32 values that F16 cannot hold), rebox writes the exact values as F32; the
script then checks that the converter's F16 does round, and that the file holds the unrounded values bit
for bit.

v0.4.0's Qwen2VLVisionModel.filter_tensors keeps only names starting with "visual.", so it writes no tensor for
a transformers >= 4.52 checkpoint, whose tower is "model.visual.*" (docs/architectures.md "Vision"); the script
feeds it such names without "model." (as the bundle's Qwen3VLVisionModel strips it), the tensors it would then
write. LlavaVisionModel likewise keeps only names starting with "vision_tower." / "multi_modal_projector.": a
Mistral 3 checkpoint in that layout ("model.vision_tower.*", "model.language_model.*") is fed without "model.".

v0.4.0's MmprojModel.filter_tensors drops every "language_model." name, so LlavaVisionModel never sees the text
embedding whose [IMG_BREAK] row it copies into v.token_embd.img_break, and the converter's own file of an HF
Mistral 3 lacks the row clip.cpp requires (docs/architectures.md "Vision"). The script checks that the converter's
run writes no such row, then feeds the embedding to LlavaVisionModel.modify_tensors under the name
ModelBase.filter_tensors gives it: that row, through prepare_tensors' type statements, is the one compared.

A legacy mlx-vlm checkpoint's quantized tower (MMPROJ_BLOCK_TYPES=1 in the environment; MODEL_DIR then holds the
tower's values dequantized to F32 by mlxvlm_restore.py): a tensor the converter writes in F32 may be held in a
ggml block type whose values, dequantized by gguf-py, equal the converter's bit for bit (the exact carriage of
the MLX codes); general.file_type then names that block type, not the converter's F32.

Usage: ggufpy_mmproj.py LLAMA_SRC MODEL_DIR MMPROJ.gguf OUTTYPE [OUT.gguf]   (OUTTYPE: the converter's --outtype the
file corresponds to: bf16, f16 or f32; OUT.gguf: also write the converter's own mmproj file there, every tensor and
KV as above, in its order, for mtmd to load beside rebox's)
"""
import ast
import copy
import os
import sys

import gguf
import numpy as np

from converter_compare import field_value, same_value
from converter_run import Converter, block_id, static_method
from source_values import Source

llama_src, model_dir, gguf_path, outtype = sys.argv[1:5]
block_types = os.environ.get("MMPROJ_BLOCK_TYPES") == "1"
FLOAT_TYPES = (gguf.GGMLQuantizationType.F32, gguf.GGMLQuantizationType.F16, gguf.GGMLQuantizationType.BF16)
problems = []
src = Source(model_dir)
CLASSES = {"Gemma3ForConditionalGeneration": ("gemma.py", "Gemma3VisionModel"),
           "Qwen2VLForConditionalGeneration": ("qwenvl.py", "Qwen2VLVisionModel"),
           "Qwen2_5_VLForConditionalGeneration": ("qwenvl.py", "Qwen2VLVisionModel"),
           "Qwen3VLForConditionalGeneration": ("qwen3vl.py", "Qwen3VLVisionModel"),
           "Qwen3VLMoeForConditionalGeneration": ("qwen3vl.py", "Qwen3VLVisionModel"),  # the same register line
           "Qwen3_5ForConditionalGeneration": ("qwen3vl.py", "Qwen3VLVisionModel"),
           "Qwen3_5MoeForConditionalGeneration": ("qwen3vl.py", "Qwen3VLVisionModel"),
           "Gemma4ForConditionalGeneration": ("gemma.py", "Gemma4VisionAudioModel"),
           "Mistral3ForConditionalGeneration": ("llava.py", "LlavaVisionModel")}
hf_arch = ((src.config.get("vision_config") or {}).get("architectures") or src.config["architectures"])[0]
# LlavaVisionModel calls LlamaModel.permute (llama.py), a class outside its chain: that @staticmethod as written.
extra = {"LlamaModel": type("LlamaModel", (), {"permute": staticmethod(
    static_method(llama_src, "llama.py", "LlamaModel", "permute"))})} if hf_arch.startswith("Mistral3") else {}
conv = Converter(llama_src, [CLASSES[hf_arch], ("base.py", "MmprojModel"), ("base.py", "ModelBase")],
                 model_dir, copy.deepcopy(src.config), class_constants=True, extra_globals=extra,
                 attrs={"_fp8_as_q8": False, "_fp8_dequantized": set()})  # ModelBase.__init__'s defaults
conv.obj.ftype = {"bf16": gguf.LlamaFileType.MOSTLY_BF16, "f16": gguf.LlamaFileType.MOSTLY_F16,
                  "f32": gguf.LlamaFileType.ALL_F32}[outtype]


def converter_type_rules():
    """prepare_tensors' per-tensor statements, from `data = data_torch.numpy()` through the quantize
    try block, as a function (self, name, new_name, bid, data_torch) -> (qtype, bytes)."""
    source = open(os.path.join(llama_src, "conversion", "base.py"), encoding="utf-8").read()
    method = next(n for n in ast.walk(ast.parse(source))
                  if isinstance(n, ast.FunctionDef) and n.name == "prepare_tensors")
    loop = next(n for n in ast.walk(method) if isinstance(n, ast.For) and isinstance(n.target, ast.Tuple)
                and [e.id for e in n.target.elts if isinstance(e, ast.Name)] == ["new_name", "data_torch"])
    texts = [ast.unparse(s) for s in loop.body]
    begin = next(i for i, t in enumerate(texts) if t.startswith("data = data_torch.numpy()"))
    end = next(i for i, t in enumerate(texts) if t.startswith("try:"))
    fn = ast.parse("def rules(self, name, new_name, bid, data_torch):\n    pass\n").body[0]
    fn.body = loop.body[begin:end + 1] + ast.parse("return (data_qtype, data)").body
    namespace = {"gguf": gguf, "np": np, "logger": __import__("logging").getLogger("converter")}
    exec(compile(ast.Module(body=[fn], type_ignores=[]), "llama.cpp ModelBase.prepare_tensors", "exec"), namespace)
    return namespace["rules"]


class AsTorch:
    """The converter calls data_torch.numpy()."""
    def __init__(self, array):
        self.array = array

    def numpy(self):
        return self.array


class TorchLike(np.ndarray):
    """The torch tensor methods Gemma4VisionAudioModel.modify_tensors calls on its input, as torch defines them:
    unsqueeze (a new axis), permute (an axis order), contiguous (the same values)."""

    def unsqueeze(self, dim):
        return np.expand_dims(self, dim).view(TorchLike)

    def permute(self, *dims):
        return np.transpose(self, dims).view(TorchLike)

    def contiguous(self):
        return np.ascontiguousarray(self).view(TorchLike)


rules = converter_type_rules()
wanted = {}  # GGUF name -> (qtype, float32 values as the file holds them, values before the type, source)


stored_bytes = {}  # GGUF name -> the array prepare_tensors hands GGUFWriter.add_tensor


def want(hf, produced):
    for g, data in produced:
        qtype, stored = rules(conv.obj, hf, g, block_id(hf), AsTorch(np.asarray(data)))
        values = np.asarray(stored, dtype=np.float32) if qtype == gguf.GGMLQuantizationType.F32 else \
            np.asarray(gguf.quants.dequantize(stored, qtype), dtype=np.float32)
        if g in wanted:
            problems.append(f"{wanted[g][3]} and {hf} both become {g}")
        wanted[g] = (qtype, values.reshape(np.asarray(data).shape), np.asarray(data, dtype=np.float32), hf)
        stored_bytes[g] = stored


for hf in src.names():
    fed = hf[len("model."):] if hf.startswith("model.visual.") else hf
    if hf_arch.startswith("Mistral3"):
        fed = hf[len("model."):] if hf.startswith("model.") else hf
        if not fed.startswith(("vision_tower.", "multi_modal_projector.", "language_model.model.embed_tokens.",
                               "language_model.embed_tokens.")):
            continue  # the text model: LlavaVisionModel writes none of it (its filter and modify_tensors drop it)
    native = src.native(hf)
    if hf_arch == "Gemma4ForConditionalGeneration":
        native = np.asarray(native).view(TorchLike)
    want(hf, conv.tensors(fed, native, block_id(hf)))
    if hf.endswith("embed_tokens.weight") and hf_arch.startswith("Mistral3"):
        # v0.4.0's MmprojModel.filter_tensors drops every "language_model." name, so the converter's own run
        # writes no v.token_embd.img_break (checked: conv.tensors gave nothing for it); the row comes from
        # LlavaVisionModel.modify_tensors fed the embedding under the name ModelBase.filter_tensors gives it
        # (docs/architectures.md "Vision").
        if "v.token_embd.img_break" in wanted:
            problems.append("the bundle's converter now writes v.token_embd.img_break itself: drop the row feed")
        base_name = conv.bound("filter_tensors", len(conv.chain) - 1)((fed, None))[0]
        want(hf, conv.obj.modify_tensors(native, base_name, None))
        if "v.token_embd.img_break" not in wanted:
            problems.append("LlavaVisionModel.modify_tensors copied no [IMG_BREAK] row from " + hf)
if not wanted:
    problems.append("llama.cpp's converter writes no tensor for this checkpoint")

reader = gguf.GGUFReader(gguf_path)
seen, exact_f32, blocks_held = set(), 0, 0
for t in reader.tensors:
    seen.add(t.name)
    if t.name not in wanted:
        problems.append(f"{t.name}: llama.cpp's converter writes no such tensor")
        continue
    qtype, want, unrounded, hf = wanted[t.name]
    ne = [int(x) for x in t.shape]
    if ne[::-1] != list(want.shape):
        problems.append(f"{t.name}: ne {ne}, the converter writes the reverse of {list(want.shape)}")
        continue
    got = (np.asarray(t.data, dtype=np.float32) if t.tensor_type == gguf.GGMLQuantizationType.F32
           else np.asarray(gguf.quants.dequantize(t.data, t.tensor_type), dtype=np.float32)).reshape(want.shape)
    if block_types and t.tensor_type not in FLOAT_TYPES and qtype == gguf.GGMLQuantizationType.F32:
        qtype = t.tensor_type  # the values below are the check
        blocks_held += 1
    if t.tensor_type != qtype:
        # The one allowed difference: F32 where the converter's F16 rounds.
        rounds = (want.view(np.uint32) != unrounded.view(np.uint32)).any()
        if not (qtype == gguf.GGMLQuantizationType.F16 and t.tensor_type == gguf.GGMLQuantizationType.F32
                and rounds and (got.view(np.uint32) == unrounded.view(np.uint32)).all()):
            problems.append(f"{t.name}: {t.tensor_type.name}, the converter writes {qtype.name}"
                            f"{' (which would round)' if rounds else ' (exact)'}")
        exact_f32 += 1
        continue
    diff = got.view(np.uint32) != want.view(np.uint32)
    if diff.any():
        i = tuple(int(x) for x in np.argwhere(diff)[0])
        problems.append(f"{t.name} ({t.tensor_type.name}): {int(diff.sum())} of {want.size} values differ from "
                        f"llama.cpp's conversion of {hf}; first at {i}: gguf {got[i]!r}, converter {want[i]!r}")
for g in sorted(set(wanted) - seen):
    problems.append(f"{g}: llama.cpp's converter writes it (from {wanted[g][3]}), the file does not hold it")

# KVs: general.architecture (GGUFWriter), general.type (set_type), then set_gguf_parameters'.
conv.obj.set_type()
want_kvs = conv.kvs()
fields = {f.name: f for f in reader.fields.values()}
order = [name for name in fields if name in want_kvs]
if order != [k for k in want_kvs if k in fields]:
    problems.append(f"KV order {order} is not the converter's {list(want_kvs)}")
for key, value in want_kvs.items():
    writer_type = conv.obj.gguf_writer.kv_data[0][key].type
    if key not in fields:
        problems.append(f"KV {key}: the converter writes {value!r}, the file does not")
        continue
    field = fields[key]
    if field.types[0] != writer_type:
        problems.append(f"KV {key}: {field.types[0].name}, the converter writes {writer_type.name}")
        continue
    got = field_value(field)
    if field.types[0] == gguf.GGUFValueType.ARRAY:
        # the element type gguf-py's writer picks (add_array: from the first value's Python type)
        elem = conv.obj.gguf_writer.kv_data[0][key].sub_type or gguf.GGUFValueType.get_type(value[0])
        same = field.types[-1] == elem and (
            np.asarray(got, np.float32).view(np.uint32).tolist() ==
            np.asarray(value, np.float32).view(np.uint32).tolist()
            if elem == gguf.GGUFValueType.FLOAT32 else list(got) == list(value))
        if not same:
            problems.append(f"KV {key}: {got!r} ({field.types[-1].name}), the converter writes {value!r} "
                            f"({elem.name})")
    elif block_types and key == "general.file_type":
        continue
    elif not same_value(field.types[0], value, got):
        problems.append(f"KV {key}: {got!r}, the converter writes {value!r}")
for name in fields:
    if name.startswith("clip.") and name not in want_kvs:
        problems.append(f"KV {name}: the converter writes no such key")

if len(sys.argv) > 5 and not problems:
    # The converter's own file (OUT.gguf): its KVs (GGUFWriter's general.architecture, set_type's general.type,
    # set_gguf_parameters') and its tensors in its order, added as prepare_tensors adds them.
    writer = conv.obj.gguf_writer
    for g, data in stored_bytes.items():
        writer.add_tensor(g, data, raw_dtype=wanted[g][0])
    writer.write_header_to_file(path=sys.argv[5])
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()

if problems:
    print(f"FAIL {gguf_path}:")
    for p in problems[:30]:
        print("  " + p)
    sys.exit(1)
print(f"ok {os.path.basename(gguf_path)}: {len(wanted)} tensors as llama.cpp's mmproj conversion "
      f"({exact_f32} exact F32 where its F16 rounds{f', {blocks_held} in a block type' if block_types else ''}), "
      f"{len(want_kvs)} KVs equal, in its order")
