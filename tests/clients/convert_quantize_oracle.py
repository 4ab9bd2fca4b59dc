"""rebox convert --quantize (one pass from the checkpoint) against llama.cpp's own llama-quantize
applied to rebox's exact float conversion of the same checkpoint.

For float checkpoints (rebox-mkfixture --format float: BF16, F16, F32; qwen3, llama with its q/k
row permutation, qwen3_moe with stacked experts, gemma with its norm + 1, deepseek2 with kv_b_proj
split into attn_k_b / attn_v_b; qwen35 / qwen35moe / qwen3next, also with --hidden 256 so that every
row takes the K types, where `rebox quantize` of the exact file is compared too) and several TYPEs,
with and without a legacy imatrix.dat, the one-pass file must equal llama-quantize's file byte for byte
(`cmp`), and `rebox plan --quantize --json` must list llama-quantize's tensor types. For mcq-v1
and GPTQ checkpoints the tensors convert carries exactly as blocks (Q4_1, Q4_0, ...) keep their exact bytes, the float
ones hold llama-quantize's bytes (--allow-requantize, which only changes the block tensors), and
`rebox verify` passes with the block tensors bit-identical. FP8 checkpoints take the lossy path:
against the converter's own dequantization (fp8_dequant.py) and llama-quantize. --outtype q4_k_m is
refused with a line that names --quantize.

Usage: convert_quantize_oracle.py LLAMA_QUANTIZE REBOX MKFIXTURE WORK_DIR   (exit 1 on a difference)
"""
import filecmp
import json
import os
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


def fixture(name, args):
    path = os.path.join(work, name)
    run([mkfixture, path, "--preset", "tiny", "--force"] + args, f"mkfixture {name}")
    return path


def tensors_of(path):
    reader = gguf.GGUFReader(path)
    return {t.name: (t.tensor_type.name, t.data.tobytes(), len(t.shape)) for t in reader.tensors}


def write_legacy_imatrix(path, gguf_path, seed):
    """llama.cpp's legacy imatrix.dat for every 2-D+ tensor of an exact GGUF: int32 count, then per
    entry int32 name length, name, int32 ncall, int32 nval, nval float32 sums; then int32 chunks and
    the dataset name. Sums are positive and ncall > 1, so llama-quantize divides them."""
    rng = np.random.default_rng(seed)
    reader = gguf.GGUFReader(gguf_path)
    entries = []
    for t in reader.tensors:
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


def compare_one_pass(model, tag, qtype, imatrix=None, options=(), gguf_quantize=False):
    """convert --quantize against llama-quantize of the exact file; with gguf_quantize also
    `rebox quantize` of that same exact file."""
    exact = os.path.join(work, f"{tag}-exact.gguf")
    if not os.path.exists(exact):
        run([rebox, "convert", model, "-o", exact, "--quiet"], f"{tag} exact convert")
    extra = (["--imatrix", imatrix] if imatrix else []) + list(options)
    reference = os.path.join(work, f"{tag}-{qtype}-llama.gguf")
    run([llama_quantize] + extra + [exact, reference, qtype.upper(), "2"], f"{tag} llama-quantize {qtype}")
    one_pass = os.path.join(work, f"{tag}-{qtype}-rebox.gguf")
    run([rebox, "convert", model, "-o", one_pass, "--quantize", qtype, "-t", "2", "--quiet"] + extra,
        f"{tag} convert --quantize {qtype}")
    if not (os.path.exists(reference) and os.path.exists(one_pass)):
        return
    label = f"{tag} {qtype}{' imatrix' if imatrix else ''}{' ' + ' '.join(options) if options else ''}"
    if not filecmp.cmp(reference, one_pass, shallow=False):
        ours, theirs = tensors_of(one_pass), tensors_of(reference)
        differing = [n for n in theirs if ours.get(n) != theirs[n]]
        problems.append(f"{label}: convert --quantize differs from llama-quantize of the exact file "
                        f"(tensors differing: {differing[:5]}, or the KVs)")
    else:
        print(f"ok {label}: {os.path.getsize(one_pass)} bytes identical")
    if gguf_quantize:
        requantized = os.path.join(work, f"{tag}-{qtype}-rebox-quantize.gguf")
        run([rebox, "quantize", exact, requantized, qtype.upper()] + extra, f"{label} rebox quantize")
        if os.path.exists(requantized) and not filecmp.cmp(reference, requantized, shallow=False):
            problems.append(f"{label}: rebox quantize of the exact file differs from llama-quantize's")
        elif os.path.exists(requantized):
            print(f"ok {label}: rebox quantize identical too")
            os.remove(requantized)
    # plan --quantize names the types llama-quantize wrote.
    result = run([rebox, "plan", model, "--quantize", qtype, "--json"] + extra, f"{label} plan")
    if result.returncode == 0:
        planned = {t["name"]: t["type"] for t in json.loads(result.stdout)["tensors"]}
        written = {n: t[0] for n, t in tensors_of(reference).items()}
        if planned != written:
            wrong = [n for n in written if planned.get(n) != written[n]]
            problems.append(f"{label}: plan --quantize types differ from llama-quantize's: {wrong[:5]}")
    for path in (reference, one_pass):
        os.remove(path)


def float_cases():
    cases = [
        ("qwen3-bf16", ["--format", "float", "--dtype", "bf16"], ["q4_k_m", "q8_0", "q6_k", "q2_k", "q2_k_s", "q4_0", "q5_1", "iq4_nl"]),
        # 256-wide rows: the K types themselves, not their fallbacks.
        ("wide-bf16", ["--format", "float", "--hidden", "256"],
         ["q4_k_m", "q4_k_s", "q3_k_l", "q5_k_m", "q6_k", "q2_k", "iq4_xs", "iq4_nl"]),
        ("wide-llama-f16", ["--format", "float", "--hidden", "256", "--arch", "llama", "--dtype", "f16"],
         ["q4_k_m", "q3_k_m", "tq1_0"]),
        ("qwen3-f16", ["--format", "float", "--dtype", "f16"], ["q4_k_m", "q5_k_s", "q2_0", "tq2_0"]),
        ("qwen3-f32", ["--format", "float", "--dtype", "f32"], ["q4_k_m", "q3_k_m"]),
        ("llama-bf16", ["--format", "float", "--arch", "llama"], ["q4_k_m", "q8_0"]),
        ("moe-bf16", ["--format", "float", "--arch", "qwen3_moe"], ["q4_k_m", "q3_k_s", "mxfp4_moe"]),
        ("gemma-bf16", ["--format", "float", "--arch", "gemma"], ["q4_k_m"]),
        # qwen35: linear-attention layers (attn_qkv counted as attn_v), value heads moved before
        # quantizing, and verify re-quantizing them from the source order.
        ("qwen35-bf16", ["--format", "float", "--arch", "qwen35"], ["q4_k_m", "q3_k_s", "iq4_xs"]),
        ("qwen35moe-bf16", ["--format", "float", "--arch", "qwen35moe"], ["q4_k_m", "mxfp4_moe"]),
        # qwen3next: in_proj_qkvz split into attn_qkv / attn_gate rows before quantizing, verify
        # re-quantizing each part from its gathered source rows.
        ("qwen3next-bf16", ["--format", "float", "--arch", "qwen3next"], ["q4_k_m"]),
        # The three at --hidden 256 (every matrix row a multiple of 256 values): the K types
        # themselves on attn_qkv / attn_gate / ssm_* / ffn_*_exps / nextn.eh_proj, not fallbacks.
        ("wide-qwen35-bf16", ["--format", "float", "--arch", "qwen35", "--hidden", "256"],
         ["q4_k_m", "q2_k", "q6_k", "iq4_xs"]),
        ("wide-qwen35moe-bf16", ["--format", "float", "--arch", "qwen35moe", "--hidden", "256"],
         ["q4_k_m", "q2_k", "q6_k"]),
        ("wide-qwen3next-bf16", ["--format", "float", "--arch", "qwen3next", "--hidden", "256"],
         ["q4_k_m", "q2_k", "q6_k"]),
        # kv_b_proj split into attn_k_b (transposed) and attn_v_b (row slices), quantized in one pass.
        ("deepseek2-bf16", ["--format", "float", "--arch", "deepseek2"], ["q4_k_m", "q8_0"]),
    ]
    for tag, args, types in cases:
        model = fixture(tag, args)
        for qtype in types:
            compare_one_pass(model, tag, qtype, gguf_quantize=tag.startswith("wide-qwen"))
    # With an importance matrix (entries named by GGUF tensor names), incl. a type that needs one.
    model = os.path.join(work, "qwen3-bf16")
    exact = os.path.join(work, "qwen3-bf16-exact.gguf")
    imatrix = os.path.join(work, "qwen3.imatrix.dat")
    write_legacy_imatrix(imatrix, exact, 7)
    for qtype in ("q4_k_m", "iq4_xs"):
        compare_one_pass(model, "qwen3-bf16", qtype, imatrix)
    wide_imatrix = os.path.join(work, "wide.imatrix.dat")
    write_legacy_imatrix(wide_imatrix, os.path.join(work, "wide-bf16-exact.gguf"), 9)
    for qtype in ("q4_k_m", "q2_k_s", "iq4_xs"):
        compare_one_pass(os.path.join(work, "wide-bf16"), "wide-bf16", qtype, wide_imatrix)
    moe_imatrix = os.path.join(work, "moe.imatrix.dat")
    write_legacy_imatrix(moe_imatrix, os.path.join(work, "moe-bf16-exact.gguf"), 8)
    compare_one_pass(os.path.join(work, "moe-bf16"), "moe-bf16", "q4_k_m", moe_imatrix)
    # --tensor-type and --tensor-type-file, in command-line order (the first match wins).
    type_file = os.path.join(work, "tensor-types.txt")
    with open(type_file, "w") as f:
        f.write("attn_v=q8_0\n blk\\.1\\.ffn_down=q5_0 ATTN_Q=q6_k\n")
    compare_one_pass(os.path.join(work, "wide-bf16"), "wide-bf16", "q4_k_m",
                     options=("--tensor-type", "ffn_down=iq4_nl", "--tensor-type-file", type_file))


def packed_case(tag, args, convert_args=()):
    """A packed checkpoint: block tensors keep the exact conversion's bytes; float ones get
    llama-quantize's (of the exact file, --allow-requantize: it changes only the block tensors).
    With --allow-lossless-fallback the float ones include the exact F16 / F32 copies of quantized
    tensors no block type holds (deepseek2's transposed attn_k_b, NVFP4 rows of 32 / 96)."""
    model = fixture(tag, args)
    exact = os.path.join(work, f"{tag}-exact.gguf")
    run([rebox, "convert", model, "-o", exact, "--quiet"] + list(convert_args), f"{tag} exact convert")
    one_pass = os.path.join(work, f"{tag}-q4_k_m.gguf")
    report_path = os.path.join(work, f"{tag}-q4_k_m.json")
    run([rebox, "convert", model, "-o", one_pass, "--quantize", "q4_k_m", "--json", report_path,
         "--quiet"] + list(convert_args), f"{tag} convert --quantize")
    reference = os.path.join(work, f"{tag}-llama.gguf")
    run([llama_quantize, "--allow-requantize", exact, reference, "Q4_K_M", "2"], f"{tag} llama-quantize")
    if not all(os.path.exists(p) for p in (exact, one_pass, reference)):
        return
    exact_t, ours, theirs = tensors_of(exact), tensors_of(one_pass), tensors_of(reference)
    blocks = [n for n, (ty, _, _) in exact_t.items()
              if ty in ("Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "NVFP4", "MXFP4")]
    if not blocks:
        problems.append(f"{tag}: the exact conversion has no block tensor (fixture changed?)")
    for name in blocks:
        if ours.get(name) != exact_t[name]:
            problems.append(f"{tag}: {name} is not the exact conversion's {exact_t[name][0]} bytes")
    floats = [n for n, (ty, _, _) in exact_t.items() if ty in ("F32", "F16", "BF16")]
    matrices = [n for n in floats if exact_t[n][2] >= 2]
    changed = 0
    for name in floats:
        if ours.get(name) != theirs.get(name):
            problems.append(f"{tag}: float tensor {name} differs from llama-quantize's {theirs[name][0]}")
        changed += ours.get(name, ("", b"", 0))[0] != exact_t[name][0]
    if matrices and changed == 0:
        problems.append(f"{tag}: no float matrix was quantized ({matrices})")
    if not matrices and "general.file_type" in gguf.GGUFReader(one_pass).fields:
        # Nothing to quantize: the file type stays the exact conversion's (it names the tensors).
        ft = lambda p: int(gguf.GGUFReader(p).fields["general.file_type"].parts[-1][0])
        if ft(one_pass) != ft(exact):
            problems.append(f"{tag}: general.file_type {ft(one_pass)}, the exact file's is {ft(exact)}")
    verify = run([rebox, "verify", model, one_pass, "--json", os.path.join(work, f"{tag}-verify.json")],
                 f"{tag} verify")
    if verify.returncode == 0:
        with open(os.path.join(work, f"{tag}-verify.json")) as f:
            checks = {t["gguf_name"]: t for t in json.load(f)["tensors"]}
        for name in blocks:
            if not checks.get(name, {}).get("identical"):
                problems.append(f"{tag}: verify does not call the exact block tensor {name} identical")
    with open(report_path) as f:
        report = json.load(f)
    kept = [t for t in report["quantize"]["tensors"] if t["name"] in blocks]
    if not kept or any("exact" not in t["reason"] for t in kept):
        problems.append(f"{tag}: the report does not say the block tensors were kept exact")
    print(f"ok {tag}: {len(blocks)} block tensors exact, {len(floats)} float tensors as llama-quantize")


def fp8_case(scales, qtypes):
    """An FP8 checkpoint (rebox-mkfixture --format fp8: f32 = DeepSeek-V3's F32 block scales, whose
    products binary32 cannot hold; bf16 = Qwen's): the lossy path. The reference is what llama.cpp's
    converter writes, rebuilt without rebox (fp8_dequant.py: its binary32 products rounded to its
    --outtype auto type by gguf-py, stored as a float checkpoint of the same name), converted exactly
    and quantized by llama-quantize; convert --quantize from the FP8 checkpoint must write every
    tensor byte for byte and every KV but rebox's provenance as it does, and say the rounding
    type in rebox.fp8.rounded_to; `rebox verify` re-derives it."""
    model = fixture(os.path.join(f"fp8-{scales}", "model"), ["--format", "fp8", "--fp8-scales", scales])
    dequant = os.path.join(work, f"fp8-{scales}-dequant", "model")
    if os.path.exists(os.path.dirname(dequant)):
        subprocess.run(["rm", "-rf", os.path.dirname(dequant)])
    os.makedirs(os.path.dirname(dequant))
    outtype = run([sys.executable, os.path.join(os.path.dirname(__file__), "fp8_dequant.py"), model,
                   dequant], f"fp8-{scales} dequant").stdout.strip()
    exact = os.path.join(work, f"fp8-{scales}-exact.gguf")
    run([rebox, "convert", dequant, "-o", exact, "--quiet", "-f"], f"fp8-{scales} exact convert")
    for qtype in qtypes:
        label = f"fp8-{scales} {qtype}"
        reference = os.path.join(work, f"fp8-{scales}-{qtype}-llama.gguf")
        one_pass = os.path.join(work, f"fp8-{scales}-{qtype}-rebox.gguf")
        run([llama_quantize, exact, reference, qtype.upper(), "2"], f"{label} llama-quantize")
        run([rebox, "convert", model, "-o", one_pass, "--quantize", qtype, "-t", "2", "--quiet", "-f"],
            f"{label} convert --quantize")
        if not (os.path.exists(reference) and os.path.exists(one_pass)):
            continue
        ours, theirs = gguf.GGUFReader(one_pass), gguf.GGUFReader(reference)
        tensors = lambda r: {t.name: (t.tensor_type.name, t.data.tobytes()) for t in r.tensors}
        kvs = lambda r: {k: (f.types, f.parts[-1].tobytes()) for k, f in r.fields.items()
                         if not k.startswith(("rebox.", "GGUF."))}
        differing = [n for n, t in tensors(theirs).items() if tensors(ours).get(n) != t]
        if differing or set(tensors(ours)) != set(tensors(theirs)):
            problems.append(f"{label}: tensors differ from the converter + llama-quantize: {differing[:5]}")
        if kvs(ours) != kvs(theirs):
            problems.append(f"{label}: KVs differ: {[k for k in kvs(theirs) if kvs(ours).get(k) != kvs(theirs)[k]]}")
        rounded = ours.fields.get("rebox.fp8.rounded_to")
        if rounded is None or bytes(rounded.parts[-1]).decode() != outtype:
            problems.append(f"{label}: rebox.fp8.rounded_to is not the converter's {outtype}")
        if run([rebox, "verify", model, one_pass], f"{label} verify").returncode == 0 and \
                not differing:
            print(f"ok {label}: every tensor as the converter ({outtype}) + llama-quantize, verified")


def fp8_as_q8_case(scales):
    """--fp8-as-q8 (the converter's option: tensor_force_quant makes every FP8-dequantized tensor of
    two or more dims Q8_0, quantized from its binary32 products). The reference, rebuilt without
    rebox's quantizer: fp8_dequant.py --f32 stores the products unrounded as F32 tensors (the other
    tensors as they are), rebox converts that float checkpoint exactly, and each F32 matrix of it
    (the FP8 ones, and only they) is quantized by gguf-py's own Q8_0 (gguf.quants.quantize, the
    converter's code path); every tensor of convert --fp8-as-q8 must equal it, the file type must
    be the converter's output type, and `rebox verify` re-derives it."""
    label = f"fp8-{scales} --fp8-as-q8"
    model = os.path.join(work, f"fp8-{scales}", "model")
    dequant = os.path.join(work, f"fp8-{scales}-f32", "model")
    if os.path.exists(os.path.dirname(dequant)):
        subprocess.run(["rm", "-rf", os.path.dirname(dequant)])
    os.makedirs(os.path.dirname(dequant))
    outtype = run([sys.executable, os.path.join(os.path.dirname(__file__), "fp8_dequant.py"), model,
                   dequant, "--f32"], f"{label} dequant").stdout.strip()
    floats = os.path.join(work, f"fp8-{scales}-f32.gguf")
    ours_path = os.path.join(work, f"fp8-{scales}-q8-rebox.gguf")
    run([rebox, "convert", dequant, "-o", floats, "--quiet", "-f"], f"{label} exact convert")
    run([rebox, "convert", model, "-o", ours_path, "--fp8-as-q8", "--quiet", "-f"], f"{label} convert")
    if not (os.path.exists(floats) and os.path.exists(ours_path)):
        return
    ours = {t.name: (t.tensor_type.name, t.data.tobytes()) for t in gguf.GGUFReader(ours_path).tensors}
    expected, forced = {}, 0
    for t in gguf.GGUFReader(floats).tensors:
        if t.tensor_type == gguf.GGMLQuantizationType.F32 and len(t.shape) >= 2:
            values = np.asarray(t.data, dtype=np.float32).reshape(t.data.shape)
            expected[t.name] = ("Q8_0", gguf.quants.quantize(values, gguf.GGMLQuantizationType.Q8_0).tobytes())
            forced += 1
        else:
            expected[t.name] = (t.tensor_type.name, t.data.tobytes())
    def header(path):
        with open(path, "rb") as f:
            return json.loads(f.read(int.from_bytes(f.read(8), "little")))
    fp8_tensors = sum(k.endswith("_scale_inv") for f in os.listdir(model) if f.endswith(".safetensors")
                      for k in header(os.path.join(model, f)))
    if forced != fp8_tensors or forced == 0:
        problems.append(f"{label}: {forced} F32 matrices in the reference, {fp8_tensors} FP8 tensors in the source")
    differing = [n for n, t in expected.items() if ours.get(n) != t]
    if differing or set(ours) != set(expected):
        problems.append(f"{label}: tensors differ from gguf-py's Q8_0 of the products: {differing[:5]}")
    ft = int(gguf.GGUFReader(ours_path).fields["general.file_type"].parts[-1][0])
    want = {"BF16": 32, "F16": 1}[outtype]
    if ft != want:
        problems.append(f"{label}: general.file_type {ft}, the converter's {outtype} is {want}")
    if run([rebox, "verify", model, ours_path], f"{label} verify").returncode == 0 and not differing:
        print(f"ok {label}: {forced} Q8_0 tensors as gguf-py quantizes the products, the rest as "
              f"the {outtype} file, verified")


def refusals():
    model = os.path.join(work, "qwen3-bf16")
    result = run([rebox, "convert", model, "-o", os.path.join(work, "x.gguf"), "--outtype", "q4_k_m"],
                 "outtype q4_k_m", ok=False)
    if result.returncode == 0 or "--quantize q4_k_m" not in result.stderr:
        problems.append(f"--outtype q4_k_m: expected a refusal naming --quantize, got exit "
                        f"{result.returncode}: {result.stderr.strip()}")
    result = run([rebox, "convert", model, "-o", os.path.join(work, "x.gguf"), "--pure"], "pure alone",
                 ok=False)
    if result.returncode == 0 or "--quantize" not in result.stderr:
        problems.append("--pure without --quantize: expected a refusal")
    # Q2_K_S without an importance matrix: llama-quantize refuses, so does convert --quantize.
    wide = os.path.join(work, "wide-bf16")
    theirs = run([llama_quantize, os.path.join(work, "wide-bf16-exact.gguf"), os.path.join(work, "y.gguf"),
                  "Q2_K_S", "2"], "q2_k_s llama", ok=False)
    result = run([rebox, "convert", wide, "-o", os.path.join(work, "x.gguf"), "--quantize", "q2_k_s"],
                 "q2_k_s without imatrix", ok=False)
    if theirs.returncode == 0:
        problems.append("q2_k_s without --imatrix: llama-quantize wrote a file")
    if result.returncode == 0 or "importance matrix" not in result.stderr:
        problems.append(f"q2_k_s without --imatrix: expected a refusal, got exit {result.returncode}: "
                        f"{result.stderr.strip()[-300:]}")
    # A K type forced onto rows its 256-value blocks do not divide: llama-quantize asserts
    # mid-write; convert --quantize refuses before any output exists.
    result = run([rebox, "convert", model, "-o", os.path.join(work, "x.gguf"), "--quantize", "q4_k_m",
                  "--token-embedding-type", "q4_k"], "forced q4_k", ok=False)
    if result.returncode == 0 or "multiple of 256" not in result.stderr:
        problems.append(f"--token-embedding-type q4_k on 64-wide rows: expected a refusal, got exit "
                        f"{result.returncode}: {result.stderr.strip()[-300:]}")
    if os.path.exists(os.path.join(work, "x.gguf")):
        problems.append("a refused convert --quantize left an output file")


os.makedirs(work, exist_ok=True)
float_cases()
packed_case("mcq", [])
packed_case("gptq", ["--format", "gptq"])
packed_case("deepseek2-mcq", ["--arch", "deepseek2", "--format", "mcq"], ["--allow-lossless-fallback"])
packed_case("qwen35moe-nvfp4", ["--arch", "qwen35moe", "--format", "modelopt-nvfp4"],
            ["--allow-lossless-fallback"])
fp8_case("f32", ["q4_k_m", "q8_0"])
fp8_case("bf16", ["q4_k_m"])
fp8_as_q8_case("f32")
refusals()
for p in problems:
    print("FAIL " + p)
sys.exit(1 if problems else 0)
