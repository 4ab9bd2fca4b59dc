"""llama.cpp's own conversion code for the mixture-of-experts architectures, taken from the llama.cpp
source bundled in node-llama-cpp and run here with numpy instead of torch:

- `Qwen2MoeModel.modify_tensors` (conversion/qwen.py; Qwen3MoeModel inherits it) and
  `LlamaModel.modify_tensors` (conversion/llama.py, Mixtral: expert stacking plus the Q/K permute),
  which gather the experts of a layer and `torch.stack` them;
- `ModelBase.modify_tensors` / `ModelBase.map_tensor_name` (conversion/base.py), their `super()`, which
  name the tensors through gguf-py's TensorNameMap (gguf-py/gguf/tensor_mapping.py);
- `TextModel.set_gguf_parameters` plus the architecture's own `set_gguf_parameters`, run against a
  recording writer: which {arch}.* keys the converter writes, with which values.

Functions are extracted with `ast` and executed as written. Two things are replaced: torch (a shim:
`torch.stack` is `np.stack`) and `super().f(...)`, which an extracted function cannot resolve, rewritten
to `self._super_<Class>_f(...)` and bound to the base class's extracted method.
"""
import ast
import os
import types

import numpy as np
import gguf

from llama_convert_ref import permute_fn


def _method(path, class_name, function_name, super_class):
    tree = ast.parse(open(path, encoding="utf-8").read())
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == function_name:
                    item.decorator_list = []
                    for arg in item.args.args + item.args.kwonlyargs:
                        arg.annotation = None
                    item.returns = None
                    item.name = f"{class_name}_{function_name}"
                    _SuperCalls(super_class).visit(item)
                    return ast.fix_missing_locations(ast.Module(body=[item], type_ignores=[]))
    raise LookupError(f"{path}: {class_name}.{function_name} not found")


class _SuperCalls(ast.NodeTransformer):
    """super().f(args) -> self._super_<Base>_f(args)."""

    def __init__(self, base):
        self.base = base

    def visit_Call(self, node):
        self.generic_visit(node)
        f = node.func
        if (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Call)
                and isinstance(f.value.func, ast.Name) and f.value.func.id == "super"):
            node.func = ast.Attribute(value=ast.Name(id="self", ctx=ast.Load()),
                                      attr=f"_super_{self.base}_{f.attr}", ctx=ast.Load())
        return node


class _Logger:
    def info(self, *args, **kwargs):
        pass

    warning = debug = info


class _Torch:
    @staticmethod
    def stack(items, dim=0):
        return np.stack(items, axis=dim)


class _Recorder:
    """A GGUFWriter that records add_<name>(value) calls."""

    def __init__(self):
        self.calls = []

    def __getattr__(self, name):
        if not name.startswith("add_"):
            raise AttributeError(name)
        return lambda *args: self.calls.append((name[4:], args[0] if args else None))


class Converter:
    """One architecture's converter: HF tensors in, (GGUF name, array) out; set_gguf_parameters."""

    ARCH = {  # config model_type -> (file, class, gguf MODEL_ARCH, base class of the class)
        "qwen3_moe": ("qwen.py", "Qwen2MoeModel", gguf.MODEL_ARCH.QWEN3MOE),
        "qwen2_moe": ("qwen.py", "Qwen2MoeModel", gguf.MODEL_ARCH.QWEN2MOE),
        "mixtral": ("llama.py", "LlamaModel", gguf.MODEL_ARCH.LLAMA),
    }

    def __init__(self, llama_src, config):
        path, cls, arch = self.ARCH[config["model_type"]]
        conversion = os.path.join(llama_src, "conversion")
        namespace = {"torch": _Torch, "gguf": gguf, "logger": _Logger(), "np": np,
                     "LlamaModel": type("LlamaModel", (), {"permute": staticmethod(permute_fn(llama_src))})}

        def load(file, class_name, function_name, base):  # bound to this object, as a method
            module = _method(os.path.join(conversion, file), class_name, function_name, base)
            exec(compile(module, f"llama.cpp conversion/{file}", "exec"), namespace)
            return types.MethodType(namespace[f"{class_name}_{function_name}"], self)

        self.modify = load(path, cls, "modify_tensors", "ModelBase")
        self.base_modify = load("base.py", "ModelBase", "modify_tensors", "ModelBase")
        self.map_tensor_name = load("base.py", "ModelBase", "map_tensor_name", "ModelBase")
        self.params = load(path, cls, "set_gguf_parameters", "TextModel")
        self.text_params = load("base.py", "TextModel", "set_gguf_parameters", "ModelBase")
        # The converter's view of the model (`self` inside those methods).
        self.hparams = config
        self.block_count = config["num_hidden_layers"]
        self.hf_arch = (config.get("architectures") or [""])[0]
        self.undo_permute = True
        self.is_mistral_format = False
        self.fuse_gate_up_exps = False
        self._experts = None
        self.model_arch = arch
        self.tensor_map = gguf.get_tensor_name_map(arch, self.block_count)
        rope = dict(config.get("rope_parameters", config.get("rope_scaling")) or {})
        if "rope_theta" not in rope and "rope_theta" in config:
            rope["rope_theta"] = config["rope_theta"]
        self.rope_parameters = rope
        self.ftype = None  # general.file_type: the outtype's business, not compared
        self.gguf_writer = _Recorder()

    # what super() resolves to inside the extracted methods
    def _super_ModelBase_modify_tensors(self, data, name, bid):
        return self.base_modify(data, name, bid)

    def _super_TextModel_set_gguf_parameters(self):
        return self.text_params()

    def find_hparam(self, keys, optional=False):
        for key in keys:
            if key in self.hparams:
                return self.hparams[key]
        if optional:
            return None
        raise KeyError(f"none of {keys} in config.json")

    def convert(self, tensors):
        """tensors: [(HF name as in a transformers checkpoint, float32 array)] in file order ->
        {gguf name: array} exactly as modify_tensors yields them."""
        out = {}
        for name, data in tensors:
            parts = name.split(".")
            bid = int(parts[2]) if len(parts) > 3 and parts[1] == "layers" else None
            for gguf_name, array in self.modify(data, name, bid):
                out[gguf_name] = np.asarray(array, dtype=np.float32)
        left = [k for d in (self._experts or []) for k in d]
        if left:
            raise ValueError(f"experts left unprocessed by the converter: {left[:4]}")
        return out

    def keys(self):
        """[(writer method without add_, value)] that set_gguf_parameters writes."""
        self.gguf_writer.calls.clear()
        self.params()
        return list(self.gguf_writer.calls)
