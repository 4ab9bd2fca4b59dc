"""llama.cpp's own conversion code for the llama family, taken from the llama.cpp source bundled in
node-llama-cpp (conversion/llama.py) and run here with numpy instead of torch: the Q/K row permutation
(`LlamaModel.permute`) and the Llama-3 `rope_freqs` tensor (`LlamaModel.generate_extra_tensors`).

The functions are extracted from the bundle's source with `ast` and executed as they are written; only
torch is replaced, by a small shim that keeps torch's float32 semantics (a python scalar does not widen a
float32 tensor, `scalar / tensor` is `tensor.reciprocal() * scalar` as torch defines `__rtruediv__`).
"""
import ast
import math
import os

import numpy as np


def _function_source(path, class_name, function_name):
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


def _load(llama_src, function_name, namespace):
    module = _function_source(os.path.join(llama_src, "conversion", "llama.py"), "LlamaModel", function_name)
    exec(compile(module, "llama.cpp conversion/llama.py", "exec"), namespace)
    return namespace[function_name]


class _T:
    """A float32 torch tensor as far as generate_extra_tensors uses one."""

    def __init__(self, a):
        self.a = np.asarray(a, dtype=np.float32)

    @staticmethod
    def _v(x):
        return x.a if isinstance(x, _T) else np.float32(x)

    def __iter__(self):
        return (_T(v) for v in self.a)

    def __truediv__(self, o):
        return _T(self.a / self._v(o))

    def __rtruediv__(self, o):  # torch: self.reciprocal() * other
        return _T((np.float32(1) / self.a) * self._v(o))

    def __rpow__(self, o):
        return _T(np.power(self._v(o), self.a))

    def __add__(self, o):
        return _T(self.a + self._v(o))

    __radd__ = __add__

    def __sub__(self, o):
        return _T(self.a - self._v(o))

    def __rsub__(self, o):
        return _T(self._v(o) - self.a)

    def __mul__(self, o):
        return _T(self.a * self._v(o))

    __rmul__ = __mul__

    def __lt__(self, o):
        return bool(self.a < self._v(o))

    def __gt__(self, o):
        return bool(self.a > self._v(o))


class _TorchShim:
    float32 = np.float32

    @staticmethod
    def arange(start, end, step, dtype=None):
        return _T(np.arange(start, end, step, dtype=np.float32))

    @staticmethod
    def tensor(items, dtype=None):
        return np.array([_T._v(x) for x in items], dtype=np.float32)


def permute_fn(llama_src):
    """LlamaModel.permute(weights, n_head, n_head_kv) from the bundle, on numpy arrays."""
    return _load(llama_src, "permute", {})


def rope_freqs(llama_src, config):
    """What LlamaModel.generate_extra_tensors yields for this config.json: {gguf name: float32 array}."""
    rope_parameters = dict(config.get("rope_parameters", config.get("rope_scaling")) or {})
    if "rope_theta" not in rope_parameters and "rope_theta" in config:
        rope_parameters["rope_theta"] = config["rope_theta"]
    if "rope_type" not in rope_parameters and rope_parameters.get("type") is not None:
        rope_parameters["rope_type"] = rope_parameters["type"]

    class Model:
        pass

    model = Model()
    model.hparams = config
    model.rope_parameters = rope_parameters
    model.format_tensor_name = lambda tensor: "rope_freqs.weight"
    gen = _load(llama_src, "generate_extra_tensors", {"torch": _TorchShim, "math": math, "gguf": _GgufShim})
    return {name: np.asarray(value, dtype=np.float32) for name, value in gen(model)}


class _GgufShim:
    class MODEL_TENSOR:
        ROPE_FREQS = "rope_freqs"
