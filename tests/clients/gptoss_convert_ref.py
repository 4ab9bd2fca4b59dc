"""llama.cpp's own conversion code for gpt-oss, taken from the llama.cpp source bundled in node-llama-cpp
(conversion/gpt_oss.py, GptOssModel) and run here with numpy instead of torch:

- `filter_tensors` (the sinks get ".weight"; TextModel / ModelBase.filter_tensors, its super());
- `generate_extra_tensors` with `repack_mxfp4` and `transform_nibble_layout`: the checkpoint's
  `*_blocks` / `*_scales` become ggml MXFP4 bytes, gate_up split into its even and odd rows;
- `modify_tensors` (then ModelBase.modify_tensors / map_tensor_name through gguf-py's TensorNameMap):
  every other tensor, the gate_up bias split the same way;
- `set_gguf_parameters` (and TextModel.set_gguf_parameters, its super()) against gguf-py's own
  GGUFWriter, so the keys and their GGUF types are gguf-py's.

Functions are extracted with `ast` and executed as written (moe_convert_ref's extraction). torch is
replaced by `_T`, a numpy array with the few tensor operations these functions use (uint8 shifts wrap
modulo 256 as torch's do). The GGUF type of each tensor follows ModelBase.prepare_tensors' rule for a
BF16 checkpoint converted with --outtype bf16 (restated in `qtype`): raw MXFP4 as repacked; F32 for 1-D
tensors, "*_norm.weight", the router (FFN_GATE_INP) and every name not ending in ".weight"; else BF16.
"""
import json
import os
import types

import numpy as np
import gguf

from moe_convert_ref import _Logger, _method


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


def read_safetensors(path):
    """{name: numpy array} of a safetensors file: BF16 widened to float32 exactly, U8 as stored."""
    raw = open(path, "rb").read()
    n = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + n])
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        data = raw[8 + n + begin:8 + n + end]
        if info["dtype"] == "BF16":
            a = (np.frombuffer(data, np.uint16).astype(np.uint32) << 16).view(np.float32)
        elif info["dtype"] == "U8":
            a = np.frombuffer(data, np.uint8)
        elif info["dtype"] == "F32":
            a = np.frombuffer(data, np.float32)
        else:
            raise ValueError(f"{name}: dtype {info['dtype']}")
        out[name] = a.reshape(info["shape"])
    return out


class _Writer(gguf.GGUFWriter):
    """gguf-py's writer, keeping the tensors added in memory."""

    def __init__(self):
        super().__init__(path=None, arch=gguf.MODEL_ARCH_NAMES[gguf.MODEL_ARCH.GPT_OSS])
        self.added = {}

    def add_tensor(self, name, tensor, raw_shape=None, raw_dtype=None, **kwargs):
        self.added[name] = (np.asarray(tensor), raw_dtype)


class GptOss:
    def __init__(self, llama_src, model_dir):
        conversion = os.path.join(llama_src, "conversion")
        namespace = {"torch": _Torch, "gguf": gguf, "logger": _Logger(), "np": np, "Tensor": _T}

        def load(file, cls, fn, base, bind=True):
            module = _method(os.path.join(conversion, file), cls, fn, base)
            exec(compile(module, f"llama.cpp conversion/{file}", "exec"), namespace)
            f = namespace[f"{cls}_{fn}"]
            return types.MethodType(f, self) if bind else f

        for fn in ("transform_nibble_layout", "repack_mxfp4", "generate_extra_tensors",
                   "modify_tensors", "set_gguf_parameters"):
            setattr(self, fn, load("gpt_oss.py", "GptOssModel", fn,
                                   "ModelBase" if fn == "modify_tensors" else "TextModel"))
        # filter_tensors is a classmethod (`cls`): its rewritten super() calls find `self` here.
        namespace["self"] = self
        self.filter = load("gpt_oss.py", "GptOssModel", "filter_tensors", "TextModel")
        self._super_TextModel_filter_tensors = load("base.py", "TextModel", "filter_tensors", "ModelBase")
        self._super_ModelBase_filter_tensors = load("base.py", "ModelBase", "filter_tensors", "ModelBase")
        self._super_ModelBase_modify_tensors = load("base.py", "ModelBase", "modify_tensors", "ModelBase")
        self._super_TextModel_set_gguf_parameters = load("base.py", "TextModel", "set_gguf_parameters",
                                                         "ModelBase")
        self.map_tensor_name = load("base.py", "ModelBase", "map_tensor_name", "ModelBase")
        self.match_model_tensor_name = load("base.py", "ModelBase", "match_model_tensor_name", "ModelBase")
        self.hparams = json.load(open(os.path.join(model_dir, "config.json")))
        self.block_count = self.hparams["num_hidden_layers"]
        self.model_arch = gguf.MODEL_ARCH.GPT_OSS
        self.tensor_map = gguf.get_tensor_name_map(self.model_arch, self.block_count)
        self.fuse_gate_up_exps = False
        rope = dict(self.hparams.get("rope_parameters", self.hparams.get("rope_scaling")) or {})
        if "rope_theta" not in rope and "rope_theta" in self.hparams:
            rope["rope_theta"] = self.hparams["rope_theta"]
        self.rope_parameters = rope
        self.ftype = gguf.LlamaFileType.MOSTLY_MXFP4_MOE  # prepare_metadata's choice for mxfp4
        self.gguf_writer = _Writer()
        self.model_tensors = {}
        for name, a in read_safetensors(os.path.join(model_dir, "model.safetensors")).items():
            item = self.filter((name, a))
            if item is not None:
                self.model_tensors[item[0]] = item[1]

    def find_hparam(self, keys, optional=False):
        for key in keys:
            if key in self.hparams:
                return self.hparams[key]
        if optional:
            return None
        raise KeyError(f"none of {keys} in config.json")

    def get_tensors(self):
        for name, a in self.model_tensors.items():
            yield name, _T(a)

    def qtype(self, name, n_dims, bid):
        if n_dims <= 1 or name.endswith("_norm.weight"):
            return gguf.GGMLQuantizationType.F32
        if self.match_model_tensor_name(name, gguf.MODEL_TENSOR.FFN_GATE_INP, bid) or \
                name[-7:] not in (".weight", ".lora_a", ".lora_b"):
            return gguf.GGMLQuantizationType.F32
        return gguf.GGMLQuantizationType.BF16

    def tensors(self):
        """{gguf name: (type, ne list, float32 values or raw MXFP4 bytes)}."""
        out = {}
        for _ in self.generate_extra_tensors():
            pass
        for name, (data, raw) in self.gguf_writer.added.items():
            shape = gguf.quant_shape_from_byte_shape(data.shape, raw)
            out[name] = (raw, list(reversed(shape)), data)
        for name, t in self.get_tensors():
            if t.a.dtype == np.uint8:
                continue  # *_blocks / *_scales: repacked above, modify_tensors yields nothing
            bid = next((int(p) for p in name.split(".") if p.isdecimal()), None)
            for new_name, d in self.modify_tensors(_T(t.a.astype(np.float32)), name, bid):
                a = np.asarray(d.a if isinstance(d, _T) else d, dtype=np.float32)
                out[new_name] = (self.qtype(new_name, a.ndim, bid), list(reversed(a.shape)), a)
        return out

    def kvs(self):
        """{key: (GGUFValueType, value)} that set_gguf_parameters writes (general.* included)."""
        self.set_gguf_parameters()
        return {k: (v.type, v.value) for k, v in self.gguf_writer.kv_data[0].items()}
