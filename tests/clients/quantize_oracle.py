"""rebox quantize against llama.cpp's own llama-quantize (built from the bundled source against the
prebuilt libllama v0.4.0).

Writes small GGUF models with gguf-py (llama untied/tied, qwen3, qwen2, an 8-expert and a
4-expert MoE, a model whose widths force fallbacks; F16, BF16 and F32 tensors; a Gemma 3 mmproj,
general.architecture clip), then for each model and each TYPE:
  * the recipe: `llama-quantize --dry-run` logs every tensor with the type it would get, in its
    own order; `rebox quantize --dry-run --json` must list the same tensors in the same order
    with the same types (every TYPE, with and without the override options);
  * the file: for the TYPEs in WRITE_TYPES, both tools write the file and `cmp` must find them
    identical byte for byte;
  * --keep-split on split inputs: every shard byte for byte.

Usage: quantize_oracle.py LLAMA_QUANTIZE REBOX WORK_DIR "WRITE_TYPES"   (exit 1 on a difference)
"""
import json
import os
import re
import struct
import subprocess
import sys

import numpy as np
import gguf

llama_quantize, rebox, work, write_types = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split()
rng = np.random.default_rng(20261201)
problems = []
ALL_TYPES = ("Q1_0 Q2_0 Q4_0 Q4_1 MXFP4_MOE Q5_0 Q5_1 IQ2_XXS IQ2_XS IQ2_S IQ2_M IQ1_S IQ1_M "
             "TQ1_0 TQ2_0 Q8_0 Q2_K Q2_K_S IQ3_XXS IQ3_S IQ3_M IQ3_XS Q3_K_S Q3_K_M Q3_K_L Q4_K_S "
             "Q4_K_M Q5_K_S Q5_K_M Q6_K IQ4_NL IQ4_XS F16 BF16 F32").split()
# ggml types llama-quantize refuses to write without an imatrix (tensor_requires_imatrix), but in
# token_embd / output.
IMATRIX_TYPES = {"IQ3_XXS", "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ1_M", "IQ1_S"}


def values(shape, dtype):
    # "bf16": F32 values, written as BF16 by write_model
    return (rng.standard_normal(shape) * 0.02).astype(np.float32 if dtype == "bf16" else dtype)


def write_model(path, arch, layers, embd, ff, n_head, n_kv_head, dtype, tied=False, experts=0,
                qk_norm=False, bias=False, vocab=512):
    w = gguf.GGUFWriter(path, arch)

    def add(name, array):
        if array.dtype == np.float32 and dtype == "bf16" and array.ndim > 1:
            bf16 = gguf.GGMLQuantizationType.BF16
            w.add_tensor(name, gguf.quants.quantize(array, bf16), raw_dtype=bf16)
        else:
            w.add_tensor(name, array)

    w.add_name("tiny " + arch)
    w.add_context_length(256)
    w.add_embedding_length(embd)
    w.add_block_count(layers)
    w.add_feed_forward_length(ff)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_kv_head)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_rope_dimension_count(embd // n_head)
    w.add_file_type(1)  # moved to the end (and rewritten) by both tools
    if experts:
        w.add_expert_count(experts)
        w.add_expert_used_count(2)
    head = embd // n_head
    kv = n_kv_head * head
    # Written in an order llama does not use, so that both tools must sort.
    for layer in reversed(range(layers)):
        p = f"blk.{layer}."
        add(p + "attn_norm.weight", values(embd, np.float32))
        add(p + "attn_q.weight", values((embd, embd), dtype))
        add(p + "attn_k.weight", values((kv, embd), dtype))
        add(p + "attn_v.weight", values((kv, embd), dtype))
        add(p + "attn_output.weight", values((embd, embd), dtype))
        if qk_norm:
            add(p + "attn_q_norm.weight", values(head, np.float32))
            add(p + "attn_k_norm.weight", values(head, np.float32))
        if bias:
            add(p + "attn_q.bias", values(embd, np.float32))
            add(p + "attn_k.bias", values(kv, np.float32))
            add(p + "attn_v.bias", values(kv, np.float32))
        add(p + "ffn_norm.weight", values(embd, np.float32))
        if experts:
            add(p + "ffn_gate_inp.weight", values((experts, embd), np.float32))
            add(p + "ffn_gate_exps.weight", values((experts, ff, embd), dtype))
            add(p + "ffn_up_exps.weight", values((experts, ff, embd), dtype))
            add(p + "ffn_down_exps.weight", values((experts, embd, ff), dtype))
        else:
            add(p + "ffn_gate.weight", values((ff, embd), dtype))
            add(p + "ffn_up.weight", values((ff, embd), dtype))
            add(p + "ffn_down.weight", values((embd, ff), dtype))
    add("token_embd.weight", values((vocab, embd), dtype))
    add("output_norm.weight", values(embd, np.float32))
    if not tied:
        add("output.weight", values((vocab, embd), dtype))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


MODELS = {
    "llama-f16": dict(arch="llama", layers=8, embd=256, ff=512, n_head=8, n_kv_head=2, dtype=np.float16),
    "llama-tied-f32": dict(arch="llama", layers=4, embd=256, ff=512, n_head=8, n_kv_head=8,
                           dtype=np.float32, tied=True),
    "qwen3-bf16": dict(arch="qwen3", layers=4, embd=256, ff=768, n_head=8, n_kv_head=4,
                       dtype="bf16", qk_norm=True),
    "qwen2-f16": dict(arch="qwen2", layers=4, embd=256, ff=512, n_head=4, n_kv_head=2,
                      dtype=np.float16, bias=True),
    "moe8-f16": dict(arch="llama", layers=2, embd=256, ff=256, n_head=8, n_kv_head=2,
                     dtype=np.float16, experts=8),
    "moe4-f32": dict(arch="llama", layers=3, embd=256, ff=256, n_head=8, n_kv_head=4,
                     dtype=np.float32, experts=4),
    "widths-f16": dict(arch="llama", layers=3, embd=288, ff=320, n_head=9, n_kv_head=3,
                       dtype=np.float16),
}

# Files of every TYPE are compared on llama-f16; the other models and the option cases compare
# these types' files (the recipes of every TYPE are compared on every model and option case).
FILE_TYPES_EVERY_MODEL = {"Q4_K_M", "Q3_K_M", "Q5_K_S", "IQ4_XS", "Q4_0", "BF16", "MXFP4_MOE"}

# The types whose recipes are also compared under every option case.
OPTION_TYPES = {"Q4_K_M", "Q3_K_M", "Q2_K", "Q4_0", "Q8_0", "IQ4_NL", "F16"}

OPTION_CASES = [
    [],
    ["--pure"],
    ["--leave-output-tensor"],
    ["--output-tensor-type", "q8_0"],
    ["--token-embedding-type", "Q4_0"],
    ["--tensor-type", "ATTN_V=q8_0", "--tensor-type", r"blk\.[01]\.ffn_down=q5_K"],
    ["--tensor-type", "ffn_up=nvfp4", "--tensor-type", "attn_q=tq2_0"],
]


LINE = re.compile(r"\[\s*\d+/\s*\d+\]\s+(\S+)\s+- \[[^\]]*\], type =\s+(\S+), size =[^\n(]*(?:\((\S+)\))?")


def llama_dry_run(model, qtype, options):
    run = subprocess.run([llama_quantize, "--dry-run", *options, model, qtype],
                         capture_output=True, text=True)
    if run.returncode != 0:
        return None, run.stderr[-600:]
    log = run.stdout + run.stderr
    return [(m.group(1), (m.group(3) or m.group(2)).upper()) for m in LINE.finditer(log)], None


def rebox_dry_run(model, qtype, options, report):
    run = subprocess.run([rebox, "quantize", "--dry-run", "-q", "--json", report, *options, model,
                          os.path.join(work, "unused.gguf"), qtype], capture_output=True, text=True)
    if run.returncode != 0:
        return None, run.stderr.strip()
    with open(report) as f:
        return [(t["name"], t["type"].upper()) for t in json.load(f)["tensors"]], None


def refuse_both(model, qtype, tag):
    # A type that needs an imatrix, given none: both tools refuse and write nothing.
    ours = os.path.join(work, tag + ".rebox.gguf")
    theirs = os.path.join(work, tag + ".llama.gguf")
    llama = subprocess.run([llama_quantize, model, theirs, qtype], capture_output=True, text=True)
    run = subprocess.run([rebox, "quantize", "-q", model, ours, qtype], capture_output=True,
                         text=True)
    if llama.returncode == 0 or run.returncode != 1 or "importance matrix" not in run.stderr:
        problems.append(f"{tag}: expected both to refuse (llama rc {llama.returncode}, rebox rc "
                        f"{run.returncode}: {run.stderr.strip()})")
    if os.path.exists(ours) or len(run.stderr.strip().splitlines()) != 1:
        problems.append(f"{tag}: rebox left {ours} or did not say it in one line")


def write_both(model, qtype, options, tag):
    ours = os.path.join(work, tag + ".rebox.gguf")
    theirs = os.path.join(work, tag + ".llama.gguf")
    run = subprocess.run([llama_quantize, *options, model, theirs, qtype], capture_output=True,
                         text=True)
    if run.returncode != 0:
        problems.append(f"{tag}: llama-quantize failed: {run.stderr[-400:]}")
        return
    run = subprocess.run([rebox, "quantize", "-q", "--force", "--threads", "2", *options, model,
                          ours, qtype], capture_output=True, text=True)
    if run.returncode != 0:
        problems.append(f"{tag}: rebox quantize failed: {run.stderr.strip()}")
        return
    if open(ours, "rb").read() != open(theirs, "rb").read():
        problems.append(f"{tag}: files differ (cmp {ours} {theirs})")
    else:
        os.remove(ours)
        os.remove(theirs)


def model_weights(spec):
    """(name, ne0, n_mat) of every blk weight an imatrix can cover."""
    embd, ff, layers, experts = spec["embd"], spec["ff"], spec["layers"], spec.get("experts", 0)
    out = []
    for layer in range(layers):
        p = f"blk.{layer}."
        for role in ("attn_q", "attn_k", "attn_v", "attn_output"):
            out.append((p + role + ".weight", embd, 1))
        if experts:
            out += [(p + "ffn_gate_exps.weight", embd, experts), (p + "ffn_up_exps.weight", embd, experts),
                    (p + "ffn_down_exps.weight", ff, experts)]
        else:
            out += [(p + "ffn_gate.weight", embd, 1), (p + "ffn_up.weight", embd, 1),
                    (p + "ffn_down.weight", ff, 1)]
    return out


def imatrix_entries(spec, partial):
    """name -> (sums [n_mat][ne0], counts [n_mat]) with the corner cases of real files."""
    entries = {}
    for name, ne0, n_mat in model_weights(spec):
        sums = (rng.random((n_mat, ne0)) * 4 + 0.05).astype(np.float32)
        counts = (rng.integers(16, 400, n_mat) + 0.4).astype(np.float32)  # lround
        entries[name] = [sums, counts]
    entries["blk.1.attn_k.weight"][1][:] = 0  # a zero count: weights 1.0
    if spec.get("experts"):
        entries["blk.0.ffn_up_exps.weight"][1][1] = 0  # one expert never routed
    if partial:
        del entries["blk.1.attn_q.weight"]  # "did not find weights"
        entries["blk.99.ffn_up.weight"] = [np.ones((1, 64), np.float32), np.ones(1, np.float32)]
    return entries


def write_gguf_imatrix(path, entries, metadata=True, dataset="wiki.train.raw"):
    w = gguf.GGUFWriter(path, "imatrix")
    w.add_type("imatrix")
    if metadata:
        w.add_array("imatrix.datasets", [dataset])
        w.add_uint32("imatrix.chunk_count", 7)
        w.add_uint32("imatrix.chunk_size", 512)
    for name in sorted(entries):
        sums, counts = entries[name]
        w.add_tensor(name + ".in_sum2", sums)
        w.add_tensor(name + ".counts", counts.reshape(-1, 1))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def write_legacy_imatrix(path, entries, dataset="legacy-set"):
    with open(path, "wb") as f:
        f.write(struct.pack("<i", len(entries)))
        for name in sorted(entries):
            sums, counts = entries[name]
            ncall = int(counts.max() // 100)  # 0 for the zero-count entry: sums kept as they are
            f.write(struct.pack("<i", len(name)) + name.encode())
            f.write(struct.pack("<ii", ncall, sums.size) + sums.astype("<f4").tobytes())
        f.write(struct.pack("<ii", 7, len(dataset)) + dataset.encode())


def refuse_both_with(model, qtype, options, tag, expected):
    ours = os.path.join(work, tag + ".rebox.gguf")
    theirs = os.path.join(work, tag + ".llama.gguf")
    llama = subprocess.run([llama_quantize, *options, model, theirs, qtype], capture_output=True,
                           text=True)
    run = subprocess.run([rebox, "quantize", "-q", *options, model, ours, qtype],
                         capture_output=True, text=True)
    if llama.returncode == 0 or run.returncode != 1 or expected not in run.stderr:
        problems.append(f"{tag}: expected both to refuse (llama rc {llama.returncode}, rebox rc "
                        f"{run.returncode}: {run.stderr.strip()})")
    if os.path.exists(ours) or len(run.stderr.strip().splitlines()) != 1:
        problems.append(f"{tag}: rebox left {ours} or did not say it in one line")


def imatrix_cases():
    """Files quantized with an imatrix (GGUF and legacy), compared byte for byte."""
    global checked_files
    long_dir = os.path.join(work, "imatrix-" + "x" * 100)  # the KV keeps 127 bytes of the path
    os.makedirs(long_dir, exist_ok=True)
    for model in ("llama-f16", "moe4-f32"):
        spec = MODELS[model]
        path = os.path.join(work, model + ".gguf")
        full = os.path.join(long_dir, model + "-full.imatrix.gguf")
        partial = os.path.join(long_dir, model + "-partial.imatrix.gguf")
        legacy = os.path.join(long_dir, model + ".imatrix.dat")
        write_gguf_imatrix(full, imatrix_entries(spec, False))
        write_gguf_imatrix(partial, imatrix_entries(spec, True))
        write_legacy_imatrix(legacy, imatrix_entries(spec, True))
        # The i-quant files: every IQ file type on both models but IQ1_S / IQ1_M, one each (each
        # llama-quantize run spends ~18 s building ggml's 2048-point IQ1 neighbour table).
        iq1 = ["IQ1_S"] if model == "llama-f16" else ["IQ1_M"]
        cases = [(full, ["Q2_K_S", "Q4_K_M", "IQ4_XS", "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ2_M",
                         "IQ3_XXS", "IQ3_XS", "IQ3_S", "IQ3_M", *iq1]),
                 (partial, ["Q4_0", "Q4_K_S"]), (legacy, ["Q4_K_M", "Q5_0"])]
        for imatrix, qtypes in cases:
            for qtype in qtypes:
                tag = f"{model}_{qtype}_imatrix_{os.path.basename(imatrix)}"
                write_both(path, qtype, ["--imatrix", imatrix], tag)
                checked_files += 1
        # Q2_K_S with an entry missing: both refuse.
        refuse_both_with(path, "Q2_K_S", ["--imatrix", partial], model + "_Q2_K_S_partial",
                         "no entry")
        refuse_both_with(path, "IQ2_XXS", ["--imatrix", partial], model + "_IQ2_XXS_partial",
                         "no entry")
    # Refusals: no metadata, wrong size, non-finite values.
    spec = MODELS["llama-f16"]
    path = os.path.join(work, "llama-f16.gguf")
    bad = os.path.join(work, "no-metadata.imatrix.gguf")
    write_gguf_imatrix(bad, imatrix_entries(spec, False), metadata=False)
    refuse_both_with(path, "Q4_K_M", ["--imatrix", bad], "no_metadata", "metadata")
    entries = imatrix_entries(spec, False)
    entries["blk.0.attn_q.weight"][0] = entries["blk.0.attn_q.weight"][0][:, :128]
    bad = os.path.join(work, "wrong-size.imatrix.gguf")
    write_gguf_imatrix(bad, entries)
    refuse_both_with(path, "Q4_K_M", ["--imatrix", bad], "wrong_size", "values")
    entries = imatrix_entries(spec, False)
    entries["blk.0.attn_q.weight"][0][0, 3] = np.inf
    bad = os.path.join(work, "inf.imatrix.gguf")
    write_gguf_imatrix(bad, entries)
    refuse_both_with(path, "Q4_K_M", ["--imatrix", bad], "non_finite", "not finite")


def write_mmproj(path):
    """An mmproj file as llama.cpp's converter writes one for Gemma 3 (Gemma3VisionModel):
    general.architecture clip, v.* / mm.* tensors, the patch embedding 4-D F16, the position
    embedding 2-D, norms and biases F32. llama-quantize takes it through its dummy LLM_ARCH_CLIP
    (no hparams: 0 layers, no experts) and never quantizes .position_embd / .patch_embd.
    ffn is 320 wide so that ffn_down's rows fall back from the K types."""
    embd, ff, layers, text = 256, 320, 3, 512
    w = gguf.GGUFWriter(path, "clip")
    w.add_type("mmproj")
    w.add_file_type(1)
    w.add_bool("clip.has_vision_encoder", True)
    w.add_string("clip.projector_type", "gemma3")
    for key, value in (("projection_dim", text), ("image_size", 64), ("patch_size", 16),
                       ("embedding_length", embd), ("feed_forward_length", ff),
                       ("block_count", layers), ("attention.head_count", 4)):
        w.add_uint32("clip.vision." + key, value)
    w.add_float32("clip.vision.attention.layer_norm_epsilon", 1e-6)
    w.add_array("clip.vision.image_mean", [0.5, 0.5, 0.5])
    w.add_array("clip.vision.image_std", [0.5, 0.5, 0.5])
    w.add_bool("clip.use_gelu", True)
    w.add_tensor("mm.input_projection.weight", values((embd, text), np.float16))
    w.add_tensor("mm.soft_emb_norm.weight", values(embd, np.float32))
    w.add_tensor("v.patch_embd.weight", values((embd, 3, 16, 16), np.float16))
    w.add_tensor("v.patch_embd.bias", values(embd, np.float32))
    w.add_tensor("v.position_embd.weight", values((16, embd), np.float16))
    for layer in range(layers):
        p = f"v.blk.{layer}."
        for name, shape in (("attn_q", (embd, embd)), ("attn_k", (embd, embd)),
                            ("attn_v", (embd, embd)), ("attn_out", (embd, embd)),
                            ("ffn_up", (ff, embd)), ("ffn_down", (embd, ff))):
            w.add_tensor(p + name + ".weight", values(shape, np.float16))
            w.add_tensor(p + name + ".bias", values(shape[0], np.float32))
        for name in ("ln1", "ln2"):
            w.add_tensor(p + name + ".weight", values(embd, np.float32))
            w.add_tensor(p + name + ".bias", values(embd, np.float32))
    w.add_tensor("v.post_ln.weight", values(embd, np.float32))
    w.add_tensor("v.post_ln.bias", values(embd, np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def compare_types(name, path, qtypes, file_types):
    """Recipes of every type in qtypes (with the option cases on llama-f16), then the files of
    file_types (and every type on llama-f16 without options) byte for byte."""
    global checked_recipes, checked_files
    for qtype in qtypes:
        option_cases = OPTION_CASES if name == "llama-f16" and qtype in OPTION_TYPES else [[]]
        for options in option_cases:
            tag = f"{name} {qtype} {' '.join(options)}".strip()
            theirs, error = llama_dry_run(path, qtype, options)
            ours, our_error = rebox_dry_run(path, qtype, options, os.path.join(work, "report.json"))
            if theirs is None and "no tensor type fallback" in error:  # error is set when theirs is None
                # Q1_0 (128-value blocks) on rows of 288 or 320: llama-quantize has no fallback
                # and stops; rebox must refuse too, naming the tensor llama-quantize names.
                tensor = re.search(r"warning: (\S+)\s+- ncols", error)
                if ours is not None or tensor is None or tensor.group(1) not in (our_error or ""):
                    problems.append(f"{tag}: llama-quantize refuses ({tensor and tensor.group(1)}),"
                                    f" rebox does not alike: {our_error}")
                checked_recipes += 1
                continue
            if theirs is None:
                problems.append(f"{tag}: llama-quantize --dry-run failed: {error}")
                continue
            error = our_error
            if ours is None:
                problems.append(f"{tag}: rebox --dry-run failed: {error}")
                continue
            if ours != theirs:
                diff = [f"{a} vs {b}" for a, b in zip(ours, theirs) if a != b][:4]
                problems.append(f"{tag}: recipe differs ({len(ours)} vs {len(theirs)} tensors): "
                                + "; ".join(diff))
            checked_recipes += 1
            # Files only where every type llama-quantize chose has its kernel in this build.
            needed = {t for _, t in theirs} - {"F32", "F16", "BF16"}
            needs_imatrix = any(
                (t in IMATRIX_TYPES or (qtype == "Q2_K_S" and t == "Q2_K"))
                and n not in ("token_embd.weight", "output.weight") for n, t in theirs)
            if needs_imatrix:
                refuse_both(path, qtype, tag.replace(" ", "_"))
            elif qtype in write_types and needed <= set(write_types) and (
                    qtype in file_types or (name == "llama-f16" and not options)):
                write_both(path, qtype, options, tag.replace(" ", "_").replace("\\", ""))
                checked_files += 1


checked_recipes = 0
checked_files = 0
for name, spec in MODELS.items():
    path = os.path.join(work, name + ".gguf")
    write_model(path, **spec)
    compare_types(name, path, ALL_TYPES, FILE_TYPES_EVERY_MODEL)
# An mmproj (general.architecture clip): every recipe, and files of the types people use.
mmproj = os.path.join(work, "mmproj-gemma3.gguf")
write_mmproj(mmproj)
# The types whose recipe reads n_gqa(): llama.cpp's n_head(0) aborts on a model without layers.
CLIP_ABORT_TYPES = {"Q2_K", "Q2_K_S", "IQ4_NL", "IQ4_XS", "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ2_M",
                    "IQ1_S", "IQ1_M", "IQ3_XXS", "IQ3_S", "IQ3_XS"}
compare_types("mmproj", mmproj, [t for t in ALL_TYPES if t not in CLIP_ABORT_TYPES],
              {"Q8_0", "Q4_K_M", "Q4_0", "Q5_K_M", "Q6_K", "F16"})
for qtype in sorted(CLIP_ABORT_TYPES):
    refuse_both_with(mmproj, qtype, [], "mmproj_" + qtype, "aborts on this type for an mmproj")


def rebox_refuses(args, expected, tag, output):
    run = subprocess.run([rebox, "quantize", "-q", *args], capture_output=True, text=True)
    lines = run.stderr.strip().splitlines()
    if run.returncode != 1 or len(lines) != 1 or expected not in run.stderr:
        problems.append(f"{tag}: expected one line with '{expected}' and exit 1, got rc "
                        f"{run.returncode}: {run.stderr.strip()}")
    if output and os.path.exists(output):
        problems.append(f"{tag}: {output} was left behind")


def requantize_and_refusal_cases():
    """--allow-requantize of a quantized file (byte for byte), keeping quantized tensors by
    default, and the refusals where llama-quantize aborts, asserts or overwrites."""
    global checked_files
    model = os.path.join(work, "llama-f16.gguf")
    q8 = os.path.join(work, "llama-f16.q8_0.gguf")
    subprocess.run([llama_quantize, model, q8, "Q8_0"], capture_output=True, check=True)
    write_both(q8, "Q4_K_M", ["--allow-requantize"], "requantize_Q8_0_to_Q4_K_M")
    checked_files += 1
    # Without the flag llama-quantize refuses the file; rebox keeps the Q8_0 tensors and says so.
    kept = os.path.join(work, "kept.gguf")
    report = os.path.join(work, "kept.json")
    run = subprocess.run([rebox, "quantize", "-q", "--json", report, q8, kept, "Q4_K_M"],
                         capture_output=True, text=True)
    if run.returncode != 0:
        problems.append(f"keep quantized: rebox failed: {run.stderr.strip()}")
    else:
        with open(report) as f:
            r = json.load(f)
        moved = [t for t in r["tensors"] if t["from"] == "Q8_0" and t["type"] != "Q8_0"]
        if moved or not any("kept as they are" in n for n in r["notes"]):
            problems.append(f"keep quantized: {len(moved)} Q8_0 tensors changed; notes {r['notes']}")
    # Split input (shard 1 of a set made by rebox split) and split output (then rebox merge): the
    # same bytes as llama-quantize of the whole file.
    theirs = os.path.join(work, "split.llama.gguf")
    subprocess.run([llama_quantize, model, theirs, "Q4_K_M"], capture_output=True, check=True)
    prefix = os.path.join(work, "shard")
    subprocess.run([rebox, "split", model, prefix, "--split-max-size", "2M"], check=True,
                   capture_output=True)
    from_shards = os.path.join(work, "from-shards.gguf")
    first = sorted(f for f in os.listdir(work) if f.startswith("shard-00001-of-"))[0]
    run = subprocess.run([rebox, "quantize", "-q", os.path.join(work, first), from_shards,
                          "Q4_K_M"], capture_output=True, text=True)
    if run.returncode != 0 or open(from_shards, "rb").read() != open(theirs, "rb").read():
        problems.append(f"split input: differs from llama-quantize ({run.stderr.strip()})")
    split_out = os.path.join(work, "split-out.gguf")
    run = subprocess.run([rebox, "quantize", "-q", "--split-max-size", "1M", model, split_out,
                          "Q4_K_M"], capture_output=True, text=True)
    merged = os.path.join(work, "merged.gguf")
    shards = sorted(f for f in os.listdir(work) if f.startswith("split-out-"))
    if run.returncode != 0 or len(shards) < 2:
        problems.append(f"split output: {run.stderr.strip()} {shards}")
    else:
        subprocess.run([rebox, "merge", os.path.join(work, shards[0]), merged], check=True,
                       capture_output=True)
        if open(merged, "rb").read() != open(theirs, "rb").read():
            problems.append("split output: merged shards differ from llama-quantize's file")
    checked_files += 2
    # Refusals.
    out = os.path.join(work, "refused.gguf")
    rebox_refuses([model, model, "Q4_K_M"], "is the input file", "output is input", None)
    rebox_refuses([model, kept, "Q4_K_M"], "exists", "existing output", None)
    rebox_refuses([model, out, "Q4_K_X"], "not a quantization type", "unknown type", out)
    widths = os.path.join(work, "widths-f16.gguf")
    rebox_refuses(["--token-embedding-type", "q4_k", widths, out, "Q4_K_M"], "multiple of 256",
                  "forced K type on 288-wide rows", out)
    rebox_refuses(["--tensor-type", "attn_v[=q8_0", model, out, "Q4_K_M"], "regular expression",
                  "bad pattern", out)
    nan_model = os.path.join(work, "nan.gguf")
    spec = dict(MODELS["llama-tied-f32"])
    write_model(nan_model, **spec)
    data = bytearray(open(nan_model, "rb").read())
    # A NaN in a norm (a tensor no type choice touches: llama's loader checks it anyway).
    norm = next(t for t in gguf.GGUFReader(nan_model).tensors if t.name == "output_norm.weight")
    data[norm.data_offset + 8:norm.data_offset + 12] = struct.pack("<f", float("nan"))
    open(nan_model, "wb").write(bytes(data))
    rebox_refuses([nan_model, out, "Q8_0"], "NaN", "NaN in a norm", out)


SIZE_LINE = re.compile(r"\[\s*\d+/\s*\d+\]\s+(\S+)\s+- \[[^\]]*\], type =\s+\S+, size =\s+"
                       r"(?:(\S+) MiB ->\s+(\S+) MiB \((\S+)\)|(\S+) MiB)")
TOTAL_LINE = re.compile(r"(model|quant) size\s+=\s+(\S+) MiB \((\S+) BPW\)")


def dry_run_sizes(model, qtype, options, tag):
    """--dry-run: every tensor's type and size and the two totals as llama-quantize prints them;
    rebox writes nothing. Returns rebox's JSON tensors (name, type, bytes) or None."""
    global checked_dry_runs
    checked_dry_runs += 1
    llama = subprocess.run([llama_quantize, "--dry-run", *options, model, qtype],
                           capture_output=True, text=True)
    out = os.path.join(work, "dry-unused.gguf")
    report = os.path.join(work, "dry.json")
    ours = subprocess.run([rebox, "quantize", "--dry-run", "--json", report, *options, model, out,
                           qtype], capture_output=True, text=True)
    if llama.returncode != 0 or ours.returncode != 0 or os.path.exists(out):
        problems.append(f"dry run {tag}: llama rc {llama.returncode}, rebox rc {ours.returncode} "
                        f"({ours.stderr.strip()}), output written: {os.path.exists(out)}")
        return None
    log = llama.stdout + llama.stderr
    theirs = []
    for m in SIZE_LINE.finditer(log):
        if m.group(3):
            theirs.append((m.group(1), m.group(4).upper(), m.group(3), 2))
        else:
            theirs.append((m.group(1), None, m.group(5), 3))
    with open(report) as f:
        r = json.load(f)
    mine = r["tensors"]
    if len(mine) != len(theirs) or not theirs:
        problems.append(f"dry run {tag}: {len(mine)} tensors vs llama's {len(theirs)}")
        return None
    for t, (name, qt, size, digits) in zip(mine, theirs):
        ours_size = f"{t['bytes'] / 1048576:.{digits}f}"
        if t["name"] != name or ours_size != size or (qt and t["type"].upper() != qt):
            problems.append(f"dry run {tag}: {t['name']} {t['type']} {ours_size} MiB vs llama's "
                            f"{name} {qt} {size} MiB")
            return None
    totals = {m.group(1): (m.group(2), m.group(3)) for m in TOTAL_LINE.finditer(log)}
    mine_totals = {m.group(1): (m.group(2), m.group(3)) for m in TOTAL_LINE.finditer(ours.stdout)}
    if len(totals) != 2 or totals != mine_totals:
        problems.append(f"dry run {tag}: totals {mine_totals} vs llama's {totals}")
    needs = "will require an imatrix" in log
    if needs != r["needs_imatrix"] or needs != ("needs an importance matrix" in ours.stdout):
        problems.append(f"dry run {tag}: needs imatrix {r['needs_imatrix']} vs llama's {needs}")
    return mine


def option_cases():
    """--dry-run sizes, --include-weights / --exclude-weights, --override-kv, --prune-layers and
    --tensor-type-file:
    files byte for byte against llama-quantize, the refusals both make, and rebox's own."""
    global checked_files
    llama_model = os.path.join(work, "llama-f16.gguf")
    moe_model = os.path.join(work, "moe4-f32.gguf")
    imatrix = {}
    for model in ("llama-f16", "moe4-f32"):
        imatrix[model] = os.path.join(work, model + "-opt.imatrix.gguf")
        write_gguf_imatrix(imatrix[model], imatrix_entries(MODELS[model], False))
    # Dry runs: sizes and totals; Q2_K_S without an imatrix is a dry run both allow, with a warning.
    dry_run_sizes(llama_model, "Q4_K_M", [], "llama Q4_K_M")
    dry_run_sizes(moe_model, "Q3_K_S", ["--prune-layers", "1"], "moe Q3_K_S pruned")
    dry = dry_run_sizes(llama_model, "Q2_K_S", [], "llama Q2_K_S no imatrix")
    # The dry run's decisions are what a real run writes: llama-quantize's file of the same case.
    theirs = os.path.join(work, "dry-real.llama.gguf")
    subprocess.run([llama_quantize, "--imatrix", imatrix["llama-f16"], llama_model, theirs,
                    "Q2_K_S"], capture_output=True, check=True)
    real = [(t.name, t.tensor_type.name.upper(), int(t.n_bytes))
            for t in gguf.GGUFReader(theirs).tensors]
    if dry is not None and real != [(t["name"], t["type"].upper(), t["bytes"]) for t in dry]:
        problems.append("dry run Q2_K_S: its tensors, types and sizes are not the real file's")
    type_file = os.path.join(work, "tensor-types.txt")
    with open(type_file, "w") as f:
        f.write("attn_v=q8_0 \n\n  blk\\.[0-2]\\.ffn_down=q5_0\tATTN_Q=Q4_0\nffn_up=iq4_nl\n")
    cases = [
        (llama_model, "Q4_K_M", ["--imatrix", imatrix["llama-f16"], "--include-weights", "attn_v",
                                 "--include-weights", "blk.7."], "include"),
        (llama_model, "Q4_0", ["--imatrix", imatrix["llama-f16"], "--exclude-weights", "blk.1.",
                               "--exclude-weights", "ffn_down"], "exclude"),
        # Nothing left: quantized as without an imatrix (Q4_0 keeps Q4_0 for the first ffn_down).
        (llama_model, "Q4_0", ["--imatrix", imatrix["llama-f16"], "--include-weights", "nothing"],
         "include_nothing"),
        (moe_model, "Q4_K_S", ["--imatrix", imatrix["moe4-f32"], "--exclude-weights", "exps"],
         "moe_exclude"),
        (llama_model, "Q4_K_M", ["--override-kv", "general.name=str:renamed model",
                                 "--override-kv", "llama.context_length=int:512",
                                 "--override-kv", "tiny.flag=bool:true",
                                 "--override-kv", "tiny.scale=float:0.1",
                                 "--imatrix", imatrix["llama-f16"],
                                 "--override-kv", "quantize.imatrix.file=str:replaced"],
         "override_kv"),
        (llama_model, "Q4_K_M", ["--prune-layers", "5,1"], "prune"),
        (llama_model, "Q5_K_M", ["--prune-layers", "0,7", "--imatrix", imatrix["llama-f16"]],
         "prune_imatrix"),
        (moe_model, "Q3_K_M", ["--prune-layers", "0"], "moe_prune"),
        # --tensor-type-file: entries split on spaces and newlines, in command-line order with
        # --tensor-type (first match wins: ffn_down is Q8_0 here, Q5_0 in the next case).
        (llama_model, "Q4_K_M", ["--tensor-type-file", type_file], "type_file"),
        (llama_model, "Q4_K_M", ["--tensor-type", "ffn_down=q8_0", "--tensor-type-file", type_file,
                                 "--tensor-type", "attn_k=q6_k"], "type_file_order"),
    ]
    for model, qtype, options, tag in cases:
        write_both(model, qtype, options, "option_" + tag)
        checked_files += 1
    # Refused by both: llama-quantize prints its usage and exits 1.
    for options, expected, tag in [
            (["--imatrix", imatrix["llama-f16"], "--include-weights", "a", "--exclude-weights",
              "b"], "cannot be used together", "include_and_exclude"),
            (["--override-kv", "general.name"], "no '='", "override_no_equals"),
            (["--override-kv", "a.b=u32:3"], "int, float, bool or str", "override_bad_type"),
            (["--override-kv", "a.b=bool:1"], "true or false", "override_bad_bool"),
            (["--prune-layers", "1,x"], "'x' is not a layer number", "prune_not_a_number"),
            (["--tensor-type-file", os.path.join(work, "no-such-file.txt")], "cannot be opened",
             "type_file_missing")]:
        refuse_both_with(llama_model, "Q4_K_M", options, tag, expected)
    # Refused by rebox alone (llama-quantize writes 0, |v|, ignores the layer, or changes what
    # its own recipe reads).
    out = os.path.join(work, "refused-option.gguf")
    for options, expected in [(["--override-kv", "a.b=int:abc"], "non-negative decimal"),
                              (["--override-kv", "a.b=int:-4"], "non-negative decimal"),
                              (["--override-kv", "llama.block_count=int:4"], "type choice reads"),
                              (["--prune-layers", "8"], "layer 8 does not exist"),
                              (["--include-weights", "attn"], "there is no --imatrix")]:
        rebox_refuses([*options, llama_model, out, "Q4_K_M"], expected, " ".join(options), out)


def keep_split_cases():
    """--keep-split: one output per input shard, named and written as llama-quantize writes them
    (split inputs of 3 shards with and without an imatrix, with --prune-layers, an MoE, and a
    single file), byte for byte; its refusals."""
    global checked_files
    llama_model = os.path.join(work, "llama-f16.gguf")
    moe_model = os.path.join(work, "moe4-f32.gguf")
    firsts = {}
    for model, size in ((llama_model, "4M"), (moe_model, "5M")):
        prefix = os.path.join(work, "ks-" + os.path.basename(model)[:-5])
        subprocess.run([rebox, "split", model, prefix, "--split-max-size", size], check=True,
                       capture_output=True)
        firsts[model] = prefix + "-00001-of-00003.gguf"
        if not os.path.exists(firsts[model]):
            problems.append(f"keep split: {model} was not split into 3 shards")
            return
    imatrix = os.path.join(work, "llama-f16-opt.imatrix.gguf")
    cases = [(firsts[llama_model], "Q4_K_M", [], "plain", 3),
             (firsts[llama_model], "Q3_K_M", ["--imatrix", imatrix], "imatrix", 3),
             (firsts[llama_model], "Q4_K_S", ["--prune-layers", "1,5"], "prune", 3),
             (firsts[moe_model], "Q4_K_S", [], "moe", 3),
             (llama_model, "Q4_0", [], "single", 1)]
    for model, qtype, options, tag, count in cases:
        outs = {}
        for tool, cmd in (("llama", [llama_quantize]),
                          ("rebox", [rebox, "quantize", "-q", "--threads", "2"])):
            folder = os.path.join(work, f"keep-{tag}-{tool}")
            os.makedirs(folder, exist_ok=True)
            run = subprocess.run([*cmd, "--keep-split", *options, model,
                                  os.path.join(folder, "out.gguf"), qtype],
                                 capture_output=True, text=True)
            if run.returncode != 0:
                problems.append(f"keep split {tag}: {tool} failed: {run.stderr[-400:]}")
                break
            outs[tool] = folder
        if len(outs) != 2:
            continue
        names = sorted(os.listdir(outs["llama"]))
        expected = [f"out-{i + 1:05d}-of-{count:05d}.gguf" for i in range(count)]
        if names != expected or sorted(os.listdir(outs["rebox"])) != names:
            problems.append(f"keep split {tag}: files {sorted(os.listdir(outs['rebox']))}, "
                            f"llama-quantize's {names}, expected {expected}")
            continue
        for name in names:
            ours, theirs = (os.path.join(outs[t], name) for t in ("rebox", "llama"))
            if open(ours, "rb").read() != open(theirs, "rb").read():
                problems.append(f"keep split {tag}: {name} differs (cmp {ours} {theirs})")
            checked_files += 1
    # The dry run follows the input's order too (types and order as llama-quantize's dry run).
    options = ["--keep-split", "--imatrix", imatrix]
    theirs, error = llama_dry_run(firsts[llama_model], "Q3_K_M", options)
    ours, error2 = rebox_dry_run(firsts[llama_model], "Q3_K_M", options,
                                 os.path.join(work, "keep-report.json"))
    if theirs is None or ours is None or ours != theirs or not theirs:
        problems.append(f"keep split dry run: rebox {ours and ours[:3]} ({error2}), llama-quantize "
                        f"{theirs and theirs[:3]} ({error})")
    # Refused by rebox alone: llama-quantize has no --split-max-size, and cuts the last five
    # characters of an OUT that holds ".gguf" without ending in it.
    out = os.path.join(work, "keep-refused.gguf")
    rebox_refuses(["--keep-split", "--split-max-size", "2M", firsts[llama_model], out, "Q4_K_M"],
                  "cannot be combined with --split-max-size", "keep split with split size", out)
    odd = os.path.join(work, "keep.gguf.out")
    rebox_refuses(["--keep-split", firsts[llama_model], odd, "Q4_K_M"], "does not end in it",
                  "keep split odd name", odd + "-00001-of-00003.gguf")


checked_dry_runs = 0
imatrix_cases()
requantize_and_refusal_cases()
option_cases()
keep_split_cases()

for p in problems:
    print("FAIL:", p)
print(f"{checked_recipes} recipes, {checked_dry_runs} dry-run size reports and {checked_files} "
      f"files compared with llama-quantize; {len(problems)} problem(s)")
sys.exit(1 if problems else 0)
