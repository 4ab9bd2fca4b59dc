"""The general.* KVs llama.cpp's converter writes for a model directory, compared with a rebox GGUF.

The reference is the converter's own code from the llama.cpp source bundled in node-llama-cpp:
ModelBase.prepare_metadata and ModelBase.set_type (conversion/base.py, extracted with `ast` and run as
written, since the module itself imports torch and transformers) on a gguf-py GGUFWriter holding the
tensors of the rebox file (names and shapes: get_total_parameter_count counts them), with gguf-py's
Metadata.load reading the directory's README.md, config.json, generation_config.json and the override
file. Every general.* KV (key, GGUF type, value) must be equal both ways; general.architecture,
file_type and quantization_version are left to the other tests.

Usage: python3 model_card_reference.py MODEL_DIR FILE.gguf [--metadata FILE.json] [--name NAME]
Prints the compared keys; exits 1 naming every difference.
"""
import argparse
import ast
import logging
import os
import struct
import sys
import types
from pathlib import Path

import numpy as np
import gguf
from gguf import GGUFReader, GGUFValueType

NOT_COMPARED = ("general.architecture", "general.file_type", "general.quantization_version",
                "general.alignment")


def converter_method(llama_src, name):
    path = os.path.join(llama_src, "conversion", "base.py")
    tree = ast.parse(open(path, encoding="utf-8").read())
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "ModelBase":
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == name:
                    item.decorator_list = []
                    for arg in item.args.args + item.args.kwonlyargs:
                        arg.annotation = None
                    item.returns = None
                    namespace = {"gguf": gguf, "logger": logging.getLogger("reference")}
                    exec(compile(ast.Module(body=[item], type_ignores=[]), path, "exec"), namespace)
                    return namespace[name]
    raise LookupError(f"{path}: ModelBase.{name} not found")


def reference_kvs(llama_src, model_dir, reader, metadata_path, name):
    arch = bytes(reader.get_field("general.architecture").parts[-1]).decode()
    writer = gguf.GGUFWriter(path=None, arch=arch)
    for t in reader.tensors:
        shape = [int(n) for n in reversed(list(t.shape))]  # numpy order, as the converter adds them
        writer.add_tensor_info(t.name, shape, np.float32, int(t.n_bytes), raw_dtype=t.tensor_type)
    model = types.SimpleNamespace(
        gguf_writer=writer, metadata_override=Path(metadata_path) if metadata_path else None,
        dir_model_card=Path(model_dir), dir_model=Path(model_dir), model_name=name,
        remote_hf_model_id=None, ftype=gguf.LlamaFileType.MOSTLY_Q8_0, _is_nvfp4=False,
        _is_mxfp4=False)
    set_type = converter_method(llama_src, "set_type")
    model.set_type = lambda: set_type(model)
    model.set_gguf_parameters = lambda: None
    converter_method(llama_src, "prepare_metadata")(model, vocab_only=False)
    out = {}
    for key, value in writer.kv_data[0].items():
        if key.startswith("general.") and key not in NOT_COMPARED:
            out[key] = normalize_written(value)
    return out


def normalize_written(value):
    """(type name, value) of a GGUFValue as gguf-py packs it (FLOAT32 rounded to binary32)."""
    if value.type == GGUFValueType.ARRAY:
        items = list(value.value)
        elem = GGUFValueType.get_type(items[0])
        return (f"ARRAY[{elem.name}]", [normalize_scalar(elem, v) for v in items])
    return (value.type.name, normalize_scalar(value.type, value.value))


def normalize_scalar(vtype, v):
    if vtype == GGUFValueType.FLOAT32:
        return struct.unpack("<f", struct.pack("<f", v))[0]
    if vtype == GGUFValueType.STRING:
        return v.encode("utf-8") if isinstance(v, str) else bytes(v)
    return int(v)


def rebox_kvs(reader):
    out = {}
    for key, field in reader.fields.items():
        if not key.startswith("general.") or key in NOT_COMPARED:
            continue
        vtype = field.types[0]
        if vtype == GGUFValueType.ARRAY:
            elem = field.types[1]
            out[key] = (f"ARRAY[{elem.name}]", [read_scalar(elem, field.parts[i]) for i in field.data])
        else:
            out[key] = (vtype.name, read_scalar(vtype, field.parts[field.data[0]]))
    return out


def read_scalar(vtype, part):
    if vtype == GGUFValueType.STRING:
        return bytes(part)
    if vtype == GGUFValueType.FLOAT32:
        return float(part[0])
    return int(part[0])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model_dir")
    parser.add_argument("gguf_file")
    parser.add_argument("--metadata")
    parser.add_argument("--name")
    parser.add_argument("--expect", action="append", default=[],
                        help="KEY=VALUE a string KV must have (a check on the reference itself)")
    args = parser.parse_args()
    llama_src = os.environ["GGUFPY_SRC"]
    reader = GGUFReader(args.gguf_file)
    want = reference_kvs(llama_src, args.model_dir, reader, args.metadata, args.name)
    got = rebox_kvs(reader)
    problems = []
    for key in sorted(set(want) | set(got)):
        if key not in got:
            problems.append(f"{key}: converter writes {want[key]}, rebox does not")
        elif key not in want:
            problems.append(f"{key}: rebox writes {got[key]}, the converter does not")
        elif want[key] != got[key]:
            problems.append(f"{key}: converter {want[key]}, rebox {got[key]}")
    for expectation in args.expect:
        key, value = expectation.split("=", 1)
        if want.get(key, (None, None))[1] != value.encode():
            problems.append(f"{key}: the reference has {want.get(key)}, the test expects {value!r}")
    label = os.path.basename(os.path.normpath(args.model_dir))
    if problems:
        print(f"FAIL: {label}: " + "; ".join(problems))
        sys.exit(1)
    print(f"ok: {label}: {len(want)} general.* KVs equal to the converter's: " + ", ".join(sorted(want)))


main()
