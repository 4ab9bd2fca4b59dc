"""rebox's tokenizer KVs of an EmbeddingGemma file (converted from tokenizer.json) against what llama.cpp's
converter writes for the same checkpoint shipped with a SentencePiece tokenizer.model, as the real
embeddinggemma-300m is.

llama.cpp's Gemma3Model.set_vocab reads tokenizer.model when present (_set_vocab_sentencepiece: tokenizer.ggml.model
"llama", pre "default", SentencePiece's pieces / scores / types padded to vocab_size, added_tokens_decoder of
tokenizer_config.json, gguf-py's SpecialVocab, add_space_prefix false); without one it takes _set_vocab_gpt2, which
needs transformers and names the pre-tokenizer from a hash table that has no Gemma 3 entry (it raises). No
tokenizer.model of Gemma 3 is available offline, so this builds the ModelProto transformers' GemmaConverter would
have turned into the given tokenizer.json, read backwards (Debian python3-sentencepiece / protobuf):
  piece i = model.vocab's piece with id i; type UNKNOWN for model.unk_token, CONTROL for a special added token,
  USER_DEFINED for another added token, BYTE for <0xXX>, NORMAL otherwise; score of a piece some merge makes =
  -(1 + rank of the first such merge) * 0.5 (GemmaConverter orders merges by the merged piece's score; any
  decreasing function of the rank stands for that order, this one deliberately not rebox's), 0 for the others;
  BPE with byte_fallback; normalizer identity without dummy prefix or whitespace folding (Gemma 3's).
Then the converter's own set_vocab (converter_run.py: Gemma3Model -> TextModel -> ModelBase, as written) runs on
the folder plus that tokenizer.model, and rebox's file must have:
  - the same tokenizer.ggml.model, pre, tokens, token types, special ids, add_bos / add_eos / add_space_prefix;
  - scores that order every piece a merge makes as the converter's do (llama.cpp's SPM tokenizer only compares
    the scores of candidate merges; their values differ by construction);
and the differences that remain must be exactly the two documented ones (docs/architectures.md, gemma-embedding),
each required to still be there so the note stays true:
  - tokenizer.ggml.add_sep_token: SpecialVocab sets it from the pair template; rebox writes none for a
    SentencePiece-style vocabulary (llama.cpp reads it only to build rerank prompts in llama-server);
  - <unk>: UNKNOWN in rebox's file (SentencePiece's type), CONTROL in the converter's (its added_tokens_decoder
    pass marks every special added token CONTROL); llama.cpp gives both attributes the same treatment
    (skipped without special parsing, not printed by token_to_piece).
Usage: egemma_vocab.py LLAMA_SRC MODEL_DIR FILE.gguf
"""
import ast
import enum
import json
import os
import sys
import tempfile

import numpy as np
from sentencepiece import sentencepiece_model_pb2 as pb

from converter_run import Converter
from gguf_fast import FastGguf


def build_model_proto(tokenizer_json, path):
    tok = json.load(open(tokenizer_json, encoding="utf-8"))
    vocab = tok["model"]["vocab"]
    by_id = {i: p for p, i in vocab.items()}
    added = {a["id"]: a for a in tok["added_tokens"] if a["id"] < len(by_id)}
    first_rank = {}
    for rank, merge in enumerate(tok["model"]["merges"]):
        left, right = merge if isinstance(merge, list) else merge.split(" ", 1)
        first_rank.setdefault(left + right, rank)
    m = pb.ModelProto()
    m.trainer_spec.model_type = pb.TrainerSpec.BPE
    m.trainer_spec.vocab_size = len(by_id)
    m.trainer_spec.byte_fallback = True
    unk = tok["model"].get("unk_token")
    for name, field in (("<unk>", "unk_id"), ("<bos>", "bos_id"), ("<eos>", "eos_id"), ("<pad>", "pad_id")):
        setattr(m.trainer_spec, field, vocab[name])
    m.normalizer_spec.name = "identity"
    m.normalizer_spec.add_dummy_prefix = False
    m.normalizer_spec.remove_extra_whitespaces = False
    m.normalizer_spec.escape_whitespaces = True
    for i in range(len(by_id)):
        piece = by_id[i]
        p = m.pieces.add()
        p.piece = piece
        if piece == unk:
            p.type = pb.ModelProto.SentencePiece.UNKNOWN
        elif i in added:
            p.type = pb.ModelProto.SentencePiece.CONTROL if added[i]["special"] else \
                pb.ModelProto.SentencePiece.USER_DEFINED
        elif len(piece) == 6 and piece.startswith("<0x") and piece.endswith(">"):
            p.type = pb.ModelProto.SentencePiece.BYTE
        else:
            p.type = pb.ModelProto.SentencePiece.NORMAL
        p.score = -(1 + first_rank[piece]) * 0.5 if piece in first_rank and p.type == 1 else 0.0
    open(path, "wb").write(m.SerializeToString())


def token_types(llama_src):
    """base.py's own SentencePieceTokenTypes enum (the values the converter writes)."""
    source = open(os.path.join(llama_src, "conversion", "base.py"), encoding="utf-8").read()
    node = next(n for n in ast.parse(source).body if isinstance(n, ast.ClassDef) and n.name == "SentencePieceTokenTypes")
    namespace = {"IntEnum": enum.IntEnum}
    exec(compile(ast.Module(body=[node], type_ignores=[]), "base.py", "exec"), namespace)
    return namespace["SentencePieceTokenTypes"]


def main():
    llama_src, model_dir, file = sys.argv[1:4]
    cfg = json.load(open(os.path.join(model_dir, "config.json")))
    with tempfile.TemporaryDirectory() as spm_dir:
        for entry in os.listdir(model_dir):
            os.symlink(os.path.abspath(os.path.join(model_dir, entry)), os.path.join(spm_dir, entry))
        build_model_proto(os.path.join(model_dir, "tokenizer.json"), os.path.join(spm_dir, "tokenizer.model"))
        conv = Converter(llama_src, [("gemma.py", "Gemma3Model"), ("base.py", "TextModel"), ("base.py", "ModelBase")],
                         spm_dir, dict(cfg), extra_globals={"SentencePieceTokenTypes": token_types(llama_src)})
        conv.obj.set_vocab()
        want = {k: v.value for k, v in conv.obj.gguf_writer.kv_data[0].items() if k.startswith("tokenizer.")}
    reader = FastGguf(file)
    got = {k: v[1] for k, v in reader.kv.items() if k.startswith("tokenizer.")}
    problems, notes = [], []
    for key in sorted(set(want) | set(got)):
        if key in ("tokenizer.ggml.scores", "tokenizer.ggml.tokens", "tokenizer.ggml.token_type"):
            continue
        if key not in got or key not in want:
            (notes if key == "tokenizer.chat_template" else problems).append(
                f"{key}: only in {'rebox' if key in got else 'the converter'}'s file")
        elif got[key] != want[key] and not (isinstance(want[key], float) and np.float32(got[key]) == np.float32(want[key])):
            problems.append(f"{key}: rebox {got[key]!r}, the converter {want[key]!r}")
    tokens_w = [t.decode("utf-8") if isinstance(t, bytes) else t for t in want["tokenizer.ggml.tokens"]]
    tokens_g = list(got["tokenizer.ggml.tokens"])
    if tokens_g != tokens_w:
        diff = [i for i, (a, b) in enumerate(zip(tokens_g, tokens_w)) if a != b]
        problems.append(f"tokens: {len(tokens_g)} vs {len(tokens_w)}, {len(diff)} differ (first ids {diff[:5]})")
    types_w, types_g = list(want["tokenizer.ggml.token_type"]), list(got["tokenizer.ggml.token_type"])
    kinds = {}
    for i, (a, b) in enumerate(zip(types_g, types_w)):
        if a != b:
            kinds.setdefault((a, b), []).append(i)
    for (a, b), ids in sorted(kinds.items()):
        problems.append(f"token_type: {len(ids)} tokens rebox {a}, the converter {b} (e.g. ids {ids[:4]}: "
                        f"{[tokens_w[i] for i in ids[:4]]})")
    scores_w = np.asarray(want["tokenizer.ggml.scores"], dtype=np.float64)
    scores_g = np.asarray(got["tokenizer.ggml.scores"], dtype=np.float64)
    merged = [i for i in range(len(scores_w)) if types_w[i] == 1 and scores_w[i] != 0.0]
    order_w = sorted(merged, key=lambda i: (-scores_w[i], i))
    order_g = sorted(merged, key=lambda i: (-scores_g[i], i))
    if order_w != order_g:
        first = next(k for k, (a, b) in enumerate(zip(order_w, order_g)) if a != b)
        problems.append(f"scores: the {len(merged)} pieces merges make are ordered differently from position {first} "
                        f"(converter {tokens_w[order_w[first]]!r}, rebox {tokens_w[order_g[first]]!r})")
    unk = want.get("tokenizer.ggml.unknown_token_id")
    known = ["tokenizer.ggml.add_sep_token: only in the converter's file",
             f"token_type: 1 tokens rebox 2, the converter 3 (e.g. ids [{unk}]: [{tokens_w[unk]!r}])"]
    for text in known:
        if text in problems:
            problems.remove(text)
            notes.append("known: " + text)
        else:
            problems.append(f"the known difference '{text}' is gone: update egemma_vocab.py and the docs")
    label = os.path.basename(file)
    if problems:
        print(f"FAIL: {label}: tokenizer KVs differ from the converter's (tokenizer.model path):")
        for p in problems + notes:
            print("  " + p)
        sys.exit(1)
    print(f"  {label}: tokenizer KVs equal the converter's from a tokenizer.model ({len(tokens_w)} tokens and types, "
          f"{len(want) - 3} other keys; the {len(merged)} merge-made pieces' scores in the same order) but for")
    for note in notes:
        print("    " + note)


if __name__ == "__main__":
    main()
