"""gguf-py as the writer, rebox as the reader.

Writes GGUF files with llama.cpp's own Python writer (GGUFWriter): KVs of every scalar type,
strings (UTF-8, empty), arrays (string, int32, float32, bool, uint64 via sub_type) and tensors
(F32, F16, Q8_0 and Q4_1 made by gguf.quants.quantize, 1-D to 3-D), one file with the default
alignment and one with general.alignment = 64. Then runs `rebox inspect --json` on each and compares
counts, alignment, data offset, file size, every KV (key, type, value, file order) and every
tensor (name, type, type id, ne, offset, nbytes) with what gguf-py's GGUFReader reports.

Usage: ggufpy_write.py REBOX WORK_DIR     (exit 1 on any difference)
"""
import json
import os
import subprocess
import sys

import numpy as np
import gguf
from gguf import GGMLQuantizationType as Q, GGUFValueType as T

rebox, work = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(20240501)
problems = []


def fail(msg):
    problems.append(msg)


def write_file(path, alignment=None):
    w = gguf.GGUFWriter(path, "qwen3")
    if alignment:
        w.add_custom_alignment(alignment)
    w.add_uint8("t.u8", 255)
    w.add_int8("t.i8", -128)
    w.add_uint16("t.u16", 65535)
    w.add_int16("t.i16", -32768)
    w.add_uint32("t.u32", 4294967295)
    w.add_int32("t.i32", -2147483648)
    w.add_float32("t.f32", 1.0e-6)
    w.add_float32("t.f32_neg", -3.4028234663852886e38)
    w.add_uint64("t.u64", 2**53 - 1)
    w.add_int64("t.i64", -(2**53 - 1))
    w.add_float64("t.f64", 0.1)
    w.add_bool("t.bool_true", True)
    w.add_bool("t.bool_false", False)
    w.add_string("t.str", "héllo wörld 한국어 中文 🙂\n\ttab")
    w.add_key_value("t.str_empty", "", T.STRING)  # add_string("") is skipped by gguf-py; force it
    w.add_array("t.arr_str", ["a", "", "Ġthe", "<|im_start|>", "👨‍👩‍👧", "x" * 300])
    w.add_array("t.arr_i32", [1, -2, 2147483647, -2147483648])
    w.add_array("t.arr_f32", [0.5, -1.25, 1.0e-30, 3.0e38])
    w.add_array("t.arr_bool", [True, False, True])
    w.add_key_value("t.arr_u64", [0, 1, 2**53 - 1], T.ARRAY, sub_type=T.UINT64)
    w.add_key_value("t.arr_u8", [0, 7, 255], T.ARRAY, sub_type=T.UINT8)

    w.add_tensor("t.f32_1d", rng.standard_normal(96).astype(np.float32))
    w.add_tensor("t.f32_2d", rng.standard_normal((3, 40)).astype(np.float32))
    w.add_tensor("t.f16_2d", rng.standard_normal((5, 64)).astype(np.float16))
    w.add_tensor("t.f32_3d", rng.standard_normal((2, 3, 8)).astype(np.float32))
    q8 = gguf.quants.quantize(rng.standard_normal((4, 64)).astype(np.float32), Q.Q8_0)
    w.add_tensor("t.q8_0", q8, raw_dtype=Q.Q8_0)
    q41 = gguf.quants.quantize(rng.standard_normal((6, 96)).astype(np.float32), Q.Q4_1)
    w.add_tensor("t.q4_1", q41, raw_dtype=Q.Q4_1)
    q41b = gguf.quants.quantize(rng.standard_normal((1, 32)).astype(np.float32), Q.Q4_1)
    w.add_tensor("t.q4_1_one_block", q41b, raw_dtype=Q.Q4_1)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def same_value(type_name, ours, theirs):
    if type_name == "FLOAT32":
        return type(ours) in (int, float) and np.float32(ours) == np.float32(theirs)
    if type_name == "FLOAT64":
        return type(ours) in (int, float) and float(ours) == theirs
    if type_name == "BOOL":
        return type(ours) is bool and ours == theirs
    if type_name == "STRING":
        return type(ours) is str and ours == theirs
    return type(ours) is int and ours == theirs


def compare(path):
    where = os.path.basename(path)
    run = subprocess.run([rebox, "inspect", path, "--json"], capture_output=True, text=True)
    if run.returncode != 0:
        fail(f"{where}: rebox inspect exited {run.returncode}: {run.stderr.strip()[-300:]}")
        return
    ours = json.loads(run.stdout)
    r = gguf.GGUFReader(path)
    fields = [f for f in r.fields.values() if not f.name.startswith("GGUF.")]
    header = {
        "format": "gguf", "version": 3, "alignment": r.alignment, "data_offset": r.data_offset,
        "file_size": os.path.getsize(path), "kv_count": len(fields), "tensor_count": len(r.tensors),
    }
    for k, v in header.items():
        if ours.get(k) != v:
            fail(f"{where}: {k}: rebox {ours.get(k)!r} gguf-py {v!r}")
    if [e["key"] for e in ours["kv"]] != [f.name for f in fields]:
        fail(f"{where}: KV keys/order: rebox {[e['key'] for e in ours['kv']]} gguf-py {[f.name for f in fields]}")
    for e, f in zip(ours["kv"], fields):
        if e["type"] != f.types[0].name:
            fail(f"{where}: KV {f.name}: type rebox {e['type']} gguf-py {f.types[0].name}")
            continue
        theirs = f.contents()
        if f.types[0] == T.ARRAY:
            elem = f.types[1].name
            if e.get("elem_type") != elem or e.get("length") != len(theirs):
                fail(f"{where}: KV {f.name}: array rebox {e.get('elem_type')}[{e.get('length')}] gguf-py {elem}[{len(theirs)}]")
            elif len(e["value"]) != len(theirs) or not all(same_value(elem, a, b) for a, b in zip(e["value"], theirs)):
                fail(f"{where}: KV {f.name}: values rebox {e['value']!r} gguf-py {theirs!r}")
        elif not same_value(e["type"], e["value"], theirs):
            fail(f"{where}: KV {f.name}: value rebox {e['value']!r} gguf-py {theirs!r}")
    if len(ours["tensors"]) != len(r.tensors):
        fail(f"{where}: tensor list length rebox {len(ours['tensors'])} gguf-py {len(r.tensors)}")
    for mine, t in zip(ours["tensors"], r.tensors):
        expect = {
            "name": t.name, "type": t.tensor_type.name, "type_id": int(t.tensor_type),
            "ne": [int(x) for x in t.shape], "offset": int(t.data_offset) - r.data_offset, "nbytes": int(t.n_bytes),
        }
        for k, v in expect.items():
            if mine.get(k) != v:
                fail(f"{where}: tensor {t.name}: {k}: rebox {mine.get(k)!r} gguf-py {v!r}")
    types = sorted({t.tensor_type.name for t in r.tensors})
    print(f"  {where}: alignment {r.alignment}, {len(fields)} KVs, {len(r.tensors)} tensors ({', '.join(types)}) compared")


os.makedirs(work, exist_ok=True)
plain = os.path.join(work, "ggufpy_written.gguf")
aligned = os.path.join(work, "ggufpy_written_align64.gguf")
write_file(plain)
write_file(aligned, alignment=64)
for path in (plain, aligned):
    compare(path)
if problems:
    print("FAIL: rebox inspect disagrees with gguf-py on gguf-py-written files:")
    for p in problems[:40]:
        print("  " + p)
    sys.exit(1)
print("ok: rebox inspect reads gguf-py-written files exactly as gguf-py's GGUFReader does")
