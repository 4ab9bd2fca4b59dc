"""llama.cpp's own converter classes from the llama.cpp source bundled in node-llama-cpp, run on numpy arrays
without torch or transformers: the methods of a class chain (e.g. NomicBertModel -> BertModel -> TextModel ->
ModelBase, from conversion/*.py) are extracted with `ast` and executed as written, bound to one stand-in
object. `self.method` finds the first class of the chain that defines the method; `super()` inside a
method of chain[i] finds it from chain[i+1] on. ModelBase.__init__ alone is replaced (it opens the
safetensors and sets up the output file): the stand-in sets hparams, dir_model, the file type and a
GGUFWriter with no file, whose kv_data then holds every KV set_gguf_parameters writes under gguf-py's own
key names. Nothing here comes from rebox.

Usage (library):
  conv = Converter(llama_src, [("bert.py", "NomicBertModel"), ("bert.py", "BertModel"),
                               ("base.py", "TextModel"), ("base.py", "ModelBase")], model_dir, hparams)
  conv.kvs()                      -> {key: value} after set_gguf_parameters
  conv.tensors(name, array)       -> [(gguf_name, array)] after filter_tensors + modify_tensors ([] if skipped)
  conv.tensors(name, array, bid)  -> the same with the block id modify_tensors gets (block_id(name))
  conv.file_type(outtype)         -> general.file_type as the converter derives it (set on the object)
  Converter(..., attrs={"sentence_transformers_dense_modules": True}) sets attributes first (what
  ModelBase.__init__ takes as arguments, or a class's mutable class attributes).
  Converter(..., class_constants=True) sets the chain's literal class attributes too (an MmprojModel
  chain, run as `convert_hf_to_gguf.py --mmproj` runs it, reads has_vision_encoder, n_block_keys, ...).
  static_method(llama_src, "llama.py", "LlamaModel", "permute") -> one @staticmethod, as written.

Inside the methods, a chain class's name (LlamaModel.permute, ModelBase.load_hparams) is that class of
the chain; ModelBase.load_hparams reads config.json, what it falls back to without transformers.
"""
import ast
import copy
import json
import logging
import os
import pathlib

import gguf
import numpy as np


def _class_node(path, class_name):
    """The class `class_name` of the module, or a nested one by its dotted path
    ("Mistral3Model.Ministral3Model"); None when there is none."""
    body = ast.parse(open(path, encoding="utf-8").read()).body
    node = None
    for part in class_name.split("."):
        node = next((n for n in body if isinstance(n, ast.ClassDef) and n.name == part), None)
        if node is None:
            return None
        body = node.body
    return node


def _methods(path, class_name):
    node = _class_node(path, class_name)
    if node is None:
        raise LookupError(f"{path}: class {class_name} not found")
    out = {}
    for item in node.body:
        if isinstance(item, ast.FunctionDef):
            # a @staticmethod is called without the object (EmbeddingGemma._get_dense_prefix)
            item.rebox_static = any(isinstance(d, ast.Name) and d.id == "staticmethod"
                                    for d in item.decorator_list)
            item.decorator_list = []
            for arg in item.args.args + item.args.kwonlyargs + item.args.posonlyargs:
                arg.annotation = None
            if item.args.vararg:
                item.args.vararg.annotation = None
            if item.args.kwarg:
                item.args.kwarg.annotation = None
            item.returns = None
            out[item.name] = item
    return out


class _Stand:
    """The converter object: attributes set by the executed methods, methods looked up along the chain."""

    def __init__(self, conv):
        object.__setattr__(self, "_conv", conv)

    def __getattr__(self, name):
        bound = self._conv.bound(name, 0)
        if bound is None:
            raise AttributeError(name)
        return bound


class _Super:
    """super(): every attribute (__init__ included) is the next definition along the chain."""

    def __init__(self, conv, start):
        object.__setattr__(self, "_at", (conv, start))

    def __getattribute__(self, name):
        conv, start = object.__getattribute__(self, "_at")
        bound = conv.bound(name, start)
        if bound is None:
            raise AttributeError(f"super().{name}")
        return bound


class _ClassRef:
    """A chain class named inside a method (`LlamaModel.permute(...)`): its attributes from that class on.
    A method called through the class with the object as its first argument
    (`MmprojModel.modify_tensors(self, ...)`, Qwen3VLVisionModel) gets that object once."""

    def __init__(self, conv, start):
        object.__setattr__(self, "_at", (conv, start))

    def __getattr__(self, name):
        conv, start = object.__getattribute__(self, "_at")
        bound = conv.bound(name, start)
        if bound is None:
            raise AttributeError(name)
        if not callable(bound):
            return bound
        return lambda *a, **k: bound(*a[1:], **k) if a and a[0] is conv.obj else bound(*a, **k)


def static_method(llama_src, module, class_name, name):
    """One @staticmethod of a converter class, extracted and executed as written (LlamaModel.permute)."""
    node = _methods(os.path.join(llama_src, "conversion", module), class_name)[name]
    if not node.rebox_static:
        raise LookupError(f"{class_name}.{name} is not a @staticmethod")
    namespace = {"gguf": gguf, "np": np}
    exec(compile(ast.Module(body=[node], type_ignores=[]), f"llama.cpp {class_name}.{name}", "exec"), namespace)
    return namespace[name]


def block_id(name):
    """ModelBase.prepare_tensors' block id: the first number-like part of the tensor name."""
    return next((int(part) for part in name.split(".") if part.isdecimal()), None)


class Converter:
    def __init__(self, llama_src, chain, model_dir, hparams, arch_name=None, attrs=None, extra_globals=None,
                 class_constants=False):
        conv_dir = os.path.join(llama_src, "conversion")
        self.extra_globals = extra_globals or {}  # module-level names a method needs (e.g. an enum of base.py)
        self.chain = []
        for index, (module, class_name) in enumerate(chain):
            # a nested class (mistral3.py's Mistral3Model.Ministral3Model) goes by its own name
            self.chain.append((class_name.rsplit(".", 1)[-1], _methods(os.path.join(conv_dir, module), class_name),
                               index))
        self.compiled = {}
        self.obj = _Stand(self)
        self.model_dir = pathlib.Path(model_dir)
        self.arch_name = arch_name
        self.obj.is_mistral_format = False
        self.obj.model_type = None  # TextModel.model_type, only passed to get_model_architecture
        self.obj.fuse_gate_up_exps = False
        self.obj.ftype = gguf.LlamaFileType.ALL_F32
        self.obj.dir_model = self.model_dir
        # class attributes the chain reads (model_arch is set per class in the source)
        for module, class_name in chain:
            node = _class_node(os.path.join(conv_dir, module), class_name)
            if node is not None:
                for item in node.body:
                    if isinstance(item, ast.Assign) and len(item.targets) == 1 and \
                            isinstance(item.targets[0], ast.Name) and item.targets[0].id == "model_arch" \
                            and "model_arch" not in self.obj.__dict__:
                        self.obj.model_arch = eval(compile(ast.Expression(item.value), "arch", "eval"),
                                                   {"gguf": gguf})
        # class_constants: every class attribute of the chain whose value is a literal or a gguf constant
        # (MmprojModel's has_vision_encoder / has_audio_encoder / n_block_keys), the first definition along
        # the chain winning, as Python's attribute lookup finds it
        if class_constants:
            for module, class_name in chain:
                node = _class_node(os.path.join(conv_dir, module), class_name)
                for item in (node.body if node is not None else []):
                    target = item.targets[0] if isinstance(item, ast.Assign) and len(item.targets) == 1 else (
                        item.target if isinstance(item, ast.AnnAssign) and item.value is not None else None)
                    if not isinstance(target, ast.Name) or target.id in self.obj.__dict__:
                        continue
                    try:
                        value = eval(compile(ast.Expression(item.value), "constant", "eval"), {"gguf": gguf})
                    except Exception:  # names of the module (ModelType): not a constant this run needs
                        continue
                    setattr(self.obj, target.id, value)
        # attributes ModelBase.__init__ would set from its arguments, or a class's own mutable class
        # attributes (EmbeddingGemma's module_paths / dense_features_dims), before the chain's __init__
        for name, value in (attrs or {}).items():
            setattr(self.obj, name, value)
        self.bound("__init__", 0)(self.model_dir, self.obj.ftype, self.model_dir / "out.gguf", hparams=hparams)

    def _model_base_init(self, *args, hparams=None, **kwargs):
        self.obj.hparams = hparams
        self.obj._is_nvfp4 = False  # ModelBase.__init__'s defaults; prepare_tensors sets them
        self.obj._is_mxfp4 = False
        arch = self.arch_name or gguf.MODEL_ARCH_NAMES[self.obj.model_arch]
        self.obj.gguf_writer = gguf.GGUFWriter(None, arch)

    def bound(self, name, start):
        for class_name, methods, index in self.chain[start:]:
            if name == "__init__" and class_name == "ModelBase":
                return self._model_base_init
            if name == "load_hparams" and class_name == "ModelBase":
                return lambda dir_model, is_mistral_format: json.load(open(dir_model / "config.json"))
            if name in methods:
                key = (class_name, name)
                if key not in self.compiled:
                    namespace = {
                        "gguf": gguf, "json": json, "np": np, "os": os, "Path": pathlib.Path,
                        "logger": logging.getLogger("llama.cpp converter"),
                        "super": (lambda i=index: _Super(self, i + 1)),
                        "get_model_architecture": lambda *a, **k: "",
                        **{cls: _ClassRef(self, i) for cls, _, i in self.chain},
                        **self.extra_globals,
                    }
                    module = ast.Module(body=[methods[name]], type_ignores=[])
                    exec(compile(module, f"llama.cpp {class_name}.{name}", "exec"), namespace)
                    self.compiled[key] = namespace[name]
                function = self.compiled[key]
                if methods[name].rebox_static:
                    return function
                return lambda *a, **k: function(self.obj, *a, **k)
        return None

    def kvs(self):
        self.obj.set_gguf_parameters()
        return {key: value.value for key, value in self.obj.gguf_writer.kv_data[0].items()}

    def tensors(self, name, array, bid=None):
        kept = self.obj.filter_tensors((name, None))
        if kept is None:
            return []
        new_name = kept[0]
        return list(self.obj.modify_tensors(array, new_name, bid))

    def _statements(self, method, first, last):
        """ModelBase.<method>'s statements from the first `first` accepts to the first `last` accepts (their
        source text), run as written, as a function of the method's arguments."""
        for class_name, methods, _ in self.chain:
            if class_name == "ModelBase":
                fn = copy.deepcopy(methods[method])
                texts = [ast.unparse(node) for node in fn.body]
                begin = next((i for i, text in enumerate(texts) if first(text)), None)
                end = next((i for i, text in enumerate(texts) if i >= (begin or 0) and last(text)), None)
                if begin is None or end is None:
                    raise LookupError(f"ModelBase.{method}: the statements this test runs are gone")
                fn.body = fn.body[begin:end + 1]
                namespace = {"gguf": gguf, "json": json}
                exec(compile(ast.Module(body=[fn], type_ignores=[]), f"llama.cpp ModelBase.{method}", "exec"),
                     namespace)
                return namespace[method]
        raise LookupError("ModelBase is not in the chain")

    def file_type(self, outtype):
        """general.file_type for a file written with `outtype` (a gguf.LlamaFileType): the opening
        statements of ModelBase.prepare_tensors, which read quantization_config / hf_quant_config.json into
        _is_nvfp4 / _is_mxfp4, then prepare_metadata's statement that renames a float outtype after them.
        Sets the object's ftype, which set_gguf_parameters writes."""
        self.obj.ftype = outtype
        flags = self._statements("prepare_tensors", lambda text: True,
                                 lambda text: text.startswith("self._is_mxfp4 ="))
        flags(self.obj)
        is_ftype_rename = lambda text: text.startswith("if self.ftype in")  # noqa: E731
        self._statements("prepare_metadata", is_ftype_rename, is_ftype_rename)(self.obj, False)
        return self.obj.ftype
