// verify's qwen2vl (Qwen2VLForConditionalGeneration, Qwen2_5_VLForConditionalGeneration; converter
// class Qwen2VLModel, chosen by architectures[0]): qwen2's decoder shapes (q/k/v biases), no
// transform, TextModel's KVs in its order (key/value length only from a head_dim in config.json)
// and rope.dimension_sections = the rope parameters' mrope_section (rope_parameters, else
// rope_scaling) padded to 4 with zeros, absent without one; transformers' config classes read the
// published rope type "mrope" as "default". An NVFP4 factor is applied on attention and the output
// (src/models/qwen2vl.cpp, as qwen2's graph).
#include "rebox/error.hpp"
#include "verify/arch/ref_arch.hpp"
#include "verify/metadata/kv_checker.hpp"

namespace rebox::verify_ref::detail {
namespace qwen2vl_ref {

constexpr RefKv kQwen2vlKvs[] = {RefKv::rope_freq_base, RefKv::rms_epsilon,
                                 RefKv::head_dim_lengths_given};

bool qwen2vl_selected(const nlohmann::json& root, std::string_view) {
    const std::string_view first = ref_first_architecture(root);
    return first == "Qwen2VLForConditionalGeneration" ||
           first == "Qwen2_5_VLForConditionalGeneration" || first == "Qwen2VLModel";
}

const char* rope_block(const nlohmann::json& root) {
    const auto params = root.find("rope_parameters");
    return params != root.end() && !params->is_null() ? "rope_parameters" : "rope_scaling";
}

void mrope_is_default(nlohmann::json& root) {
    const auto block = root.find(rope_block(root));
    if (block == root.end() || !block->is_object()) return;
    for (const char* key : {"type", "rope_type"})
        if (const auto it = block->find(key); it != block->end() && *it == "mrope") *it = "default";
}

void qwen2vl_sections(const nlohmann::json& root, RefConfig& c) {
    c.mrope_section.clear();
    const char* name = rope_block(root);
    const auto block = root.find(name);
    if (block == root.end() || !block->is_object()) return;
    const auto s = block->find("mrope_section");
    if (s == block->end()) return;
    const std::string field = std::string(name) + ".mrope_section";
    if (!s->is_array() || s->size() > 4)
        throw_input_error("config.json", field, "is " + s->dump(), "up to 4 whole numbers");
    for (const nlohmann::json& n : *s) {
        if (!n.is_number_integer() || n.get<int64_t>() < 0 || n.get<int64_t>() > 65536)
            throw_input_error("config.json", field, "holds " + n.dump(), "whole numbers");
        c.mrope_section.push_back(n.get<int64_t>());
    }
}

void check_sections(KvChecker& kv, const std::string& arch, const RefConfig& config) {
    if (config.mrope_section.empty()) {
        kv.expect_absent(arch + ".rope.dimension_sections", "config.json has no mrope_section");
        return;
    }
    std::vector<int64_t> sections = config.mrope_section;
    sections.resize(4, 0);
    check_numbers(kv, arch + ".rope.dimension_sections", GgufType::INT32, sections);
}

}  // namespace qwen2vl_ref

const RefArch& ref_qwen2vl() {
    using namespace qwen2vl_ref;
    static constexpr std::string_view kModelTypes[] = {"qwen2_vl", "qwen2_5_vl"};
    static const RefArch kArch{.gguf_arch = "qwen2vl",
                               .model_types = kModelTypes,
                               .selects = qwen2vl_selected,
                               .prepare_config = mrope_is_default,
                               .finish_config = qwen2vl_sections,
                               .kvs = kQwen2vlKvs,
                               .check_kvs = check_sections,
                               .scale_roles = kScaleAttention | kScaleOutput};
    return kArch;
}

}  // namespace rebox::verify_ref::detail
