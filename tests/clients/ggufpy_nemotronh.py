"""Rebox-converted GGUFs of Nemotron-H (nemotron_h, and nemotron_h_moe when config.json has
num_experts_per_tok) against llama.cpp's own converter class chain from the bundle, bit for bit, several
files in one process.

For each MODEL_DIR FILE.gguf TYPES triple: the source's values (source_values.py: float, mcq-v1, MLX,
GPTQ, AWQ and compressed-tensors dequantized; an MLX one with mlx-lm's sanitize undone, hf_checkpoint)
go through
NemotronHModel -> GraniteHybridModel -> Mamba2Model -> GraniteMoeModel -> GraniteModel -> LlamaModel ->
TextModel -> ModelBase (run as written by converter_run.py; torch stood in for by numpy, exp by the
correctly rounded float32 exp as in ggufpy_qwen35.py): filter_tensors (dt_bias -> dt_proj.bias),
modify_tensors (per layer kind: Mamba2's conv1d squeeze, A and D reshaped to [heads, 1], A_log ->
-exp, the norm reshaped per group; LlamaModel's q/k permute on the attention layers; the MLP layers
as they are; NemotronHModel's MoE path: the router and its score-correction bias as they are, the
experts' up/down stacked with torch.stack) and gguf-py's tensor name map give every GGUF name and array llama.cpp's converter writes.
gguf-py's GGUFReader reads FILE.gguf: every tensor must be one of those (name, ne, values bit for
bit) and every one of those must be in the file; every {arch}.* KV set_gguf_parameters writes (the
per-layer feed_forward_length / head_count_kv arrays, ssm.*, context_length 2^20, the expert KVs,
...) must be in the file with the same type and value, in the converter's order, and the file may
hold no other {arch}.* KV.

The chain calls some methods through a class with an explicit self (`Mamba2Model.find_hparam(self,
...)`, `ModelBase.modify_tensors(self, ...)`): those class names resolve here to the chain from
that class on, the explicit self dropped.

Usage: ggufpy_nemotronh.py LLAMA_SRC MODEL_DIR FILE.gguf TYPES [MODEL_DIR FILE.gguf TYPES ...]
"""
import sys

import numpy as np

from converter_compare import compare_gguf, no_mtp_option, run_triples
from converter_run import Converter, block_id
from ggufpy_qwen35 import T, Torch, NUMPY_EXP_OFF
from source_values import Source

CHAIN = [("nemotron.py", "NemotronHModel"), ("granite.py", "GraniteHybridModel"),
         ("mamba.py", "Mamba2Model"), ("granite.py", "GraniteMoeModel"), ("granite.py", "GraniteModel"),
         ("llama.py", "LlamaModel"), ("base.py", "TextModel"), ("base.py", "ModelBase")]


class ExplicitSelf:
    """A chain class named in a method and called with the object as first argument."""

    def __init__(self, holder, start):
        self.holder, self.start = holder, start

    def __getattr__(self, name):
        conv = self.holder[0]

        def call(*args, **kwargs):
            if args and args[0] is conv.obj:
                args = args[1:]
            bound = conv.bound(name, self.start)
            if bound is None:
                raise AttributeError(name)
            return bound(*args, **kwargs)
        return call


def converter(llama_src, model_dir, hparams, no_mtp=False):
    holder = [None]
    refs = {cls: ExplicitSelf(holder, i) for i, (_, cls) in enumerate(CHAIN)
            if cls in ("Mamba2Model", "GraniteMoeModel", "ModelBase")}
    conv = Converter.__new__(Converter)
    holder[0] = conv
    Converter.__init__(conv, llama_src, CHAIN, model_dir, hparams,
                       attrs={"no_mtp": no_mtp, "mtp_only": False},
                       extra_globals={"torch": Torch, **refs}, class_constants=True)
    return conv


MLX_EXPERTS = {"fc1": "up_proj", "fc2": "down_proj"}


def hf_checkpoint(src):
    """(config, [(name, values)]) of the checkpoint as transformers holds it. An MLX one has mlx-lm's
    nemotron_h Model.sanitize undone (as read in mlx-lm): conv1d [channels, kernel, 1] back to
    [channels, 1, kernel], switch_mlp.fc1 / fc2 [E, out, in] as the E per-expert up_proj / down_proj
    tensors it stacked (slice e = expert e); sanitize's dropped mtp.* tensors stay absent. Others: F16
    values as float16, as prepare_tensors keeps them (A_log's exp in F16)."""
    if src.format != "mlx":
        return dict(src.config), [(n, src.native(n)) for n in src.names()]
    config = {k: v for k, v in src.config.items() if k not in ("quantization", "quantization_config")}
    out = []
    for name in src.names():
        values = src.values(name)
        if name.endswith("conv1d.weight"):
            values = np.ascontiguousarray(np.transpose(values, (0, 2, 1)))
        if ".switch_mlp." in name:
            head, proj = name.split(".switch_mlp.")
            proj = MLX_EXPERTS[proj[: -len(".weight")]]
            out += [(f"{head}.experts.{e}.{proj}.weight", values[e]) for e in range(values.shape[0])]
            continue
        out.append((name, values))
    return config, out


def check(llama_src, model_dir, gguf_path, expect_types):
    problems = []
    expect_types, no_mtp = no_mtp_option(expect_types)
    src = Source(model_dir)
    config, tensors = hf_checkpoint(src)
    conv = converter(llama_src, model_dir, config, no_mtp)
    left_out = 0
    conv.obj.set_gguf_parameters()
    arch = conv.obj.gguf_writer.arch
    want_kvs = {key: (value.type, value.value) for key, value in conv.obj.gguf_writer.kv_data[0].items()
                if not key.startswith("general.")}
    wanted, origin = {}, {}
    NUMPY_EXP_OFF[0] = 0
    for name, values in tensors:
        kept = conv.obj.filter_tensors((name, None))
        if kept is None and no_mtp and name.startswith("mtp."):
            left_out += 1  # --no-mtp
            continue
        if kept is None:
            problems.append(f"source tensor {name}: the converter skips it")
            continue
        renamed = kept[0]
        for g, data in conv.obj.modify_tensors(values.view(T), renamed, block_id(renamed)):
            if g in wanted:
                problems.append(f"{origin[g]} and {name} both become {g}")
            wanted[g], origin[g] = np.asarray(data, dtype=np.float32), name
    if no_mtp and left_out == 0:
        problems.append("--no-mtp asked, but the checkpoint has no mtp.* tensor to leave out")
    found, reader, same, types = compare_gguf(gguf_path, wanted, origin, want_kvs, arch, expect_types,
                                              in_order=True)
    problems += found
    print(f"  {gguf_path.rsplit('/', 1)[-1]} ({src.format}): {same}/{len(reader.tensors)} tensors and "
          f"{len(want_kvs)} {arch} KVs as llama.cpp's converter writes them ({NUMPY_EXP_OFF[0]} ssm_a values "
          f"numpy's float32 exp rounds otherwise); types {types}")
    return [f"{gguf_path}: {p}" for p in problems]


if __name__ == "__main__":
    run_triples(check, sys.argv, __doc__)
