// gemma3 (Gemma 3 text; config model_type gemma3_text, or a multimodal gemma3 checkpoint whose
// text model sits under "language_model." with its numbers in text_config): llama.cpp's gemma3
// graph (docs/architectures.md "gemma"). Every RMSNorm weight, q_norm/k_norm included, is written
// as weight + 1 in F32 (Gemma3Model.norm_shift); token_embd keeps only the first vocab_size rows;
// output.weight is optional (tied by default). The vision tower and the multimodal projector are
// not part of the text GGUF (llama.cpp's converter writes them to a separate mmproj file): they
// are left out with a note.
#include "arch_tables.hpp"

namespace rebox::arch::detail {
namespace gemma3_record {

constexpr std::string_view kModelTypes[] = {"gemma3_text", "gemma3"};
constexpr const auto& kFirst = kGemma3First;
constexpr const auto& kLayer = kGemma3Layer;
constexpr TensorSpec kLast[] = {kGemmaOutputNorm, output_row()};
// TextModel.set_gguf_parameters then Gemma3Model's additions (rope.freq_base is the global
// layers' theta; rope.freq_base_swa the local layers' rope_local_base_freq).
constexpr ArchKv kKvs[] = {
    ArchKv::block_count,         ArchKv::context_length,     ArchKv::embedding_length,
    ArchKv::feed_forward_length, ArchKv::head_count,         ArchKv::head_count_kv,
    ArchKv::rope_freq_base,      ArchKv::rope_freq_base_swa, ArchKv::rms_epsilon,
    ArchKv::key_length,          ArchKv::value_length,       ArchKv::final_logit_softcapping,
    ArchKv::sliding_window,
};
constexpr std::string_view kLeftOut[] = {"vision_tower.", "multi_modal_projector."};
// transformers' Gemma3TextConfig defaults for the fields Gemma 3's own configs leave out (the
// multimodal ones give text_config little more than hidden_size, layers and intermediate_size).
constexpr ConfigDefault kDefaults[] = {
    {"vocab_size", "262208"},
    {"num_attention_heads", "8"},
    {"num_key_value_heads", "4"},
    {"head_dim", "256"},
    {"max_position_embeddings", "131072"},
    {"rms_norm_eps", "1e-06"},
    {"rope_theta", "1000000.0"},
    {"rope_local_base_freq", "10000.0"},
    {"sliding_window", "4096"},
    {"sliding_window_pattern", "6"},
    {"tie_word_embeddings", "true"},
};

constexpr Architecture kGemma3 = [] {
    Architecture a{"gemma3", kModelTypes, kFirst, kLayer, kLast, kKvs, {}, kLeftOut, kDefaults};
    a.nvfp4_scales = {.output = true};
    return a;
}();

}  // namespace gemma3_record

const Architecture& gemma3_architecture() { return gemma3_record::kGemma3; }

}  // namespace rebox::arch::detail
