"""A rebox GGUF against what llama.cpp's own converter writes for the same checkpoint (the converter's
tensors and KVs as a converter_run.py chain gives them), for the ggufpy_* scripts; gguf-py's GGUFReader
reads the file. compare_tensors: every tensor must be one the converter writes (name, ne, values bit
for bit after gguf.quants.dequantize), every one of those must be in the file, and the file holds the
expected set of tensor types. compare_gguf adds the KVs: general.architecture must be the converter's,
every {arch}.* KV it writes must be in the file with the same type and value (arrays element for
element), in the converter's order when asked, and the file may hold no other {arch}.* KV but the ones
the caller names. Nothing here comes from rebox.
"""
import numpy as np
import gguf


def no_mtp_option(expect_types):
    """TYPES of a MODEL_DIR FILE.gguf TYPES triple, with ":no-mtp" appended for a file converted
    with --no-mtp: (types, True); the converter is then run as convert_hf_to_gguf.py --no-mtp runs
    it (its class's no_mtp set)."""
    if expect_types.endswith(":no-mtp"):
        return expect_types[: -len(":no-mtp")], True
    return expect_types, False


def field_value(field):
    def one(index):
        part = field.parts[index]
        if field.types[-1] == gguf.GGUFValueType.STRING:
            return bytes(part).decode("utf-8")
        return part.tolist()[0]
    if field.types[0] == gguf.GGUFValueType.ARRAY:
        return [one(i) for i in field.data]
    return one(field.data[0])


def same_value(vtype, want, got):
    if vtype == gguf.GGUFValueType.FLOAT32:
        return np.float32(want).view(np.uint32) == np.float32(got).view(np.uint32)
    if vtype == gguf.GGUFValueType.ARRAY:
        return list(want) == list(got)
    return want == got


def compare_tensors(gguf_path, wanted, origin, expect_types, fold_scales=False):
    """wanted / origin: GGUF name -> float32 array / the source tensor it comes from; expect_types: the
    comma-separated tensor types the file must hold (empty: any). fold_scales: a tensor N.scale
    (llama.cpp's per-tensor factor of an NVFP4 N.weight, [1] or [experts]) is multiplied into N.weight's
    values, as llama.cpp's graph applies it (float64, exact for FP4 block values, rounded once to
    float32), and is not itself a converter tensor. Returns (problems, reader, tensors that matched,
    {type name: count})."""
    problems = []
    reader = gguf.GGUFReader(gguf_path)
    seen, types, same = set(), {}, 0
    scales = {t.name[: -len(".scale")]: np.asarray(t.data, dtype=np.float64).ravel()
              for t in reader.tensors if fold_scales and t.name.endswith(".scale")}
    for t in reader.tensors:
        types[t.tensor_type.name] = types.get(t.tensor_type.name, 0) + 1
        if t.name[: -len(".scale")] in scales and t.name.endswith(".scale"):
            continue
        seen.add(t.name)
        if t.name not in wanted:
            problems.append(f"GGUF tensor {t.name}: llama.cpp's converter writes no such tensor")
            continue
        want = wanted[t.name]
        got = np.asarray(t.data, dtype=np.float32) if t.tensor_type == gguf.GGMLQuantizationType.F32 else (
            gguf.quants.dequantize(t.data, t.tensor_type))
        ne = [int(x) for x in t.shape]
        if ne[::-1] != list(want.shape):
            problems.append(f"{t.name}: ne {ne}, the converter writes the reverse of {list(want.shape)}")
            continue
        got = np.asarray(got, dtype=np.float32).reshape(want.shape)
        if fold_scales and t.tensor_type == gguf.GGMLQuantizationType.NVFP4:
            want = np.where(want == 0, np.float32(0), want)  # ggml's E2M1 table has no -0 (code 8: +0)
        factor = scales.get(t.name[: -len(".weight")]) if t.name.endswith(".weight") else None
        if factor is not None:  # [experts] factors: one per expert (the outermost HF dim)
            shape = (-1,) + (1,) * (got.ndim - 1)
            got = (got.astype(np.float64) * factor.reshape(shape)).astype(np.float32)
        diff = got.view(np.uint32) != want.view(np.uint32)
        if diff.any():
            i = tuple(int(x) for x in np.argwhere(diff)[0])
            problems.append(f"{t.name} ({t.tensor_type.name}): {int(diff.sum())} of {want.size} values differ "
                            f"from llama.cpp's conversion of {origin[t.name]}; first at {i}: gguf {got[i]!r}, "
                            f"converter {want[i]!r}")
            continue
        same += 1
    for g, name in origin.items():
        if g not in seen:
            problems.append(f"source tensor {name}: missing from the GGUF (the converter writes {g})")
    if expect_types and set(types) != set(expect_types.split(",")):
        problems.append(f"tensor types {sorted(types)}, expected {expect_types}")
    return problems, reader, same, types


def compare_gguf(gguf_path, wanted, origin, want_kvs, arch, expect_types, own_kvs=(), kv_prefixes=(),
                 in_order=False, fold_scales=False):
    """compare_tensors, then the KVs: want_kvs: key -> (GGUFValueType, value); kv_prefixes: namespaces
    besides {arch}. the file may hold only the converter's KVs in (apertus: xielu.); in_order: the
    {arch}. keys must also come in the converter's order. Returns (problems, reader, tensors that
    matched, {type name: count})."""
    problems, reader, same, types = compare_tensors(gguf_path, wanted, origin, expect_types, fold_scales)
    got_arch = field_value(reader.fields["general.architecture"])
    if got_arch != arch:
        problems.append(f"general.architecture {got_arch!r}, the converter writes {arch!r}")
    for key, (vtype, want) in want_kvs.items():
        field = reader.fields.get(key)
        if field is None:
            problems.append(f"KV {key}: missing; the converter writes {vtype.name} {want!r}")
        elif field.types[0] != vtype:
            problems.append(f"KV {key}: type {field.types[0].name}, the converter writes {vtype.name}")
        elif not same_value(vtype, want, field_value(field)):
            problems.append(f"KV {key}: {field_value(field)!r}, the converter writes {want!r}")
    for key in reader.fields:
        if key.startswith((arch + ".",) + tuple(kv_prefixes)) and key not in want_kvs and key not in own_kvs:
            problems.append(f"KV {key}: written by rebox, not by llama.cpp's converter for this config")
    order = [key for key in reader.fields if key.startswith(arch + ".")]
    if in_order and [k for k in want_kvs if k.startswith(arch + ".")] != order:
        problems.append(f"KV order {order}, the converter writes {list(want_kvs)}")
    return problems, reader, same, types


def run_triples(check, argv, usage):
    """The ggufpy_* main: check(llama_src, model_dir, gguf_path, expect_types) for each MODEL_DIR
    FILE.gguf TYPES triple after LLAMA_SRC in argv, its problems printed (60 at most) and exit 1."""
    import sys
    llama_src, triples = argv[1], argv[2:]
    assert triples and len(triples) % 3 == 0, usage
    problems = []
    for i in range(0, len(triples), 3):
        problems += check(llama_src, *triples[i:i + 3])
    if problems:
        print("FAIL:")
        for p in problems[:60]:
            print("  " + p)
        sys.exit(1)
