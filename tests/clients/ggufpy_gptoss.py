"""A rebox-converted gpt-oss GGUF against llama.cpp's own conversion of the same checkpoint.

Expected side: converter_run.Converter runs the bundle's GptOssModel -> TextModel -> ModelBase chain as
written (filter_tensors, generate_extra_tensors / repack_mxfp4 / transform_nibble_layout, modify_tensors,
set_gguf_parameters) with numpy on MODEL_DIR, the repacked MXFP4 tensors and the keys landing in gguf-py's
own GGUFWriter; general.file_type is what the converter derives for the checkpoint (ModelBase's
prepare_tensors / prepare_metadata statements, from a BF16 outtype). The GGUF (read with gguf-py's
GGUFReader) must hold exactly the converter's tensor names, each with its type and ne; float tensors bit
for bit equal to the converter's values; MXFP4 tensors byte for byte equal to the converter's repacked
bytes. Every general.file_type and gpt-oss.* key set_gguf_parameters writes must be in the file with the
same type and value, and no other gpt-oss.* key.

The GGUF type of each float tensor follows ModelBase.prepare_tensors' rule for a BF16 checkpoint
converted with --outtype bf16 (restated in `qtype`): F32 for 1-D tensors, "*_norm.weight", the router
(FFN_GATE_INP) and every name not ending in ".weight"; else BF16. torch is replaced by `_T`, a numpy
array with the few tensor operations GptOssModel uses (uint8 shifts wrap modulo 256 as torch's do).

Independently of both, every MXFP4 value gguf.quants.dequantize gives must equal the value decoded here
from the checkpoint by the format's definition (OCP MXFP4 as openai's weights.py reads it: element 2i
in the low nibble of byte i of a 32-value block, E2M1 decoded from its bits, times 2^(scale-127); -0 read
back as +0, ggml's table has no negative zero), with gate = the even and up = the odd rows of gate_up.

Tokenizer keys against the checkpoint's files: model gpt2, pre gpt-4o, the tokenizer.json vocabulary
padded to config.json vocab_size with [PADn] UNUSED tokens, added special tokens CONTROL, and merges,
special ids and chat template as gguf-py's SpecialVocab (the converter's reader) reads them.

Usage: ggufpy_gptoss.py LLAMA_SRC MODEL_DIR FILE.gguf
"""
import json
import os
import sys

import numpy as np
import gguf

from converter_run import Converter, block_id
from source_values import float_values, read_safetensors


class _T:
    """A torch tensor as far as GptOssModel uses one."""

    def __init__(self, a):
        self.a = np.asarray(a)

    dtype = property(lambda self: self.a.dtype)
    shape = property(lambda self: self.a.shape)

    def _v(self, o):
        return o.a if isinstance(o, _T) else self.a.dtype.type(o)

    def __and__(self, o):
        return _T(self.a & self._v(o))

    def __or__(self, o):
        return _T(self.a | self._v(o))

    def __lshift__(self, o):
        return _T((self.a << self._v(o)).astype(self.a.dtype))

    def __rshift__(self, o):
        return _T(self.a >> self._v(o))

    def __getitem__(self, index):
        return _T(self.a[index])

    def chunk(self, n, dim=0):
        return [_T(p) for p in np.split(self.a, n, axis=dim)]

    def view(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], tuple):
            shape = shape[0]
        return _T(self.a.reshape(shape))

    def unsqueeze(self, dim):
        return _T(np.expand_dims(self.a, dim))

    def numpy(self):
        return self.a


class _Torch:
    uint8 = np.dtype(np.uint8)
    Tensor = _T

    @staticmethod
    def zeros(*shape):
        return _T(np.zeros(shape, dtype=np.float32))

    @staticmethod
    def stack(items, dim=0):
        return _T(np.stack([t.a for t in items], axis=dim))

    @staticmethod
    def concat(items, dim=0):
        return _T(np.concatenate([t.a for t in items], axis=dim))


def read_checkpoint(path):
    """{name: numpy array} of a safetensors file: floats widened to float32 exactly, U8 as stored."""
    tensors, _ = read_safetensors(path)
    return {name: (np.frombuffer(t.bytes.tobytes(), np.uint8) if t.dtype == "U8" else float_values(t))
            .reshape(t.shape) for name, t in tensors.items()}


def qtype(conv, name, n_dims, bid):
    if n_dims <= 1 or name.endswith("_norm.weight"):
        return gguf.GGMLQuantizationType.F32
    if conv.obj.match_model_tensor_name(name, gguf.MODEL_TENSOR.FFN_GATE_INP, bid) or \
            name[-7:] not in (".weight", ".lora_a", ".lora_b"):
        return gguf.GGMLQuantizationType.F32
    return gguf.GGMLQuantizationType.BF16


def converter_output(conv):
    """{gguf name: (type, ne list, float32 values or raw MXFP4 bytes)}: what generate_extra_tensors hands
    the writer, then what modify_tensors yields for every other tensor."""
    out = {}
    for _ in conv.obj.generate_extra_tensors():
        pass
    for name, info in conv.obj.gguf_writer.tensors[0].items():
        out[name] = (info.dtype, list(reversed(info.shape)), info.tensor)
    for name, t in conv.obj.get_tensors():
        if t.a.dtype == np.uint8:
            continue  # *_blocks / *_scales: repacked above, modify_tensors yields nothing
        bid = block_id(name)
        for new_name, d in conv.obj.modify_tensors(_T(t.a.astype(np.float32)), name, bid):
            a = np.asarray(d.a if isinstance(d, _T) else d, dtype=np.float32)
            out[new_name] = (qtype(conv, new_name, a.ndim, bid), list(reversed(a.shape)), a)
    return out


llama_src, model_dir, gguf_path = sys.argv[1:4]
problems = []
source = read_checkpoint(os.path.join(model_dir, "model.safetensors"))
conv = Converter(llama_src, [("gpt_oss.py", "GptOssModel"), ("base.py", "TextModel"), ("base.py", "ModelBase")],
                 model_dir, json.load(open(os.path.join(model_dir, "config.json"))),
                 extra_globals={"torch": _Torch, "Tensor": _T})
# ModelBase.index_tensors: every checkpoint tensor through filter_tensors (the sinks get ".weight")
conv.obj.model_tensors = {}
for name, a in source.items():
    kept = conv.obj.filter_tensors((name, lambda a=a: _T(a)))
    if kept is not None:
        conv.obj.model_tensors[kept[0]] = kept[1]
want = converter_output(conv)
conv.file_type(gguf.LlamaFileType.MOSTLY_BF16)  # rebox writes the BF16 tensors as BF16
conv.obj.set_gguf_parameters()
want_kvs = {k: (v.type, v.value) for k, v in conv.obj.gguf_writer.kv_data[0].items()}
reader = gguf.GGUFReader(gguf_path)

# --- tensors: names, types, ne, bytes / values -----------------------------------------------------
seen = set()
for t in reader.tensors:
    seen.add(t.name)
    if t.name not in want:
        problems.append(f"{t.name}: llama.cpp's converter writes no such tensor")
        continue
    qtype, ne, data = want[t.name]
    got_ne = [int(x) for x in t.shape]
    if t.tensor_type != qtype or got_ne != ne:
        problems.append(f"{t.name}: {t.tensor_type.name} ne {got_ne}, converter: {qtype.name} ne {ne}")
        continue
    if qtype == gguf.GGMLQuantizationType.MXFP4:
        if not np.array_equal(np.asarray(t.data).reshape(-1), data.reshape(-1)):
            problems.append(f"{t.name}: MXFP4 bytes differ from the converter's repack")
        continue
    got = gguf.quants.dequantize(t.data, t.tensor_type).reshape(data.shape)
    want32 = gguf.quants.dequantize(gguf.quants.quantize(data, qtype), qtype).reshape(data.shape)
    if not np.array_equal(got.view(np.uint32), want32.view(np.uint32)):
        problems.append(f"{t.name}: values differ from the converter's")
for name in want:
    if name not in seen:
        problems.append(f"{name}: the converter writes it; missing from the GGUF")

# --- MXFP4 values by the format's definition -------------------------------------------------------
E2M1 = np.array([0, .5, 1, 1.5, 2, 3, 4, 6, 0, -.5, -1, -1.5, -2, -3, -4, -6], np.float32)
E2M1[8] = 0.0  # the GGUF's -0 is +0


def decode(blocks, scales):
    """[E, rows, n, 16] codes + [E, rows, n] E8M0 -> float32 [E, rows, 32n], from the definition."""
    lo, hi = blocks & 15, blocks >> 4
    codes = np.stack([lo, hi], axis=-1).reshape(*blocks.shape[:-1], 32)
    values = E2M1[codes] * np.exp2(scales.astype(np.float64) - 127)[..., None]
    return values.astype(np.float32).reshape(*blocks.shape[:2], -1)


by_name = {t.name: t for t in reader.tensors}
mxfp4_values = 0
for i in range(conv.obj.block_count):
    p = f"model.layers.{i}.mlp.experts."
    gate_up = decode(source[p + "gate_up_proj_blocks"], source[p + "gate_up_proj_scales"])
    down = decode(source[p + "down_proj_blocks"], source[p + "down_proj_scales"])
    for gguf_name, expect in ((f"blk.{i}.ffn_gate_exps.weight", gate_up[:, 0::2]),
                              (f"blk.{i}.ffn_up_exps.weight", gate_up[:, 1::2]),
                              (f"blk.{i}.ffn_down_exps.weight", down)):
        t = by_name.get(gguf_name)
        if t is None:
            continue
        got = gguf.quants.dequantize(t.data, t.tensor_type).reshape(expect.shape)
        diff = got.view(np.uint32) != expect.view(np.uint32)
        if diff.any():
            at = tuple(int(x) for x in np.argwhere(diff)[0])
            problems.append(f"{gguf_name}: {int(diff.sum())} values differ from the source's; first at {at}: "
                            f"{got[at]!r} vs {expect[at]!r}")
        mxfp4_values += expect.size

# --- KVs -------------------------------------------------------------------------------------------
def value(field):
    if field.types[0] == gguf.GGUFValueType.STRING:
        return bytes(field.parts[-1]).decode()
    return field.parts[-1][0].item()


kv_checked = 0
for key, (vtype, v) in want_kvs.items():
    if key == "general.architecture" or not (key.startswith("gpt-oss.") or key == "general.file_type"):
        continue
    field = reader.fields.get(key)
    if field is None:
        problems.append(f"{key}: the converter writes {v!r}; missing")
        continue
    got = value(field)
    same = field.types[0] == vtype and (np.float32(got) == np.float32(v) if vtype == gguf.GGUFValueType.FLOAT32
                                        else got == (int(v) if vtype != gguf.GGUFValueType.STRING else v))
    if not same:
        problems.append(f"{key}: {field.types[0].name} {got!r}, the converter writes {vtype.name} {v!r}")
    kv_checked += 1
for key in reader.fields:
    if key.startswith("gpt-oss.") and key not in want_kvs:
        problems.append(f"{key}: in the GGUF, but the converter does not write it")

# --- tokenizer -------------------------------------------------------------------------------------
tok = json.load(open(os.path.join(model_dir, "tokenizer.json"), encoding="utf-8"))
config = json.load(open(os.path.join(model_dir, "config.json")))
n_vocab = config["vocab_size"]
reverse = {i: s for s, i in tok["model"]["vocab"].items()}
added = {a["id"]: a for a in tok["added_tokens"]}
tokens, types = [], []
for i in range(n_vocab):  # TextModel._set_vocab_gpt2 / get_vocab_base
    if i in added:
        tokens.append(added[i]["content"])
        types.append(gguf.TokenType.CONTROL if added[i]["special"] else gguf.TokenType.USER_DEFINED)
    elif i in reverse:
        tokens.append(reverse[i])
        types.append(gguf.TokenType.NORMAL)
    else:
        tokens.append(f"[PAD{i}]")
        types.append(gguf.TokenType.UNUSED)
f = reader.fields
got_tokens = [bytes(f["tokenizer.ggml.tokens"].parts[j]).decode() for j in f["tokenizer.ggml.tokens"].data]
got_types = [int(f["tokenizer.ggml.token_type"].parts[j][0]) for j in f["tokenizer.ggml.token_type"].data]
if got_tokens != tokens:
    j = next((j for j in range(min(len(tokens), len(got_tokens))) if tokens[j] != got_tokens[j]), None)
    problems.append(f"tokens: {len(got_tokens)} in the GGUF, {len(tokens)} expected; first difference at {j}")
if got_types != [int(x) for x in types]:
    j = next((j for j in range(min(len(types), len(got_types))) if int(types[j]) != got_types[j]), None)
    problems.append(f"token types differ; first at {j}")
for key, want_v in (("tokenizer.ggml.model", "gpt2"), ("tokenizer.ggml.pre", "gpt-4o")):
    if key not in f or value(f[key]) != want_v:
        problems.append(f"{key}: {value(f[key]) if key in f else None!r}, expected {want_v!r}")
special = gguf.SpecialVocab(model_dir, load_merges=True, n_vocab=n_vocab)
got_merges = [bytes(f["tokenizer.ggml.merges"].parts[j]).decode() for j in f["tokenizer.ggml.merges"].data]
if got_merges != list(special.merges):
    problems.append(f"merges: {len(got_merges)} in the GGUF, SpecialVocab reads {len(special.merges)}")
for kind, tid in special.special_token_ids.items():
    key = getattr(gguf.Keys.Tokenizer, f"{kind.upper()}_ID")  # the key gguf-py's add_{kind}_token_id writes
    if key not in f or value(f[key]) != tid:
        problems.append(f"{key}: {value(f[key]) if key in f else None}, SpecialVocab: {tid}")
if special.chat_template is not None:
    if "tokenizer.chat_template" not in f or value(f["tokenizer.chat_template"]) != special.chat_template:
        problems.append("tokenizer.chat_template differs from the checkpoint's chat_template.jinja")
else:
    problems.append("SpecialVocab found no chat template in the checkpoint")

print(f"  {os.path.basename(gguf_path)}: {len(want)} tensors as llama.cpp's GptOssModel writes them "
      f"(names, types, ne, bytes); {mxfp4_values} MXFP4 values equal to the source's by definition; "
      f"{kv_checked} keys; {n_vocab} tokens ({sum(1 for t in types if t == gguf.TokenType.UNUSED)} [PAD]), "
      f"{len(got_merges)} merges, special ids {dict(special.special_token_ids)}")
if problems:
    print(f"FAIL: {gguf_path}:")
    for p in problems[:40]:
        print("  " + p)
    sys.exit(1)
