// verify's qwen3vl (Qwen3VLForConditionalGeneration; converter class Qwen3VLTextModel, chosen by
// architectures[0], on Qwen3Model): qwen3's decoder shapes (per-head q/k norms, no biases), no
// transform, TextModel's KVs in its order (key/value length only from a head_dim in config.json),
// rope.dimension_sections = the rope parameters' mrope_section (rope_parameters, else
// rope_scaling) padded to 4 with zeros, absent without one, and n_deepstack_layers = the number
// of vision_config.deepstack_visual_indexes (transformers' Qwen3VLVisionConfig default [8, 16, 24]
// when the key is missing), written even when 0. An NVFP4 factor is applied on attention and the
// output (src/models/qwen3vl.cpp: its feed-forward takes none).
#include "rebox/error.hpp"
#include "verify/arch/expected_shapes.hpp"
#include "verify/arch/ref_arch.hpp"
#include "verify/metadata/kv_checker.hpp"

namespace rebox::verify_ref::detail {
namespace qwen3vl_ref {

constexpr RefKv kQwen3vlKvs[] = {RefKv::rope_freq_base, RefKv::rms_epsilon,
                                 RefKv::head_dim_lengths_given};

bool qwen3vl_selected(const nlohmann::json& root, std::string_view) {
    return ref_first_architecture(root) == "Qwen3VLForConditionalGeneration";
}

void qwen3vl_fields(const nlohmann::json& root, RefConfig& c) {
    c.mrope_section.clear();
    const auto params = root.find("rope_parameters");
    const char* name =
        params != root.end() && !params->is_null() ? "rope_parameters" : "rope_scaling";
    if (const auto block = root.find(name); block != root.end() && block->is_object()) {
        if (const auto s = block->find("mrope_section"); s != block->end()) {
            const std::string field = std::string(name) + ".mrope_section";
            if (!s->is_array() || s->size() > 4)
                throw_input_error("config.json", field, "is " + s->dump(), "up to 4 whole numbers");
            for (const nlohmann::json& n : *s) {
                if (!n.is_number_integer() || n.get<int64_t>() < 0 || n.get<int64_t>() > 65536)
                    throw_input_error("config.json", field, "holds " + n.dump(), "whole numbers");
                c.mrope_section.push_back(n.get<int64_t>());
            }
        }
    }
    c.deepstack_layers = 3;  // Qwen3VLVisionConfig: deepstack_visual_indexes=[8, 16, 24]
    const auto vision = root.find("vision_config");
    if (vision == root.end() || !vision->is_object()) return;
    const auto indexes = vision->find("deepstack_visual_indexes");
    if (indexes == vision->end()) return;
    if (!indexes->is_array() || indexes->size() > 256)
        throw_input_error("config.json", "vision_config.deepstack_visual_indexes",
                          "is " + indexes->dump(), "a list of vision layer indexes");
    c.deepstack_layers = static_cast<uint32_t>(indexes->size());
}

void check_qwen3vl_kvs(KvChecker& kv, const std::string& arch, const RefConfig& config) {
    if (config.mrope_section.empty()) {
        kv.expect_absent(arch + ".rope.dimension_sections", "config.json has no mrope_section");
    } else {
        std::vector<int64_t> sections = config.mrope_section;
        sections.resize(4, 0);
        check_numbers(kv, arch + ".rope.dimension_sections", GgufType::INT32, sections);
    }
    kv.expect_u32(arch + ".n_deepstack_layers", config.deepstack_layers);
}

bool qwen3vlmoe_selected(const nlohmann::json& root, std::string_view) {
    return ref_first_architecture(root) == "Qwen3VLMoeForConditionalGeneration";
}

// qwen3vlmoe's MoE feed-forward, HF order: the transposed fused experts under the names verify
// gives their parts ([E, F, hidden] for gate / up, [E, hidden, F] for down), else the decoders'
// MoE shapes (router, per-expert tensors).
std::optional<std::vector<int64_t>> qwen3vlmoe_shape(const RefConfig& c, std::string_view name) {
    uint64_t layer = 0;
    std::string_view rest;
    if (!ref_layer(name, &layer, &rest)) return std::nullopt;
    const int64_t hidden = c.hidden_size, experts = c.num_experts;
    const int64_t moe_ffn = c.moe_intermediate_size.value_or(0);
    if (rest == "mlp.experts.gate_proj.weight" || rest == "mlp.experts.up_proj.weight")
        return std::vector<int64_t>{experts, moe_ffn, hidden};
    if (rest == "mlp.experts.down_proj.weight")
        return std::vector<int64_t>{experts, hidden, moe_ffn};
    if (rest == "mlp.gate_proj.weight" || rest == "mlp.up_proj.weight" ||
        rest == "mlp.down_proj.weight")
        return std::vector<int64_t>{0};  // a dense feed-forward: a shape no source has
    return expected_moe_shape(c, rest);
}

}  // namespace qwen3vl_ref

const RefArch& ref_qwen3vl() {
    using namespace qwen3vl_ref;
    static constexpr std::string_view kModelTypes[] = {"qwen3_vl"};
    static const RefArch kArch{.gguf_arch = "qwen3vl",
                               .model_types = kModelTypes,
                               .selects = qwen3vl_selected,
                               .finish_config = qwen3vl_fields,
                               .kvs = kQwen3vlKvs,
                               .check_kvs = check_qwen3vl_kvs,
                               .scale_roles = kScaleAttention | kScaleOutput};
    return kArch;
}

// verify's qwen3vlmoe (Qwen3VLMoeForConditionalGeneration; Qwen3VLMoeTextModel on Qwen3MoeModel,
// src/models/qwen3vlmoe.cpp): qwen3vl's attention, KVs and sections, and in every layer the
// router and experts, fused and transposed as transformers stores them (verify's own split,
// sources/fused_experts_index.hpp). An NVFP4 factor only on attention and the output.
const RefArch& ref_qwen3vlmoe() {
    using namespace qwen3vl_ref;
    static constexpr std::string_view kModelTypes[] = {"qwen3_vl_moe"};
    static const RefArch kArch{.gguf_arch = "qwen3vlmoe",
                               .model_types = kModelTypes,
                               .selects = qwen3vlmoe_selected,
                               .finish_config = qwen3vl_fields,
                               .shape = qwen3vlmoe_shape,
                               .kvs = kQwen3vlKvs,
                               .check_kvs = check_qwen3vl_kvs,
                               .scale_roles = kScaleAttention | kScaleOutput,
                               .fused_experts = true,
                               .fused_experts_transposed = true};
    return kArch;
}

}  // namespace rebox::verify_ref::detail
