"""rebox's bert GGUF against llama.cpp's own conversion code and output, read with gguf-py:
 - tokenizer.ggml.tokens and token_type equal models/ggml-vocab-bert-bge.gguf, the vocabulary llama.cpp's
   converter wrote for bge-small-en-v1.5 (the fixture's tokenizer.json holds that vocabulary, bert_fixture.py);
 - the special ids and add_* / normalizer flags equal what gguf-py's SpecialVocab (the converter's class,
   run on the checkpoint directory) writes; token_type_count = type_vocab_size;
 - the bert.* KVs: the keys llama.cpp's converter wrote in that GGUF (plus pooling_type, and the classifier
   labels for a reranker) with the values config.json gives, and the pooling type the sentence-transformers
   files give (RANK for a reranker);
 - every tensor: the name gguf-py's TensorNameMap gives the source name after BertModel.filter_tensors'
   renames and drops (embedder), or the reranker layout (pooler.dense -> cls, classifier -> cls.output);
   values bit-identical to the source's (float32, or MLX dequantized by source_values.py; block types
   dequantized by gguf-py), position_embd / token_types and 1-D tensors F32.
Usage: ggufpy_bert.py LLAMA_SRC MODEL_DIR FILE.gguf [--reranker]
"""
import json
import os
import sys

import numpy as np
import gguf
from gguf import GGUFReader, MODEL_ARCH, get_tensor_name_map

from source_values import Source


class Writer:  # records what SpecialVocab.add_to_gguf writes
    def __init__(self):
        self.kvs = {}

    def __getattr__(self, name):
        def handler(*args):
            self.kvs[name] = args[0] if args else None
        if name.startswith("add_"):
            return handler
        raise AttributeError(name)


def field(reader, key):
    f = reader.fields.get(key)
    return None if f is None else f.contents()


def main():
    llama_src, model_dir, path = sys.argv[1:4]
    reranker = "--reranker" in sys.argv
    reader = GGUFReader(path)
    ref = GGUFReader(os.path.join(llama_src, "models", "ggml-vocab-bert-bge.gguf"))
    cfg = json.load(open(os.path.join(model_dir, "config.json")))
    problems = []

    def expect(key, want):
        got = field(reader, key)
        if isinstance(want, float):
            ok = got is not None and np.float32(got) == np.float32(want)
        else:
            ok = got == want
        if not ok:
            problems.append(f"{key}: {got!r}, expected {want!r}")

    # Vocabulary: as llama.cpp's converter wrote it for the same vocabulary.
    for key in ("tokenizer.ggml.tokens", "tokenizer.ggml.token_type"):
        a, b = reader.fields[key], ref.fields[key]
        got = [a.contents(i) for i in range(len(a.data))]
        want = [b.contents(i) for i in range(len(b.data))]
        if got != want:
            first = next((i for i, (x, y) in enumerate(zip(got, want)) if x != y), min(len(got), len(want)))
            problems.append(f"{key}: differs from the converter's at index {first}")
    expect("tokenizer.ggml.model", "bert")
    expect("tokenizer.ggml.token_type_count", cfg["type_vocab_size"])

    # Special tokens: gguf-py's SpecialVocab on the checkpoint directory.
    special = gguf.SpecialVocab(model_dir, load_merges=False, n_vocab=cfg["vocab_size"])
    writer = Writer()
    special.add_to_gguf(writer, quiet=True)
    names = {"bos": "bos_token_id", "eos": "eos_token_id", "unk": "unknown_token_id", "sep": "seperator_token_id",
             "pad": "padding_token_id", "mask": "mask_token_id"}
    for typ, key in names.items():
        expect("tokenizer.ggml." + key, writer.kvs.get(f"add_{typ}_token_id"))
    for typ in ("bos", "eos", "sep"):
        expect(f"tokenizer.ggml.add_{typ}_token", writer.kvs.get(f"add_add_{typ}_token"))
    expect("tokenizer.ggml.normalizer.lowercase", writer.kvs.get("add_normalizer_lowercase"))
    expect("tokenizer.ggml.normalizer.strip_accents", writer.kvs.get("add_normalizer_strip_accents"))

    # Architecture KVs: the converter's keys for bert, config.json's values.
    ref_keys = sorted(k for k in ref.fields if k.startswith("bert."))
    values = {"bert.block_count": cfg["num_hidden_layers"], "bert.context_length": cfg["max_position_embeddings"],
              "bert.embedding_length": cfg["hidden_size"], "bert.feed_forward_length": cfg["intermediate_size"],
              "bert.attention.head_count": cfg["num_attention_heads"],
              "bert.attention.layer_norm_epsilon": float(cfg["layer_norm_eps"]), "bert.attention.causal": False}
    if sorted(values) != ref_keys:
        problems.append(f"the converter writes {ref_keys}, this test knows {sorted(values)}")
    for key, want in values.items():
        expect(key, want)
    pooling = 4 if reranker else {"cls": 2, "mean": 1}[
        "cls" if json.load(open(os.path.join(model_dir, "1_Pooling", "config.json")))["pooling_mode_cls_token"]
        else "mean"]
    expect("bert.pooling_type", pooling)
    extra = {"bert.pooling_type"} | ({"bert.classifier.output_labels"} if reranker else set())
    got_keys = sorted(k for k in reader.fields if k.startswith("bert."))
    if got_keys != sorted(set(ref_keys) | extra):
        problems.append(f"bert.* keys {got_keys}, expected {sorted(set(ref_keys) | extra)}")
    if reranker:
        labels = reader.fields.get("bert.classifier.output_labels")
        got = [labels.contents(i) for i in range(len(labels.data))] if labels else None
        want = [v for _, v in sorted(cfg["id2label"].items(), key=lambda kv: int(kv[0]))]
        if got != want:
            problems.append(f"bert.classifier.output_labels {got}, expected {want}")

    # Tensors: BertModel.filter_tensors, then gguf-py's name map.
    name_map = get_tensor_name_map(MODEL_ARCH.BERT, cfg["num_hidden_layers"])
    src = Source(model_dir)
    expected = {}
    for name in src.names():
        stem = name[5:] if name.startswith("bert.") else name
        if stem == "embeddings.position_ids" or stem.startswith(("cls.predictions", "cls.seq_relationship")):
            continue
        if stem.startswith("pooler.dense."):
            if not reranker:
                continue
            gguf_name = "cls." + stem.rsplit(".", 1)[1]
        elif reranker and stem.startswith("classifier."):
            gguf_name = "cls.output." + stem.rsplit(".", 1)[1]
        else:
            gguf_name = name_map.get_name(stem, try_suffixes=(".weight", ".bias"))
        if gguf_name is None:
            problems.append(f"{name}: gguf-py has no bert name for it")
            continue
        expected[gguf_name] = src.values(name).astype(np.float32)
    got = {t.name: t for t in reader.tensors}
    if sorted(got) != sorted(expected):
        problems.append(f"tensors {sorted(set(got) ^ set(expected))} differ between the file and the converter")
    for name, want in expected.items():
        t = got.get(name)
        if t is None:
            continue
        if t.tensor_type.name != "F32" and (name.startswith(("position_embd", "token_types")) or want.ndim == 1):
            problems.append(f"{name}: {t.tensor_type.name}, expected F32 (as the converter writes it)")
            continue
        if t.tensor_type.name == "F32":
            data = np.asarray(t.data).reshape(want.shape)
        else:  # a block type (MLX source): gguf-py's own dequantization
            data = gguf.dequantize(t.data, t.tensor_type).astype(np.float32).reshape(want.shape)
        if data.view(np.uint32).tobytes() != want.view(np.uint32).tobytes():
            problems.append(f"{name}: values differ from the source")
    label = os.path.basename(path)
    if problems:
        print(f"FAIL: {label}:")
        for p in problems[:30]:
            print("  " + p)
        sys.exit(1)
    print(f"  {label}: {len(expected)} tensors bit-identical under the converter's names, bert.* and tokenizer "
          f"KVs equal the converter's")


if __name__ == "__main__":
    main()
