"""rebox verify --imatrix against llama.cpp's own llama-quantize.

For each case: a rebox-mkfixture checkpoint, its exact GGUF (`rebox convert`), an imatrix for
every quantizable weight with the corner cases of real files (a zero count, an expert never routed,
an all-zero entry, a token_embd entry of the wrong size, an entry for a tensor the model does not
have), written by gguf-py's GGUFWriter (GGUF) or byte by byte (legacy imatrix.dat); then
llama-quantize --imatrix writes the file, and `rebox verify MODEL FILE --imatrix IMATRIX` must pass
(every re-quantized block identical to llama.cpp's) while `rebox verify` without it must fail
(exit 3).

Usage: verify_imatrix_llama.py LLAMA_QUANTIZE REBOX MKFIXTURE WORK_DIR   (exit 1 on a difference)
"""
import os
import struct
import subprocess
import sys

import numpy as np
import gguf

llama_quantize, rebox, mkfixture, work = sys.argv[1:5]
rng = np.random.default_rng(20261202)
problems = []

CASES = [
    # name, rebox-mkfixture arguments, TYPE, imatrix format
    ("qwen3moe_bf16", ["--preset", "tiny", "--format", "float", "--hidden", "256", "--arch",
                       "qwen3_moe"], "Q4_K_M", "gguf"),
    ("llama_f32", ["--preset", "tiny", "--format", "float", "--dtype", "f32", "--hidden", "256",
                   "--arch", "llama"], "Q4_0", "legacy"),
    ("qwen3_bf16", ["--preset", "tiny", "--format", "float", "--hidden", "256"], "IQ4_XS", "gguf"),
    ("qwen3_bf16", ["--preset", "tiny", "--format", "float", "--hidden", "256"], "Q5_K_S", "legacy"),
]


def weights_of(exact):
    """(name, ne0, n_mat) of every 2-D/3-D tensor but the embedding (gguf-py's reader)."""
    out = []
    for t in gguf.GGUFReader(exact).tensors:
        ne = [int(n) for n in t.shape]  # ggml order: ne[0] first
        if len(ne) >= 2 and t.name != "token_embd.weight":
            out.append((t.name, ne[0], ne[2] if len(ne) > 2 else 1))
    return out


def entries_for(weights):
    entries = {}
    for name, ne0, n_mat in weights:
        sums = (rng.random((n_mat, ne0)) * 4 + 0.05).astype(np.float32)
        counts = (rng.integers(16, 400, n_mat) + 0.4).astype(np.float32)
        entries[name] = [sums, counts]
    entries["blk.1.attn_k.weight"][1][:] = 0  # a zero count: weights 1.0
    entries["blk.0.attn_v.weight"][0][:] = 0  # an all-zero entry
    three_d = [n for n, _, m in weights if m > 1]
    if three_d:
        entries[three_d[0]][1][1] = 0  # an expert never routed
    entries["token_embd.weight"] = [np.ones((1, 100), np.float32), np.ones(1, np.float32) * 5]
    entries["blk.99.attn_q.weight"] = [np.ones((1, 64), np.float32), np.ones(1, np.float32)]
    return entries


def write_gguf_imatrix(path, entries):
    w = gguf.GGUFWriter(path, "imatrix")
    w.add_type("imatrix")
    w.add_array("imatrix.datasets", ["wiki.train.raw"])
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


def write_legacy_imatrix(path, entries):
    with open(path, "wb") as f:
        f.write(struct.pack("<i", len(entries)))
        for name in sorted(entries):
            sums, counts = entries[name]
            ncall = int(counts.max() // 100)  # 0 for the zero-count entry: values kept
            f.write(struct.pack("<i", len(name)) + name.encode())
            f.write(struct.pack("<ii", ncall, sums.size) + sums.astype("<f4").tobytes())
        f.write(struct.pack("<ii", 7, 10) + b"legacy-set")


def run(args):
    return subprocess.run(args, capture_output=True, text=True)


for name, fixture, qtype, fmt in CASES:
    tag = f"{name}_{qtype}_{fmt}"
    model = os.path.join(work, name)
    exact = os.path.join(work, name + ".gguf")
    if not os.path.exists(exact):
        made = run([mkfixture, model, *fixture])
        conv = run([rebox, "convert", model, "-o", exact, "-q"])
        if made.returncode or conv.returncode:
            problems.append(f"{tag}: fixture/convert failed: {made.stderr}{conv.stderr}")
            continue
    imatrix = os.path.join(work, tag + (".imatrix.gguf" if fmt == "gguf" else ".imatrix.dat"))
    entries = entries_for(weights_of(exact))
    (write_gguf_imatrix if fmt == "gguf" else write_legacy_imatrix)(imatrix, entries)
    quant = os.path.join(work, tag + ".llama.gguf")
    q = run([llama_quantize, "--imatrix", imatrix, exact, quant, qtype])
    if q.returncode != 0:
        problems.append(f"{tag}: llama-quantize failed: {q.stderr[-2000:]}")
        continue
    good = run([rebox, "verify", model, quant, "--imatrix", imatrix, "-t", "2"])
    if good.returncode != 0 or "PROBLEM" in good.stdout:
        lines = [l for l in good.stdout.splitlines() if "PROBLEM" in l or "MISMATCH" in l]
        problems.append(f"{tag}: verify --imatrix rc {good.returncode}: {lines[:5]} {good.stderr}")
    elif "re-quantized tensors identical to the reference quantizer" not in good.stdout:
        problems.append(f"{tag}: no re-quantized tensors in: {good.stdout[-500:]}")
    bad = run([rebox, "verify", model, quant])
    if bad.returncode != 3:
        problems.append(f"{tag}: verify without the imatrix rc {bad.returncode}, expected 3")
    os.remove(quant)

if problems:
    print("\n".join(problems))
    sys.exit(1)
print(f"{len(CASES)} llama-quantize files with an imatrix verified by rebox verify --imatrix")
