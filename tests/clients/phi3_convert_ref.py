"""llama.cpp's own conversion code for phi3, taken from the llama.cpp source bundled in node-llama-cpp
(conversion/phi.py, class Phi3MiniModel) and run here with numpy instead of torch:
`set_gguf_parameters` (every {arch}.* KV the converter writes) and `generate_extra_tensors` (the
rope.scaling.attn_factor KV and the F32 rope_factors_long / rope_factors_short tensors of a long-rope
config).

The two methods are extracted from the bundle's source with `ast` and executed as they are written. The
model object they run on is a small stand-in: the config.json as hparams, rope_parameters mirrored from
the top level the way conversion/base.py does, and a gguf_writer that runs gguf-py's own GGUFWriter.add_*
methods but only records the (key, type, value) they produce. torch.tensor(list, dtype=float32) becomes
numpy's float32 array of the same Python numbers (each rounded once to binary32, as torch does).
"""
import ast
import math
import os

import numpy as np
import gguf


def _method(path, class_name, function_name):
    tree = ast.parse(open(path, encoding="utf-8").read())
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == function_name:
                    item.decorator_list = []
                    for arg in item.args.args + item.args.kwonlyargs:
                        arg.annotation = None
                    item.returns = None
                    return ast.Module(body=[item], type_ignores=[])
    raise LookupError(f"{path}: {class_name}.{function_name} not found")


class _TorchShim:
    float32 = np.float32

    @staticmethod
    def tensor(items, dtype=None):
        assert dtype is np.float32, "the phi3 converter builds float32 tensors"
        return np.array(items, dtype=np.float32)


class _Recorder:
    """A gguf_writer whose add_* are gguf-py's own (GGUFWriter's methods), recording each KV."""

    def __init__(self, arch):
        self.arch = arch
        self.kv = {}

    def add_key_value(self, key, val, vtype, sub_type=None):
        self.kv[key] = (vtype, val)

    def __getattr__(self, name):
        method = getattr(gguf.GGUFWriter, name)
        return lambda *args, **kwargs: method(self, *args, **kwargs)


def _rope_parameters(hparams):
    """conversion/base.py (TextModel.__init__): rope_parameters, with the global values mirrored in."""
    rope = dict(hparams.get("rope_parameters", hparams.get("rope_scaling")) or {})

    def find(keys):
        return next((hparams[k] for k in keys if k in hparams), None)

    theta = find(["global_rope_theta", "rope_global_theta", "rope_theta_global", "rope_theta", "rotary_emb_base"])
    partial = find(["partial_rotary_factor", "rope_pct", "rope_percent"])
    original = find(["original_max_position_embeddings"])
    if "full_attention" not in rope and "sliding_attention" not in rope:
        if "rope_theta" not in rope and theta is not None:
            rope["rope_theta"] = theta
        if "rope_type" not in rope and rope.get("type") is not None:
            rope["rope_type"] = rope["type"]
        if "partial_rotary_factor" not in rope and partial is not None:
            rope["partial_rotary_factor"] = partial
        if "original_max_position_embeddings" not in rope and original is not None:
            rope["original_max_position_embeddings"] = original
    return rope


class _Model:
    def __init__(self, config):
        self.hparams = config
        self.rope_parameters = _rope_parameters(config)
        self.block_count = self.find_hparam(["n_layers", "num_hidden_layers", "n_layer", "num_layers"])
        self.ftype = 0
        self.gguf_writer = _Recorder("phi3")

    def find_hparam(self, keys, optional=False):
        key = next((k for k in keys if k in self.hparams), None)
        if key is not None:
            return self.hparams[key]
        if optional:
            return None
        raise KeyError(f"could not find any of: {keys}")

    def format_tensor_name(self, key, bid=None, suffix=".weight"):
        return gguf.TENSOR_NAMES[key].format(bid=bid) + suffix


def convert(llama_src, config):
    """(kvs, extra_tensors) llama.cpp's Phi3MiniModel writes for this config.json:
    kvs {key: (GGUFValueType, value)} without general.*, extra_tensors {gguf name: float32 array}."""
    path = os.path.join(llama_src, "conversion", "phi.py")
    namespace = {"torch": _TorchShim, "math": math, "gguf": gguf}
    for name in ("set_gguf_parameters", "generate_extra_tensors"):
        exec(compile(_method(path, "Phi3MiniModel", name), "llama.cpp conversion/phi.py", "exec"), namespace)
    model = _Model(config)
    namespace["set_gguf_parameters"](model)
    extras = {name: np.asarray(t, dtype=np.float32) for name, t in namespace["generate_extra_tensors"](model)}
    kvs = {k: v for k, v in model.gguf_writer.kv.items() if not k.startswith("general.")}
    return kvs, extras
