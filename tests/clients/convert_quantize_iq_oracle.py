"""rebox convert --quantize to the i-quant file types (IQ2_XXS, IQ1_M) with an importance matrix,
against llama.cpp's own llama-quantize applied to rebox's exact float conversion of the same
checkpoint, byte for byte (`cmp`); convert --quantize verifies every tensor it writes, so its exit 0
is verify re-deriving the i-quant blocks with its own code. Then `rebox verify --full --imatrix`
of the IQ2_XXS file passes, and of a copy with one byte of one IQ2_XXS block flipped fails naming
the tensor; verify without the imatrix names --imatrix; convert --quantize iq2_xxs without an
imatrix is refused as llama-quantize refuses it, and leaves no file.

The checkpoint is rebox-mkfixture's tiny float qwen3 at --hidden 256 (every matrix row a multiple
of 256 values, so the i-quants themselves and not their fallbacks); the imatrix is a legacy
imatrix.dat with an entry for every matrix (llama.cpp's format: int32 count; per entry int32 name
length, name, int32 ncall, int32 nval, nval float32 sums; int32 chunks, dataset name).

Usage: convert_quantize_iq_oracle.py LLAMA_QUANTIZE REBOX MKFIXTURE WORK_DIR   (exit 1 on a difference)
"""
import filecmp
import os
import shutil
import struct
import subprocess
import sys

import numpy as np
import gguf

llama_quantize, rebox, mkfixture, work = sys.argv[1:5]
problems = []


def run(args, tag, ok=True):
    result = subprocess.run(args, capture_output=True, text=True)
    if ok and result.returncode != 0:
        problems.append(f"{tag}: {' '.join(args[:3])}... exited {result.returncode}: "
                        f"{result.stderr.strip()[-400:]}")
    return result


def write_legacy_imatrix(path, gguf_path, seed):
    rng = np.random.default_rng(seed)
    entries = []
    for t in gguf.GGUFReader(gguf_path).tensors:
        if len(t.shape) < 2:
            continue
        ne = [int(x) for x in t.shape]  # gguf-py: ggml order (ne[0] first)
        nval = ne[0] * (ne[2] if len(ne) > 2 else 1)
        entries.append((t.name, rng.uniform(0.1, 4.0, nval).astype(np.float32)))
    with open(path, "wb") as f:
        f.write(struct.pack("<i", len(entries)))
        for name, sums in entries:
            raw = name.encode()
            f.write(struct.pack("<i", len(raw)) + raw + struct.pack("<ii", 3, len(sums)))
            f.write(sums.tobytes())
        dataset = b"oracle-set"
        f.write(struct.pack("<i", 10) + struct.pack("<i", len(dataset)) + dataset)


os.makedirs(work, exist_ok=True)
model = os.path.join(work, "wide-bf16")
run([mkfixture, model, "--preset", "tiny", "--force", "--format", "float", "--hidden", "256"],
    "mkfixture")
exact = os.path.join(work, "exact.gguf")
run([rebox, "convert", model, "-o", exact, "--quiet"], "exact convert")
imatrix = os.path.join(work, "imatrix.dat")
write_legacy_imatrix(imatrix, exact, 11)

files = {}
for qtype, iq_type in (("iq2_xxs", "IQ2_XXS"), ("iq1_m", "IQ1_M")):
    reference = os.path.join(work, f"{qtype}-llama.gguf")
    one_pass = os.path.join(work, f"{qtype}-rebox.gguf")
    run([llama_quantize, "--imatrix", imatrix, exact, reference, qtype.upper(), "2"],
        f"{qtype} llama-quantize")
    run([rebox, "convert", model, "-o", one_pass, "--quantize", qtype, "--imatrix", imatrix,
         "-t", "2", "--quiet"], f"{qtype} convert --quantize (verifies every tensor)")
    if not (os.path.exists(reference) and os.path.exists(one_pass)):
        continue
    types = {t.name: t.tensor_type.name for t in gguf.GGUFReader(reference).tensors}
    held = sorted(n for n, ty in types.items() if ty == iq_type)
    if not held:
        problems.append(f"{qtype}: llama-quantize wrote no {iq_type} tensor (fixture changed?)")
    if not filecmp.cmp(reference, one_pass, shallow=False):
        problems.append(f"{qtype}: convert --quantize differs from llama-quantize of the exact file")
    else:
        print(f"ok {qtype} imatrix: {os.path.getsize(one_pass)} bytes identical to llama-quantize's, "
              f"{len(held)} {iq_type} tensors, verified by convert")
        files[qtype] = (one_pass, held)

if "iq2_xxs" in files:
    path, held = files["iq2_xxs"]
    result = run([rebox, "verify", model, path, "--imatrix", imatrix, "--full"], "verify iq2_xxs")
    if result.returncode == 0:
        print("ok verify --full --imatrix of the IQ2_XXS file passes")
    # One byte of the first block of one IQ2_XXS tensor flipped (a grid index byte).
    target = held[0]
    tensor = next(t for t in gguf.GGUFReader(path).tensors if t.name == target)
    flipped = os.path.join(work, "iq2_xxs-flipped.gguf")
    shutil.copyfile(path, flipped)
    with open(flipped, "r+b") as f:
        f.seek(int(tensor.data_offset) + 10)
        byte = f.read(1)[0]
        f.seek(int(tensor.data_offset) + 10)
        f.write(bytes([byte ^ 0x5a]))
    result = run([rebox, "verify", model, flipped, "--imatrix", imatrix, "--full"],
                 "verify flipped", ok=False)
    text = result.stdout + result.stderr
    if result.returncode == 0 or target not in text:
        problems.append(f"verify of a flipped {target} block: expected a failure naming the tensor, "
                        f"got exit {result.returncode}: {text.strip()[-400:]}")
    else:
        print(f"ok verify of one flipped IQ2_XXS block fails (exit {result.returncode}) naming {target}")
    result = run([rebox, "verify", model, path], "verify without imatrix", ok=False)
    text = result.stdout + result.stderr
    if result.returncode == 0 or "--imatrix" not in text:
        problems.append(f"verify of the IQ2_XXS file without its imatrix: expected a failure naming "
                        f"--imatrix, got exit {result.returncode}: {text.strip()[-300:]}")
    else:
        print("ok verify without the imatrix asks for --imatrix")

# Without an importance matrix: llama-quantize refuses IQ2_XXS, and so does convert --quantize.
theirs = run([llama_quantize, exact, os.path.join(work, "y.gguf"), "IQ2_XXS", "2"], "llama no imatrix",
             ok=False)
refused = os.path.join(work, "refused.gguf")
result = run([rebox, "convert", model, "-o", refused, "--quantize", "iq2_xxs"], "no imatrix", ok=False)
if theirs.returncode == 0:
    problems.append("iq2_xxs without --imatrix: llama-quantize wrote a file")
if result.returncode == 0 or "importance matrix" not in result.stderr or os.path.exists(refused):
    problems.append(f"iq2_xxs without --imatrix: expected a refusal and no file, got exit "
                    f"{result.returncode}: {result.stderr.strip()[-300:]}")
else:
    print("ok iq2_xxs without an imatrix is refused, as llama-quantize refuses it")

for p in problems:
    print("FAIL " + p)
sys.exit(1 if problems else 0)
