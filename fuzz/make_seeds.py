#!/usr/bin/env python3
# Shrinks a rebox-mkfixture model directory to its first N decoder layers (tensors, mcq metadata
# and config.json) and its tokenizer.json to a few dozen tokens and merges, so fuzz seeds stay a
# few KB: libFuzzer's speed falls with input size (every execution of fuzz_model_dir parses the
# tokenizer again), and the parsers' branches are reached by one layer and 24 merges as well as
# by all of them.
# Usage: make_seeds.py SRC_MODEL_DIR DST_MODEL_DIR [LAYERS]
import json
import shutil
import struct
import sys
from pathlib import Path


def keep(name: str, layers: int) -> bool:
    if not name.startswith("layers."):
        return True
    return int(name.split(".")[1]) < layers


def main() -> None:
    src, dst = Path(sys.argv[1]), Path(sys.argv[2])
    layers = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(src, dst)
    raw = (src / "model.safetensors").read_bytes()
    header_len = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8 : 8 + header_len])
    data = raw[8 + header_len :]
    meta = header.pop("__metadata__")
    mcq = json.loads(meta["mcq"])
    mcq["tensors"] = {k: v for k, v in mcq["tensors"].items() if keep(k, layers)}
    meta["mcq"] = json.dumps(mcq)
    out_header, blobs, offset = {"__metadata__": meta}, [], 0
    for name, info in sorted(header.items(), key=lambda kv: kv[1]["data_offsets"][0]):
        if not keep(name, layers):
            continue
        begin, end = info["data_offsets"]
        blobs.append(data[begin:end])
        out_header[name] = dict(info, data_offsets=[offset, offset + end - begin])
        offset += end - begin
    text = json.dumps(out_header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    (dst / "model.safetensors").write_bytes(struct.pack("<Q", len(text)) + text + b"".join(blobs))
    config = json.loads((src / "config.json").read_text())
    config["num_hidden_layers"] = layers
    (dst / "config.json").write_text(json.dumps(config, indent=2))
    shrink_tokenizer(dst / "tokenizer.json")


def shrink_tokenizer(path: Path, merges_kept: int = 24, low_ids: int = 16) -> None:
    """Keeps ids < low_ids, the first merges and the tokens they use; the added tokens stay, so
    the ids in between become holes the reader pads ([PAD<i>]), as real vocabularies have."""
    tokenizer = json.loads(path.read_text())
    model = tokenizer["model"]
    vocab = model["vocab"]
    merges = model["merges"][:merges_kept]
    kept = {token for token, token_id in vocab.items() if token_id < low_ids}
    for merge in merges:
        left, right = merge if isinstance(merge, list) else merge.split(" ", 1)
        kept |= {left, right, left + right} & vocab.keys()
    model["vocab"] = {token: token_id for token, token_id in vocab.items() if token in kept}
    model["merges"] = merges
    path.write_text(json.dumps(tokenizer, ensure_ascii=False, separators=(",", ":")))


if __name__ == "__main__":
    main()
