"""Loaded by every script `ggufpy` runs (lib/gguf_py.sh puts this folder first on PYTHONPATH).

gguf-py's GGUFReader maps the file with numpy.memmap and slices it once per array element: for a real
vocabulary (151k-262k tokens and as many merges) that is millions of slices, and each one of numpy's
memmap subclass runs Python-level hooks (__array_finalize__, __getitem__) that a plain ndarray does not:
three quarters of a reader's time (measured: 33 s -> 7.7 s for the o200k tokenizer's file). So the reader
gets the same mapping viewed as a plain ndarray: the same bytes, no copy, and every line of GGUFReader
runs as written. Nothing else changes (the module's other uses of numpy are numpy's own).

The change is made when a script imports gguf.gguf_reader, not here: importing gguf-py (and numpy) up
front cost every run 0.2 CPU-s, also the fixture and converter scripts that never read a GGUF.
"""
import importlib.abc
import importlib.machinery
import sys

_READER = "gguf.gguf_reader"


def _view_memmaps_as_plain_arrays(reader_module):
    import types

    import numpy

    plain = types.ModuleType("numpy")
    plain.__dict__.update(numpy.__dict__)
    plain.memmap = lambda *args, **kwargs: numpy.memmap(*args, **kwargs).view(numpy.ndarray)
    reader_module.np = plain


class _PatchingLoader(importlib.abc.Loader):
    def __init__(self, loader):
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        _view_memmaps_as_plain_arrays(module)


class _ReaderFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        if fullname != _READER:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _PatchingLoader(spec.loader)
        return spec


sys.meta_path.insert(0, _ReaderFinder())
