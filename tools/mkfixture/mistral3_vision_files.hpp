// Mistral 3 with its Pixtral vision tower (--arch mistral3 --multimodal): the text model under
// "language_model.model." as Mistral-Small-3.1-24B-Instruct-2503 publishes it (model_plan.cpp),
// plus a whole tiny tower and projector (float in every format, as the quantizers leave
// vision_tower / multi_modal_projector unquantized) with that checkpoint's tensor names
// (vision_tower.patch_conv, vision_tower.transformer.layers.N.attention.q_proj, ...,
// multi_modal_projector.patch_merger.merging_layer), its config.json keys (a Mistral3Config with a
// text_config of model_type mistral and a pixtral vision_config), its preprocessor_config.json
// (PixtralImageProcessor) and processor_config.json (PixtralProcessor), and [IMG_BREAK] as an added
// token of the tokenizer.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "model_plan.hpp"

namespace mkfixture {

// The tower: patch_conv [32, 3, 14, 14], ln_pre, 3 layers (attention_norm, q/k/v/o [32, 32],
// ffn_norm, gate/up [64, 32], down [32, 64]; 3 so that gguf-py's map reaches linear_2), the
// projector (norm, patch_merger [32, 128], linear_1 [text_hidden, 32] or projector_width wide,
// linear_2 [text_hidden, text_hidden]); projector_input 0: the tower's width.
// split_layout: the names under "model." (transformers >= 4.52's save_pretrained).
void append_pixtral_tower(std::vector<PlanUnit>& units, int64_t text_hidden,
                          int64_t projector_input, bool split_layout = false);
// config.json (Mistral-Small-3.1-24B-Instruct-2503's keys at tiny sizes), preprocessor_config.json
// and processor_config.json.
void write_mistral3_vision_config(const std::filesystem::path& out_dir, const Dims& d, bool tied,
                                  int64_t bos_id, int64_t eos_id, bool split_layout = false);
// Appends [IMG_BREAK] to tokenizer.json's added_tokens and tokenizer_config.json's
// added_tokens_decoder with the next id; returns the new token count.
int64_t add_img_break_token(const std::filesystem::path& out_dir, int64_t token_count);

}  // namespace mkfixture
