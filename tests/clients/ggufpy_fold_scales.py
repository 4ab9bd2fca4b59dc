"""Writes a twin of an NVFP4 GGUF in which each llama.cpp per-tensor factor is multiplied in: every
NVFP4 weight N.weight with a tensor N.scale ([1], or [experts] for stacked experts) becomes F32
dequantize(N.weight) * scale (gguf-py's dequantize, the product in float64, rounded once to float32),
those N.scale tensors are left out, every other tensor and every KV is copied as it is (general.file_type
0). A file whose outputs llama.cpp must reproduce if its graph applies the .scale tensors.

Usage: ggufpy_fold_scales.py IN.gguf OUT.gguf
"""
import sys

import numpy as np
import gguf


def write_f32_twin(reader, path, replaced):
    """Copies the file `reader` reads to `path` without the .scale tensors of the weights named in
    `replaced` (name -> float32 values, ggml shape order), written as F32: every KV as it is
    (general.file_type 0), every other tensor's bytes unchanged."""
    arch = reader.fields["general.architecture"].contents()
    writer = gguf.GGUFWriter(path, arch, use_temp_file=False)
    for key, field in reader.fields.items():
        if key.startswith("GGUF.") or key in ("general.architecture", "general.alignment"):
            continue
        main = field.types[0]
        sub = field.types[-1] if main == gguf.GGUFValueType.ARRAY else None
        value = field.contents()
        if main == gguf.GGUFValueType.ARRAY and len(value) == 0:
            continue
        writer.add_key_value(key, 0 if key == "general.file_type" else value, main, sub_type=sub)
    for t in reader.tensors:
        if t.name.endswith(".scale") and t.name[: -len(".scale")] + ".weight" in replaced:
            continue
        if t.name in replaced:
            writer.add_tensor(t.name, np.ascontiguousarray(replaced[t.name]))
            continue
        ne = [int(n) for n in t.shape]
        block, type_size = gguf.GGML_QUANT_SIZES[t.tensor_type]
        byte_shape = list(reversed(ne))
        byte_shape[-1] = ne[0] // block * type_size
        writer.add_tensor(t.name, np.asarray(t.data).view(np.uint8).reshape(byte_shape),
                          raw_dtype=t.tensor_type)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def folded_weights(reader):
    """Each NVFP4 weight N.weight with a tensor N.scale ([1], or [experts] for stacked experts), as
    dequantize(N.weight) * scale in float64, rounded once to float32. (Another weight's .scale is no
    per-tensor factor: gemma4's router ffn_gate_inp.scale [hidden] scales the router's input.)"""
    scales = {t.name[: -len(".scale")] + ".weight": np.asarray(t.data, dtype=np.float64).ravel()
              for t in reader.tensors if t.name.endswith(".scale")}
    folded = {}
    for t in reader.tensors:
        if t.name not in scales or t.tensor_type != gguf.GGMLQuantizationType.NVFP4:
            continue
        ne = [int(n) for n in t.shape]
        values = np.asarray(gguf.quants.dequantize(t.data, t.tensor_type), dtype=np.float64)
        values = values.reshape(list(reversed(ne)))
        factor = scales[t.name]
        values = values * (factor.reshape((-1,) + (1,) * (values.ndim - 1)) if factor.size > 1 else factor[0])
        folded[t.name] = values.astype(np.float32)
    return folded


if __name__ == "__main__":
    src, dst = sys.argv[1:3]
    reader = gguf.GGUFReader(src)
    folded = folded_weights(reader)
    write_f32_twin(reader, dst, folded)
    print(f"  {dst.rsplit('/', 1)[-1]}: {len(folded)} weights with their .scale multiplied in")
    if not folded:
        sys.exit("FAIL: no .scale tensor to fold")
