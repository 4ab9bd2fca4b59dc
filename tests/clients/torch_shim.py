"""torch as far as LlamaModel.generate_extra_tensors uses it (llama3 rope_freqs), in numpy with torch's float32
semantics: a python scalar does not widen a float32 tensor, and `scalar / tensor` is `tensor.reciprocal() * scalar`
as torch defines `__rtruediv__`. Passed to converter_run.Converter as extra_globals={"torch": Torch}.
"""
import numpy as np


class T:
    """A float32 torch tensor as far as generate_extra_tensors uses one."""

    def __init__(self, a):
        self.a = np.asarray(a, dtype=np.float32)

    @staticmethod
    def _v(x):
        return x.a if isinstance(x, T) else np.float32(x)

    def __iter__(self):
        return (T(v) for v in self.a)

    def __truediv__(self, o):
        return T(self.a / self._v(o))

    def __rtruediv__(self, o):  # torch: self.reciprocal() * other
        return T((np.float32(1) / self.a) * self._v(o))

    def __rpow__(self, o):
        return T(np.power(self._v(o), self.a))

    def __add__(self, o):
        return T(self.a + self._v(o))

    __radd__ = __add__

    def __sub__(self, o):
        return T(self.a - self._v(o))

    def __rsub__(self, o):
        return T(self._v(o) - self.a)

    def __mul__(self, o):
        return T(self.a * self._v(o))

    __rmul__ = __mul__

    def __lt__(self, o):
        return bool(self.a < self._v(o))

    def __gt__(self, o):
        return bool(self.a > self._v(o))


class Torch:
    float32 = np.float32

    @staticmethod
    def arange(start, end, step, dtype=None):
        return T(np.arange(start, end, step, dtype=np.float32))

    @staticmethod
    def tensor(items, dtype=None):
        return np.array([T._v(x) for x in items], dtype=np.float32)
