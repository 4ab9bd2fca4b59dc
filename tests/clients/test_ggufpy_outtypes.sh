#!/usr/bin/env bash
# gguf-py (llama.cpp's GGUFReader + gguf.quants.dequantize) checks the output type policy on tiny
# fixtures, bit for bit against values it computes from the source itself (ggufpy_dequant.py):
# an MLX mixed 4/5-bit checkpoint converts by default to 13 Q4_1 + 2 Q5_1 tensors; a 4/6-bit one
# with --allow-lossless-fallback (its 6-bit tensors as exact F16/F32 copies); one with an
# unquantized module keeps it BF16 beside 14 Q4_1; a plain BF16
# checkpoint keeps 15 BF16 tensors (byte-equal to the source) and 9 F32 norms, and its --outtype
# f32 twin holds 24 F32 tensors.
# Usage: bash tests/clients/test_ggufpy_outtypes.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/gguf_py.sh"
clients_init ggufpy_outtypes "${1:-}"
ggufpy_setup "$BUILD"

"$MKFIXTURE" "$WORK/mlx45" --preset tiny --format mlx --recipe mixed_4_5 --force
"$REBOX" convert "$WORK/mlx45" -o "$WORK/mlx45.gguf" --quiet
ggufpy "$CLIENTS_DIR/ggufpy_dequant.py" "$WORK/mlx45" "$WORK/mlx45.gguf" --expect Q4_1=13 --expect Q5_1=2

"$MKFIXTURE" "$WORK/mlx46" --preset tiny --format mlx --recipe mixed_4_6 --force
"$REBOX" convert "$WORK/mlx46" -o "$WORK/mlx46.gguf" --quiet --allow-lossless-fallback
ggufpy "$CLIENTS_DIR/ggufpy_dequant.py" "$WORK/mlx46" "$WORK/mlx46.gguf" --expect Q4_1=13 --expect Q5_1=0

# An MLX checkpoint with one unquantized module (BF16 weight, listed as false) beside 4-bit ones.
"$MKFIXTURE" "$WORK/mlxfloat" --preset tiny --format mlx --recipe uniform4_float_down0 --force
"$REBOX" convert "$WORK/mlxfloat" -o "$WORK/mlxfloat.gguf" --quiet
ggufpy "$CLIENTS_DIR/ggufpy_dequant.py" "$WORK/mlxfloat" "$WORK/mlxfloat.gguf" --expect Q4_1=14 --expect BF16=1

"$MKFIXTURE" "$WORK/bf16" --preset tiny --format float --force
"$REBOX" convert "$WORK/bf16" -o "$WORK/bf16.gguf" --quiet
ggufpy "$CLIENTS_DIR/ggufpy_dequant.py" "$WORK/bf16" "$WORK/bf16.gguf" --expect BF16=15 --expect F32=9
"$REBOX" convert "$WORK/bf16" -o "$WORK/bf16-f32.gguf" --quiet --outtype f32
ggufpy "$CLIENTS_DIR/ggufpy_dequant.py" "$WORK/bf16" "$WORK/bf16-f32.gguf" --expect F32=24
echo "PASS test_ggufpy_outtypes ($(clients_elapsed))"
