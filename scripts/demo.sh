#!/usr/bin/env bash
# The main job on a small example the project makes itself: generate a tiny mixed 3/4-bit mcq-v1
# checkpoint with a byte-level BPE tokenizer, convert it to GGUF Q4_1 (verified on the way), and show
# the result with `rebox inspect` and an independent `rebox verify`, whose verdict is the last line.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --tools-only
rm -rf example && mkdir -p example
./build/rebox-mkfixture example/tiny-mcq --preset tiny --tokenizer small
./build/rebox convert example/tiny-mcq -o example/tiny-q4_1.gguf
# Through a file, not a pipe: under pipefail, `inspect | head` dies of SIGPIPE once head has its lines.
./build/rebox inspect example/tiny-q4_1.gguf >example/tiny-q4_1.inspect.txt
head -n 40 example/tiny-q4_1.inspect.txt
echo "... (whole listing: example/tiny-q4_1.inspect.txt)"
echo
echo "Independent read-back (rebox verify example/tiny-mcq example/tiny-q4_1.gguf):"
./build/rebox verify example/tiny-mcq example/tiny-q4_1.gguf
