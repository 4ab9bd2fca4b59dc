"""Makes a SentencePiece tokenizer.model (BPE, byte fallback, Llama-2-like settings) and the reference
tokenization of the corpus with Google's SentencePiece itself (Debian python3-sentencepiece).

Usage: python3 spm_model_reference.py MODEL_DIR corpus.txt REFERENCE.json
Trains on the corpus lines written in Latin script only (500 pieces: the others reach the byte
pieces), writes MODEL_DIR/tokenizer.model and tokenizer_config.json, and REFERENCE.json with, per
test line, SentencePiece's ids (no BOS) and whether decoding them gives the line back.
"""
import json
import sys

import sentencepiece as spm

model_dir, corpus_path, reference_path = sys.argv[1:4]
lines = open(corpus_path, encoding="utf-8").read().split("\n")
if lines and lines[-1] == "":
    lines.pop()
train_path = f"{model_dir}/train.txt"
with open(train_path, "w", encoding="utf-8") as out:
    out.write("\n".join(l for l in lines if all(ord(c) < 0x250 for c in l)) + "\n")
spm.SentencePieceTrainer.train(
    input=train_path, model_prefix=f"{model_dir}/tokenizer", vocab_size=500, model_type="bpe",
    byte_fallback=True, character_coverage=1.0, normalization_rule_name="identity",
    remove_extra_whitespaces=False, split_digits=True, add_dummy_prefix=True,
    user_defined_symbols=["<tool>"], control_symbols=["<ctl>"], minloglevel=2)
with open(f"{model_dir}/tokenizer_config.json", "w", encoding="utf-8") as out:
    json.dump({"add_bos_token": True, "add_eos_token": False, "bos_token": "<s>",
               "eos_token": "</s>", "unk_token": "<unk>", "tokenizer_class": "LlamaTokenizer"}, out)

sp = spm.SentencePieceProcessor(model_file=f"{model_dir}/tokenizer.model")
# Extra lines: a user-defined symbol (SentencePiece always matches it whole) and control-token text
# (which SentencePiece keeps as plain text). The user-defined symbol ends its line: llama.cpp starts
# the text after any special or user-defined token with a new space prefix ("<tool>now" ->
# <tool> "▁now"), which SentencePiece does not (a llama.cpp rule no GGUF content changes).
test_lines = lines + ["call the <tool>", "plain <ctl> and <s> and </s> text"]
reference = []
for line in test_lines:
    ids = sp.encode(line)
    reference.append({"line": line, "ids": ids, "round_trip": sp.decode(ids) == line})
with open(reference_path, "w", encoding="utf-8") as out:
    json.dump({"bos": sp.bos_id(), "eos": sp.eos_id(), "unk": sp.unk_id(),
               "pieces": sp.get_piece_size(), "lines": reference}, out, ensure_ascii=False)
