#!/usr/bin/env bash
# Counts, per architecture, the product files under src/ (outside src/verify) that name its
# config.json model_type or its GGUF architecture string as a quoted literal (issue 36's
# acceptance: its file in src/arch/ and at most one registry list). Run by hand:
#   bash tests/arch/name_count.sh [--files]
set -euo pipefail
cd "$(dirname "$0")/../.."
declare -A names=(
  [llama]='"llama" "mistral"'
  [mixtral]='"mixtral"'
  [qwen2]='"qwen2"'
  [qwen2moe]='"qwen2_moe" "qwen2moe"'
  [qwen3]='"qwen3"'
  [qwen3moe]='"qwen3_moe" "qwen3moe"'
  [phi3]='"phi3"'
  [gemma]='"gemma"'
  [gemma2]='"gemma2"'
  [gemma3]='"gemma3" "gemma3_text"'
  [gemma-embedding]='"gemma-embedding" "Gemma3TextModel"'
  [bert]='"bert"'
  [xlm-roberta]='"xlm-roberta"'
  [nomic-bert]='"nomic_bert" "nomic-bert"'
  [gpt-oss]='"gpt_oss" "gpt-oss"'
  [modern-bert]='"modernbert" "modern-bert"'
  [seed_oss]='"seed_oss"'
  [olmo2]='"olmo2" "olmo3"'
  [smollm3]='"smollm3"'
  [mistral3]='"mistral3" "ministral3" "Mistral3ForConditionalGeneration"'
  [apertus]='"apertus"'
  [qwen35]='"qwen35" "qwen3_5" "qwen3_5_text"'
  [qwen35moe]='"qwen35moe" "qwen3_5_moe" "qwen3_5_moe_text"'
  [qwen3next]='"qwen3next" "qwen3_next"'
  [glm4moe]='"glm4moe" "glm4_moe"'
  [gemma4]='"gemma4" "gemma4_text" "Gemma4ForConditionalGeneration" "gemma4v"'
  [deepseek2]='"deepseek2" "deepseek_v3" "deepseek_v2" "kimi_k2"'
  [qwen2vl]='"qwen2vl" "qwen2_vl" "qwen2_5_vl" "Qwen2VLForConditionalGeneration" "Qwen2_5_VLForConditionalGeneration" "qwen2vl_merger" "qwen2.5vl_merger"'
  [qwen3vl]='"qwen3vl" "qwen3_vl" "Qwen3VLForConditionalGeneration" "qwen3vl_merger"'
  [qwen3vlmoe]='"qwen3vlmoe" "qwen3_vl_moe" "Qwen3VLMoeForConditionalGeneration"'
  [nemotron_h]='"nemotron_h" "nemotron_h_moe"'
)
for arch in $(printf '%s\n' "${!names[@]}" | sort); do
  args=()
  for n in ${names[$arch]}; do args+=(-e "$n"); done
  files=$(grep -rlF "${args[@]}" src --include='*.cpp' --include='*.hpp' | grep -v '^src/verify/' | sort || true)
  printf '%-16s %2d' "$arch" "$(printf '%s' "$files" | grep -c . || true)"
  [[ ${1:-} == --files ]] && printf '  %s' $files
  printf '\n'
done
