"""A small reader of the GGUF v3 layout (test side, shares no code with rebox), for files with very large
vocabularies: gguf-py's GGUFReader builds a numpy view per array element (about 1.2 million for XLM-R's
250,002 tokens, scores, types and charsmap: ~15 s a file), this one reads each array in one go.
Keys map to (type name, value): strings as str, string arrays as lists of str, numeric arrays as numpy arrays,
scalars as Python numbers/bools. Tensors map to (ggml type id, ne list, data bytes as a numpy uint8 view).
"""
import struct

import numpy as np

SCALARS = {0: ("UINT8", "<B"), 1: ("INT8", "<b"), 2: ("UINT16", "<H"), 3: ("INT16", "<h"), 4: ("UINT32", "<I"),
           5: ("INT32", "<i"), 6: ("FLOAT32", "<f"), 7: ("BOOL", "<?"), 10: ("UINT64", "<Q"), 11: ("INT64", "<q"),
           12: ("FLOAT64", "<d")}
NUMPY = {0: "<u1", 1: "<i1", 2: "<u2", 3: "<i2", 4: "<u4", 5: "<i4", 6: "<f4", 7: "?", 10: "<u8", 11: "<i8",
         12: "<f8"}


class FastGguf:
    def __init__(self, path):
        self.raw = np.memmap(path, dtype=np.uint8, mode="r")
        buf = self.buf = memoryview(self.raw)
        magic, version, n_tensors, n_kv = struct.unpack_from("<4sIQQ", buf, 0)
        if magic != b"GGUF" or version != 3:
            raise ValueError(f"{path}: not a GGUF v3 file")
        self.at = 24
        self.kv = {}
        for _ in range(n_kv):
            key = self.string()
            (kind,) = self.unpack("<I")
            self.kv[key] = self.value(kind)
        infos = []
        for _ in range(n_tensors):
            name = self.string()
            (dims,) = self.unpack("<I")
            ne = list(struct.unpack_from(f"<{dims}Q", buf, self.at))
            self.at += 8 * dims
            kind, offset = self.unpack("<IQ")
            infos.append((name, kind, ne, offset))
        align = int(self.kv.get("general.alignment", ("UINT32", 32))[1])
        base = (self.at + align - 1) // align * align
        offsets = sorted(o for _, _, _, o in infos) + [len(self.raw) - base]
        self.tensors = {}
        for name, kind, ne, offset in infos:
            end = offsets[offsets.index(offset) + 1]
            self.tensors[name] = (kind, ne, self.raw[base + offset: base + end])

    def unpack(self, fmt):
        values = struct.unpack_from(fmt, self.buf, self.at)
        self.at += struct.calcsize(fmt)
        return values

    def string(self):
        (n,) = self.unpack("<Q")
        text = bytes(self.buf[self.at: self.at + n]).decode("utf-8")
        self.at += n
        return text

    def value(self, kind):
        if kind == 8:
            return ("STRING", self.string())
        if kind in SCALARS:
            name, fmt = SCALARS[kind]
            return (name, self.unpack(fmt)[0])
        if kind != 9:
            raise ValueError(f"unknown GGUF value type {kind}")
        item, count = self.unpack("<IQ")
        if item == 8:
            return ("ARRAY[STRING]", [self.string() for _ in range(count)])
        dtype = np.dtype(NUMPY[item])
        data = np.frombuffer(self.buf, dtype=dtype, count=count, offset=self.at).copy()
        self.at += dtype.itemsize * count
        return (f"ARRAY[{SCALARS[item][0]}]", data)
