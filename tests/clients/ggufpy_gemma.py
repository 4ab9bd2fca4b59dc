"""A rebox-converted gemma / gemma2 / gemma3 GGUF against llama.cpp's own conversion code, bit for bit.

gguf-py (GGUFReader + gguf.quants.dequantize) reads every tensor of FILE.gguf. The expected values are the
source's (source_values.py: mcq-v1, MLX or float, in the dtype the converter holds them in) passed through
the converter's own class chain from the bundle (GemmaModel / Gemma2Model / Gemma3Model -> TextModel ->
ModelBase, run as written by converter_run.py): filter_tensors, modify_tensors (+1 on every norm weight, in
F16 for an F16 source; gemma3's embedding cut to the real vocabulary) and gguf-py's tensor name map; the
vision tower of a multimodal checkpoint skipped. Every GGUF tensor must come from exactly one source tensor, every kept source
tensor must appear, and every norm must differ from its unshifted source (the +1 happened).

Usage: ggufpy_gemma.py LLAMA_SRC MODEL_DIR FILE.gguf [--expect-types T1,T2,...]
"""
import sys

import numpy as np

from converter_compare import compare_tensors
from converter_run import Converter
from source_values import Source

llama_src, model_dir, gguf_path = sys.argv[1:4]
expect_types = set()
if "--expect-types" in sys.argv:
    expect_types = set(sys.argv[sys.argv.index("--expect-types") + 1].split(","))
problems = []

src = Source(model_dir)
hparams = dict(src.config)
hparams.update(src.config.get("text_config") or {})  # TextModel.__init__ moves text_config up
arch = {"gemma": "gemma", "gemma2": "gemma2", "gemma3": "gemma3", "gemma3_text": "gemma3"}[src.config["model_type"]]
classes = {"gemma": "GemmaModel", "gemma2": "Gemma2Model", "gemma3": "Gemma3Model"}
conv = Converter(llama_src, [("gemma.py", classes[arch]), ("base.py", "TextModel"), ("base.py", "ModelBase")],
                 model_dir, hparams)

wanted, origin = {}, {}
skipped = shifted = fp16_rounded = cut = 0
for hf in src.names():
    native = src.native(hf)
    converted = conv.tensors(hf, native)
    if not converted:
        skipped += 1
        continue
    for g, data in converted:
        data = np.asarray(data).astype(np.float32)  # what an F32 GGUF tensor holds
        if g in wanted:
            problems.append(f"{origin[g]} and {hf} both become {g}")
        else:
            wanted[g], origin[g] = data, hf
            if g.endswith("norm.weight"):
                plain = native.astype(np.float32)
                if np.array_equal(plain, data):
                    problems.append(f"{hf}: the converter's +1 left it unchanged; the fixture cannot tell")
                shifted += 1
                if native.dtype == np.float16:  # where the fp16 add differs from a binary32 add
                    fp16_rounded += int((plain + np.float32(1) != data).sum())
            if data.shape != native.shape:
                cut += 1

found, reader, same, types = compare_tensors(gguf_path, wanted, origin, ",".join(sorted(expect_types)))
problems += found
if shifted == 0:
    problems.append("no norm tensor was checked")
if arch == "gemma3" and cut == 0:
    problems.append("gemma3: no embedding was cut to the vocabulary; the fixture cannot tell")

print(f"  {gguf_path.rsplit('/', 1)[-1]} ({src.format}, {arch}): {same}/{len(reader.tensors)} tensors equal to "
      f"llama.cpp's conversion of the source; {shifted} norms +1 ({fp16_rounded} values where the fp16 add "
      f"differs from a binary32 add), {cut} cut to the vocabulary, {skipped} source tensors skipped as the "
      f"converter skips them; types {types}")
if problems:
    print(f"FAIL: {gguf_path} vs {model_dir}:")
    for p in problems[:40]:
        print("  " + p)
    sys.exit(1)
