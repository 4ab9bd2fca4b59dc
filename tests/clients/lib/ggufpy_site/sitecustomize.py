"""Loaded by every script `ggufpy` runs (lib/gguf_py.sh puts this folder first on PYTHONPATH).

gguf-py's GGUFReader maps the file with numpy.memmap and slices it once per array element: for a real
vocabulary (151k-262k tokens and as many merges) that is millions of slices, and each one of numpy's
memmap subclass runs Python-level hooks (__array_finalize__, __getitem__) that a plain ndarray does not:
three quarters of a reader's time (measured: 33 s -> 7.7 s for the o200k tokenizer's file). So the reader
gets the same mapping viewed as a plain ndarray: the same bytes, no copy, and every line of GGUFReader
runs as written. Nothing else changes (the module's other uses of numpy are numpy's own).
"""
import types

import numpy

try:
    import gguf.gguf_reader as _reader
except ImportError:  # not a gguf-py run: nothing to change
    _reader = None

if _reader is not None:
    _plain = types.ModuleType("numpy")
    _plain.__dict__.update(numpy.__dict__)
    _plain.memmap = lambda *args, **kwargs: numpy.memmap(*args, **kwargs).view(numpy.ndarray)
    _reader.np = _plain
