"""The files `rebox check` is tested on, written with llama.cpp's own Python writer (GGUFWriter),
not rebox's: each a copy of a rebox-converted model (KVs and tensor bytes read with GGUFReader)
with one change. Clean copies llama.cpp loads (another alignment, the KVs in reverse order, a
split set gguf-py shards itself) and one broken copy per rule (a known key of the wrong type, a
missing required key, a tensor of the wrong shape, deleted merges, a general.name that
triggers llama.cpp's Phi-3 rule on a vocabulary without </s>, a split set whose first
shard's split.count is wrong (3 or 1 for 2 shards), a set without its last shard, no add_bos_token, a truncated file).
From an NVFP4 model: its clean copy, and the per-tensor `.scale` factors llama.cpp's loader
refuses (one of shape [2], one beside a weight the file lacks, an `output.scale` beside a
non-NVFP4 output). Prints one line per case:
"NAME FIRST_FILE", the list test_check.sh runs rebox check and llama.cpp on.

Usage: ggufpy_check_cases.py MODEL.gguf WORK_DIR SMALL_VOCAB_MODEL.gguf (a vocabulary without </s>,
       with an untied BF16/F16 output) NVFP4_MODEL.gguf
"""
import os
import sys
from pathlib import Path

import numpy as np
import gguf
from gguf import GGUFReader, GGUFValueType as T, GGUFWriter

source, work, small_vocab, nvfp4 = sys.argv[1], Path(sys.argv[2]), sys.argv[3], sys.argv[4]
reader = GGUFReader(source)


def read_kvs(r):
    """[(key, value, type, sub_type)] in file order, without gguf-py's GGUF.* pseudo-fields."""
    kvs = []
    for name, field in r.fields.items():
        if name.startswith("GGUF."):
            continue
        main = field.types[0]
        kvs.append((name, field.contents(), main, field.types[-1] if main == T.ARRAY else None))
    return kvs


def tensor_bytes(t):
    ne = [int(n) for n in t.shape]
    block, type_size = gguf.GGML_QUANT_SIZES[t.tensor_type]
    byte_shape = list(reversed(ne))
    byte_shape[-1] = ne[0] // block * type_size
    return np.asarray(t.data).view(np.uint8).reshape(byte_shape)


def write(path, kvs, r=reader, alignment=None, split_max_tensors=0, replace=None, extra=None):
    """Writes kvs and r's tensors (bytes unchanged unless `replace` maps a name to new F32 data),
    then `extra`'s (name → F32 data) after them."""
    arch = next(v for k, v, _, _ in kvs if k == "general.architecture")
    w = GGUFWriter(path, arch, use_temp_file=False, split_max_tensors=split_max_tensors)
    for key, value, vtype, sub in kvs:
        if key not in ("general.architecture", "general.alignment"):
            w.add_key_value(key, value, vtype, sub_type=sub)
    if alignment:
        w.add_custom_alignment(alignment)
    for t in r.tensors:
        if replace and t.name in replace:
            w.add_tensor(t.name, replace[t.name])
        else:
            w.add_tensor(t.name, tensor_bytes(t), raw_dtype=t.tensor_type)
    for name, data in (extra or {}).items():
        w.add_tensor(name, data)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def without(kvs, key):
    assert any(k == key for k, *_ in kvs), key
    return [kv for kv in kvs if kv[0] != key]


def retyped(kvs, key, vtype):
    assert any(k == key for k, *_ in kvs), key
    return [(k, v, vtype, s) if k == key else (k, v, t, s) for k, v, t, s in kvs]


kvs = read_kvs(reader)
arch = next(v for k, v, _, _ in kvs if k == "general.architecture")
cases = []


def case(name, **kw):
    path = work / f"{name}.gguf"
    write(path, kw.pop("kvs", kvs), **kw)
    cases.append((name, path))


case("clean_align64", alignment=64)
case("clean_reordered", kvs=[kvs[0]] + list(reversed(kvs[1:])))
write(work / "clean_shards.gguf", kvs, split_max_tensors=8)
shards = sorted(work.glob("clean_shards-*-of-*.gguf"))
assert len(shards) > 1, shards
cases.append(("clean_shards", shards[0]))

case("bad_type", kvs=retyped(kvs, f"{arch}.block_count", T.INT32))
case("bad_missing_key", kvs=without(kvs, f"{arch}.context_length"))
norm = next(t for t in reader.tensors if t.name == "blk.0.attn_norm.weight")
case("bad_shape", replace={norm.name: np.ones(2 * int(norm.shape[0]), dtype=np.float32)})
case("bad_no_merges", kvs=without(kvs, "tokenizer.ggml.merges"))
# The Phi-3 name rule on a vocabulary without </s> (Qwen3's byte-level vocabulary has "</s>" as text).
small = GGUFReader(small_vocab)
case("bad_phi3_name", r=small,
     kvs=[(k, "Phi-3 tiny" if k == "general.name" else v, t, s) for k, v, t, s in read_kvs(small)])
case("ollama_no_bos", kvs=without(kvs, "tokenizer.ggml.add_bos_token"))

# A split set whose first shard says 3 shards where 2 exist (shard 1 written again by gguf-py).
split_dir = work / "bad_split_count"
split_dir.mkdir()
write(split_dir / "model.gguf", kvs, split_max_tensors=len(reader.tensors) // 2 + 1)
parts = sorted(split_dir.glob("model-*-of-*.gguf"))
assert len(parts) == 2, parts
first = GGUFReader(parts[0])
first_kvs = [(k, 3 if k == "split.count" else v, t, s) for k, v, t, s in read_kvs(first)]
write(split_dir / "rewritten.gguf", first_kvs, r=first)
os.replace(split_dir / "rewritten.gguf", parts[0])
cases.append(("bad_split_count", parts[0]))

# The same with split.count 1 in shard 1: llama.cpp loads it alone and misses shard 2's tensors.
one_dir = work / "bad_split_count_one"
one_dir.mkdir()
one_kvs = [(k, 1 if k == "split.count" else v, t, s) for k, v, t, s in read_kvs(first)]
write(one_dir / parts[0].name, one_kvs, r=first)
os.link(parts[1], one_dir / parts[1].name)
cases.append(("bad_split_count_one", one_dir / parts[0].name))

# gguf-py's own 3 shards without the third.
gap_dir = work / "bad_missing_shard"
gap_dir.mkdir()
for shard in shards[:-1]:
    os.link(shard, gap_dir / shard.name)
cases.append(("bad_missing_shard", gap_dir / shards[0].name))

# NVFP4: the factors llama_model::load_tensors' generic pass creates ({1} beside a weight it loads;
# output.scale only beside an NVFP4 output), and three it refuses.
nv = GGUFReader(nvfp4)
nv_kvs = read_kvs(nv)
assert any(t.tensor_type == gguf.GGMLQuantizationType.NVFP4 for t in nv.tensors), nvfp4
case("clean_nvfp4", r=nv, kvs=nv_kvs)
assert any(t.name == "blk.0.attn_q.scale" for t in nv.tensors)
assert not any(t.name.startswith("blk.0.attn_gate") for t in nv.tensors)
one = np.ones(1, dtype=np.float32)
case("bad_scale_shape", r=nv, kvs=nv_kvs, replace={"blk.0.attn_q.scale": np.ones(2, dtype=np.float32)})
case("bad_scale_orphan", r=nv, kvs=nv_kvs, extra={"blk.0.attn_gate.scale": one})
small_output = next(t for t in small.tensors if t.name == "output.weight")
assert small_output.tensor_type != gguf.GGMLQuantizationType.NVFP4
case("bad_output_scale", r=small, kvs=read_kvs(small), extra={"output.scale": one})

data = Path(source).read_bytes()
(work / "bad_truncated.gguf").write_bytes(data[: len(data) - 4096])
cases.append(("bad_truncated", work / "bad_truncated.gguf"))

for name, path in cases:
    print(name, path)
