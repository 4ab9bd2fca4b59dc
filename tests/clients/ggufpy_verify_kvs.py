"""One row per KV: `rebox verify` must catch every edit of a KV that changes the model.

Reads a GGUF rebox wrote with llama.cpp's GGUFReader and, for each row of the table, writes a copy
with llama.cpp's GGUFWriter (not rebox's writer) in which one KV is changed, deleted or added; the
tensors are copied byte for byte. Then runs `rebox verify MODEL_DIR COPY` and checks:
  - every KV rebox wrote (but the model-card keys and rebox.*), changed and deleted: exit 3, and a
    PROBLEM line names the key;
  - a token and a score (one ulp) in the middle of the vocabulary, the last token's type, the
    unknown / separator / padding ids and add_space_prefix, where the file has them;
  - the issue's own edits (rope.freq_base, layer_norm_rms_epsilon, general.file_type,
    tokenizer.ggml.pre = "default", merges deleted, add_eos_token false, add_bos_token true);
  - a key rebox never writes in a namespace llama.cpp reads ({arch}.attention.sliding_window,
    tokenizer.ggml.cls_token_id): exit 3 naming it;
  - the unmodified copy, general.name changed, and an added custom key: exit 0, with the custom
    key on an UNCHECKED line.

Usage: ggufpy_verify_kvs.py REBOX MODEL_DIR GGUF WORK_DIR LABEL     (exit 1 on any failed row)
"""
import os
import subprocess
import sys

import numpy as np
import gguf
from gguf import GGUFReader, GGUFValueType, GGUFWriter

# Model-card metadata (the general.* keys llama.cpp's converter writes from README.md, the directory
# name, generation_config.json: gguf-py Metadata.set_gguf_meta_model plus general.type) describes
# the model and changes nothing llama.cpp computes: verify lists it as unchecked, as general.name.
UNCHECKED_PREFIXES = ("general.name", "general.type", "general.author", "general.version",
                      "general.organization", "general.finetune", "general.basename",
                      "general.description", "general.quantized_by", "general.size_label",
                      "general.license", "general.url", "general.doi", "general.uuid",
                      "general.repo_url", "general.source.", "general.base_model.",
                      "general.dataset.", "general.tags", "general.languages",
                      "general.sampling.", "rebox.")


def read_kvs(reader):
    """{key: (value, type, sub_type)} in file order, GGUF.* pseudo-fields left out."""
    kvs = {}
    for name, field in reader.fields.items():
        if name.startswith("GGUF."):
            continue
        main = field.types[0]
        sub = field.types[-1] if main == GGUFValueType.ARRAY else None
        value = field.contents()
        kvs[name] = (value, main, sub)
    return kvs


def write_copy(reader, kvs, path):
    """Writes kvs and every tensor of `reader` (bytes unchanged) with gguf-py's writer."""
    arch = kvs["general.architecture"][0] if "general.architecture" in kvs else "llama"
    writer = GGUFWriter(path, arch, use_temp_file=False)
    if "general.architecture" not in kvs:
        writer.remove_key("general.architecture")
    for key, (value, vtype, sub) in kvs.items():
        if key in ("general.architecture", "general.alignment"):
            continue
        if vtype == GGUFValueType.ARRAY and len(value) == 0:
            continue  # gguf-py writes no empty array (a float source's rebox.quant.* lists)
        writer.add_key_value(key, value, vtype, sub_type=sub)
    if "general.alignment" in kvs:
        writer.add_custom_alignment(int(kvs["general.alignment"][0]))
    for t in reader.tensors:
        ne = [int(n) for n in t.shape]
        block, type_size = gguf.GGML_QUANT_SIZES[t.tensor_type]
        byte_shape = list(reversed(ne))
        byte_shape[-1] = ne[0] // block * type_size
        data = np.asarray(t.data).view(np.uint8).reshape(byte_shape)
        writer.add_tensor(t.name, data, raw_dtype=t.tensor_type)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def changed(key, value, vtype, sub):
    """A different value of the same type, or None when the table has no edit for it."""
    if vtype == GGUFValueType.UINT32:
        return value + 1
    if vtype == GGUFValueType.FLOAT32:
        return value * 2.0 if value != 0 else 1.0
    if vtype == GGUFValueType.BOOL:
        return not value
    if vtype == GGUFValueType.STRING:
        if key == "tokenizer.ggml.pre":
            return "default" if value != "default" else "qwen2"
        if key == "tokenizer.ggml.model":
            return "llama" if value != "llama" else "gpt2"
        return value + "x"
    if vtype == GGUFValueType.ARRAY and len(value) >= 2:
        edited = list(value)
        if sub == GGUFValueType.STRING:
            edited[0], edited[1] = edited[1], edited[0]  # two tokens / merges swap places
            if edited == list(value):
                edited[0] = edited[0] + "x"
        elif sub == GGUFValueType.FLOAT32:
            edited[1] = edited[1] - 1.0
        elif sub == GGUFValueType.BOOL:  # a per-layer pattern: one layer flipped
            edited[1] = not edited[1]
        else:
            edited[1] = edited[1] + 1 if edited[1] != 1 else 3
        return edited
    return None


def run_verify(rebox, model_dir, path):
    proc = subprocess.run([rebox, "verify", model_dir, path], capture_output=True, text=True)
    return proc.returncode, proc.stdout + proc.stderr


def main():
    rebox, model_dir, gguf_path, work, label = sys.argv[1:6]
    reader = GGUFReader(gguf_path)
    original = read_kvs(reader)
    arch = original["general.architecture"][0]
    rows = []  # (description, kvs, expected exit, key that must be named, line kind)

    def row(what, kvs, code, key, kind="PROBLEM"):
        rows.append((what, kvs, code, key, kind))

    row("unmodified copy", dict(original), 0, None)
    for key, (value, vtype, sub) in original.items():
        unchecked = key.startswith(UNCHECKED_PREFIXES)
        new_value = changed(key, value, vtype, sub)
        if new_value is not None:
            kvs = dict(original)
            kvs[key] = (new_value, vtype, sub)
            row(f"{key} changed", kvs, 0 if unchecked else 3, key, "UNCHECKED" if unchecked else "PROBLEM")
        kvs = {k: v for k, v in original.items() if k != key}
        row(f"{key} deleted", kvs, 0 if unchecked else 3, None if unchecked else key)

    def edit(what, key, value, vtype, sub=None):
        kvs = dict(original)
        kvs[key] = (value, vtype, sub)
        row(what, kvs, 3, key)

    # The first bullet, spelled out (the generic rows above make the same edits or close ones).
    # (gemma writes no rope.freq_base: llama.cpp's default 10000 stands, so adding one is the edit)
    edit("rope.freq_base halved (or added)", f"{arch}.rope.freq_base",
         original.get(f"{arch}.rope.freq_base", (1e6,))[0] / 2, GGUFValueType.FLOAT32)
    for eps in ("layer_norm_rms_epsilon", "layer_norm_epsilon"):  # bert has the second
        if f"{arch}.attention.{eps}" in original:
            edit(f"{eps} x10", f"{arch}.attention.{eps}",
                 original[f"{arch}.attention.{eps}"][0] * 10, GGUFValueType.FLOAT32)
    edit("general.file_type 0 (ALL_F32)", "general.file_type",
         0 if original["general.file_type"][0] != 0 else 1, GGUFValueType.UINT32)
    if original.get("tokenizer.ggml.pre", ("default",))[0] != "default":
        edit("tokenizer.ggml.pre = default", "tokenizer.ggml.pre", "default", GGUFValueType.STRING)
    if "tokenizer.ggml.merges" in original:
        row("tokenizer.ggml.merges deleted",
            {k: v for k, v in original.items() if k != "tokenizer.ggml.merges"}, 3,
            "tokenizer.ggml.merges")
    if original["tokenizer.ggml.add_eos_token"][0]:
        edit("add_eos_token false", "tokenizer.ggml.add_eos_token", False, GGUFValueType.BOOL)
    if not original["tokenizer.ggml.add_bos_token"][0]:
        edit("add_bos_token true", "tokenizer.ggml.add_bos_token", True, GGUFValueType.BOOL)
    # The vocabulary, edited in its middle rather than at its start (SentencePiece and WordPiece
    # vocabularies are derived by verify from tokenizer.model / tokenizer.json itself).
    tokens = original["tokenizer.ggml.tokens"][0]
    middle = len(tokens) // 2
    edited = list(tokens)
    edited[middle] = edited[middle] + "x"
    edit(f"token {middle} renamed", "tokenizer.ggml.tokens", edited, GGUFValueType.ARRAY,
         GGUFValueType.STRING)
    if "tokenizer.ggml.scores" in original:
        scores = list(original["tokenizer.ggml.scores"][0])
        scores[middle] = float(np.nextafter(np.float32(scores[middle]), np.float32(np.inf)))
        edit(f"score {middle} one ulp up", "tokenizer.ggml.scores", scores, GGUFValueType.ARRAY,
             GGUFValueType.FLOAT32)
    types = list(original["tokenizer.ggml.token_type"][0])
    last = len(types) - 1
    types[last] = 1 if types[last] != 1 else 4  # NORMAL, or USER_DEFINED for a NORMAL one
    edit(f"token_type {last} changed", "tokenizer.ggml.token_type", types, GGUFValueType.ARRAY,
         GGUFValueType.INT32)
    for key in ("tokenizer.ggml.unknown_token_id", "tokenizer.ggml.seperator_token_id",
                "tokenizer.ggml.padding_token_id"):
        if key in original:
            edit(f"{key} moved to {middle}", key, middle, GGUFValueType.UINT32)
    if "tokenizer.ggml.add_space_prefix" in original:
        edit("add_space_prefix flipped", "tokenizer.ggml.add_space_prefix",
             not original["tokenizer.ggml.add_space_prefix"][0], GGUFValueType.BOOL)
    # Keys rebox does not write for this source, in namespaces llama.cpp reads.
    if f"{arch}.attention.sliding_window" not in original:
        edit("sliding_window added", f"{arch}.attention.sliding_window", 4, GGUFValueType.UINT32)
    edit("cls_token_id added", "tokenizer.ggml.cls_token_id", 0, GGUFValueType.UINT32)
    # A key of nobody's namespace: reported, not failed.
    kvs = dict(original)
    kvs["custom.note"] = ("hello", GGUFValueType.STRING, None)
    row("custom.note added", kvs, 0, "custom.note", "UNCHECKED")

    failures = []
    path = os.path.join(work, f"{label}-row.gguf")
    for what, kvs, code, key, kind in rows:
        write_copy(reader, kvs, path)
        got, output = run_verify(rebox, model_dir, path)
        named = key is None or any(
            line.startswith(kind + " ") and key in line for line in output.splitlines())
        problems = [line for line in output.splitlines() if line.startswith("PROBLEM")]
        if got != code or not named or (code == 0 and problems):
            failures.append(f"{label}: {what}: exit {got} (want {code}), {kind} line naming "
                            f"{key}: {'yes' if named else 'no'}\n    " +
                            "\n    ".join(output.splitlines()[:6]))
    os.remove(path)
    for failure in failures:
        print("FAIL " + failure)
    if failures:
        sys.exit(1)
    print(f"ok: {label}: {len(rows)} rows ({len(original)} KVs changed and deleted, the issue's "
          f"edits, keys added): rebox verify exits as expected and names each key")


main()
