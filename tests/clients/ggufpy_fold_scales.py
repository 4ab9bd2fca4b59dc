"""Writes a twin of an NVFP4 GGUF in which each llama.cpp per-tensor factor is multiplied in: every
weight N.weight with a tensor N.scale ([1], or [experts] for stacked experts) becomes F32
dequantize(N.weight) * scale (gguf-py's dequantize, the product in float64, rounded once to float32),
the N.scale tensors are left out, every other tensor and every KV is copied as it is (general.file_type
0). A file whose outputs llama.cpp must reproduce if its graph applies the .scale tensors.

Usage: ggufpy_fold_scales.py IN.gguf OUT.gguf
"""
import sys

import numpy as np
import gguf

src, dst = sys.argv[1:3]
reader = gguf.GGUFReader(src)
scales = {t.name[: -len(".scale")] + ".weight": np.asarray(t.data, dtype=np.float64).ravel()
          for t in reader.tensors if t.name.endswith(".scale")}
arch = reader.fields["general.architecture"].contents()
writer = gguf.GGUFWriter(dst, arch, use_temp_file=False)
for key, field in reader.fields.items():
    if key.startswith("GGUF.") or key in ("general.architecture", "general.alignment"):
        continue
    main = field.types[0]
    sub = field.types[-1] if main == gguf.GGUFValueType.ARRAY else None
    value = field.contents()
    if main == gguf.GGUFValueType.ARRAY and len(value) == 0:
        continue
    writer.add_key_value(key, 0 if key == "general.file_type" else value, main, sub_type=sub)
folded = 0
for t in reader.tensors:
    if t.name.endswith(".scale"):
        continue
    ne = [int(n) for n in t.shape]
    if t.name in scales:
        values = np.asarray(gguf.quants.dequantize(t.data, t.tensor_type), dtype=np.float64)
        values = values.reshape(list(reversed(ne)))
        factor = scales[t.name]
        values = values * (factor.reshape((-1,) + (1,) * (values.ndim - 1)) if factor.size > 1 else factor[0])
        writer.add_tensor(t.name, np.ascontiguousarray(values.astype(np.float32)))
        folded += 1
        continue
    block, type_size = gguf.GGML_QUANT_SIZES[t.tensor_type]
    byte_shape = list(reversed(ne))
    byte_shape[-1] = ne[0] // block * type_size
    writer.add_tensor(t.name, np.asarray(t.data).view(np.uint8).reshape(byte_shape), raw_dtype=t.tensor_type)
writer.write_header_to_file()
writer.write_kv_data_to_file()
writer.write_tensors_to_file()
writer.close()
print(f"  {dst.rsplit('/', 1)[-1]}: {folded} weights with their .scale multiplied in")
if folded == 0:
    sys.exit("FAIL: no .scale tensor to fold")
