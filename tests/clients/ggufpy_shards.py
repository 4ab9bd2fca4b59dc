"""gguf-py's GGUFReader opens every shard of a split set: split keys typed as llama.cpp reads them,
all KVs in the first shard only, tensor names unique across shards, total = split.tensors.count.
Usage: ggufpy_shards.py FIRST-00001-of-0000N.gguf N"""
import re
import sys

from gguf import GGUFReader, GGUFValueType

first, count = sys.argv[1], int(sys.argv[2])
prefix = re.sub(r"-00001-of-\d{5}\.gguf$", "", first)
names, problems = set(), []
for i in range(count):
    path = f"{prefix}-{i + 1:05d}-of-{count:05d}.gguf"
    reader = GGUFReader(path)
    for key, vtype, value in (("split.no", GGUFValueType.UINT16, i), ("split.count", GGUFValueType.UINT16, count)):
        field = reader.get_field(key)
        if field is None or field.types != [vtype] or field.contents() != value:
            problems.append(f"{path}: {key} = {field.contents() if field else None} (expected {vtype.name} {value})")
    total = reader.get_field("split.tensors.count")
    if total is None or total.types != [GGUFValueType.INT32]:
        problems.append(f"{path}: split.tensors.count missing or not INT32")
    if (i == 0) != (reader.get_field("general.architecture") is not None):
        problems.append(f"{path}: general.architecture only belongs in the first shard")
    for tensor in reader.tensors:
        if tensor.name in names:
            problems.append(f"{path}: tensor {tensor.name} appears in two shards")
        names.add(tensor.name)
if total is not None and total.contents() != len(names):
    problems.append(f"split.tensors.count {total.contents()} but the shards hold {len(names)} tensors")
print(f"  gguf-py: {count} shards open, {len(names)} tensors")
if problems:
    print("FAIL:\n  " + "\n  ".join(problems))
    sys.exit(1)
