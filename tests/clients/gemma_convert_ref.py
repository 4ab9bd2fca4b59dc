"""llama.cpp's own conversion code for gemma, gemma2 and gemma3, taken from the llama.cpp source bundled in
node-llama-cpp and run here on numpy arrays instead of torch tensors:
  - ModelBase.filter_tensors and TextModel.filter_tensors (conversion/base.py): the `language_model.` prefix
    removed, vision tower / projector tensors skipped; GemmaModel/Gemma2Model.filter_tensors drop lm_head;
  - GemmaModel / Gemma2Model / Gemma3Model.modify_tensors (+ Gemma3Model.norm_shift) from conversion/gemma.py:
    the +1 on every `norm.weight`, gemma3's cut of embed_tokens to the real vocabulary.
The functions are extracted with `ast` and executed as written. `super()` resolves to a stand-in whose
modify_tensors yields (name, tensor) unchanged (TextModel.modify_tensors only maps the name) and whose
filter_tensors is the next extracted class in the chain.

The tensor handed to modify_tensors has the dtype the converter's prepare_tensors gives it: F16 stays float16
(numpy's float16 add rounds to fp16 as torch's does), BF16 and F32 become float32 (prepare_tensors turns every
dtype other than F16/F32 into float32 before modify_tensors). Source.native() provides exactly that.
"""
import json
import os
import pathlib

from llama_convert_ref import _function_source

_CLASS_OF = {"gemma": "GemmaModel", "gemma2": "Gemma2Model", "gemma3": "Gemma3Model"}


def _exec_function(path, class_name, function_name, namespace):
    module = _function_source(path, class_name, function_name)
    exec(compile(module, f"llama.cpp {os.path.basename(path)}", "exec"), namespace)
    return namespace[function_name]


class _NameOnly:
    """What TextModel.modify_tensors does past the subclass: map the name (done by the test) and yield."""

    def modify_tensors(self, data, name, bid):
        yield name, data


class _Logger:
    def debug(self, *args, **kwargs):
        pass

    info = debug


class Converter:
    """arch: 'gemma' | 'gemma2' | 'gemma3'; model_dir: the checkpoint (tokenizer.json for gemma3's vocab)."""

    def __init__(self, llama_src, arch, model_dir, hparams):
        base = os.path.join(llama_src, "conversion", "base.py")
        gemma = os.path.join(llama_src, "conversion", "gemma.py")
        model_base_filter = _exec_function(base, "ModelBase", "filter_tensors", {})
        text_next = type("S", (), {"filter_tensors": staticmethod(lambda item: model_base_filter(None, item))})
        text_filter = _exec_function(base, "TextModel", "filter_tensors", {"super": lambda: text_next})
        cls = _CLASS_OF[arch]
        if arch in ("gemma", "gemma2"):
            gemma_next = type("S", (), {"filter_tensors": staticmethod(lambda item: text_filter(None, item))})
            own = _exec_function(gemma, cls, "filter_tensors", {"super": lambda: gemma_next, "logger": _Logger()})
            self._filter = lambda item: own(None, item)
        else:
            self._filter = lambda item: text_filter(None, item)
        modify = _exec_function(gemma, cls, "modify_tensors", {"super": lambda: _NameOnly(), "json": json})
        model = type("Model", (), {})()
        model.dir_model = pathlib.Path(model_dir)
        model.hparams = hparams
        if arch == "gemma3":
            shift = _exec_function(gemma, cls, "norm_shift", {})
            model.norm_shift = lambda name: shift(model, name)
        self._modify = lambda data, name: list(modify(model, data, name, None))

    def filter_name(self, name):
        """The name modify_tensors sees, or None when the converter skips the tensor."""
        kept = self._filter((name, None))
        return None if kept is None else kept[0]

    def convert(self, data, name):
        """[(name, array)] as the converter yields them, arrays as float32 (what a F32 GGUF tensor holds)."""
        return [(n, d.astype("float32")) for n, d in self._modify(data, name)]
