# gguf-py (llama.cpp's GGUFReader) reads a `rebox meta`-edited GGUF: the expected general.name and
# tokenizer.chat_template, the file's alignment respected (data offset and every tensor offset a
# multiple of it), and every tensor's bytes equal to the original's.
# Usage: python3 ggufpy_meta.py ORIG.gguf EDITED.gguf EXPECTED_NAME TEMPLATE_FILE [ALIGNMENT]
import sys

import numpy as np
from gguf import GGUFReader


def field_str(reader, key):
    field = reader.get_field(key)
    if field is None:
        return None
    return bytes(field.parts[field.data[0]]).decode("utf-8")


def main():
    orig_path, edited_path, name, template_file = sys.argv[1:5]
    alignment = int(sys.argv[5]) if len(sys.argv) > 5 else 32
    template = open(template_file, encoding="utf-8").read()
    a, b = GGUFReader(orig_path), GGUFReader(edited_path)
    problems = []
    if field_str(b, "general.name") != name:
        problems.append(f"general.name = {field_str(b, 'general.name')!r}")
    if field_str(b, "tokenizer.chat_template") != template:
        problems.append("tokenizer.chat_template differs from the template file")
    if b.alignment != alignment:
        problems.append(f"alignment {b.alignment}, expected {alignment}")
    if b.data_offset % alignment:
        problems.append(f"data offset {b.data_offset} not a multiple of {alignment}")
    if len(a.tensors) != len(b.tensors):
        problems.append(f"tensor count {len(a.tensors)} vs {len(b.tensors)}")
    for ta, tb in zip(a.tensors, b.tensors):
        if ta.name != tb.name or ta.tensor_type != tb.tensor_type:
            problems.append(f"tensor {ta.name}: name/type changed")
        elif (tb.data_offset - b.data_offset) % alignment:
            problems.append(f"tensor {tb.name}: offset not aligned")
        elif not np.array_equal(np.asarray(ta.data).view(np.uint8), np.asarray(tb.data).view(np.uint8)):
            problems.append(f"tensor {ta.name}: bytes differ")
    if problems:
        print("FAIL: gguf-py: " + "; ".join(problems[:10]))
        sys.exit(1)
    print(f"ok: gguf-py reads the new name and template; {len(b.tensors)} tensors byte-identical, alignment {alignment}")


main()
