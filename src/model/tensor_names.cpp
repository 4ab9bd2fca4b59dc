// HF tensor names <-> llama.cpp GGUF tensor names for qwen3 / qwen2 / llama (notes/gguf.md §4.1).
// Only tensors the llama.cpp loader of that architecture loads are mapped; anything else is
// nullopt.
#include "rebox/model/tensor_names.hpp"

#include <array>
#include <charconv>
#include <cstdint>

namespace rebox {
namespace {

constexpr std::string_view kModelPrefix = "model.";
constexpr std::string_view kHfLayerPrefix = "layers.";
constexpr std::string_view kGgufLayerPrefix = "blk.";

enum ArchMask : unsigned { QWEN3 = 1, QWEN2 = 2, LLAMA = 4, ALL = 7 };

struct NamePair {
    std::string_view hf;    // without the .weight/.bias suffix
    std::string_view gguf;  // without the .weight/.bias suffix
    unsigned weight_archs;  // architectures that load NAME.weight
    unsigned bias_archs;    // architectures that load NAME.bias (optional tensors in llama.cpp)
};

// Model-wide tensors (no layer index).
constexpr std::array<NamePair, 3> kGlobalNames{{
    {"embed_tokens", "token_embd", ALL, 0},
    {"norm", "output_norm", ALL, 0},
    {"lm_head", "output", ALL, QWEN2},  // qwen2.cpp loads an optional output.bias
}};

// Per-layer tensors: "layers.{i}.HF" <-> "blk.{i}.GGUF". q/k/v biases are optional for all three
// (create_tensor_qkv); llama also loads optional attn_output and ffn biases.
constexpr std::array<NamePair, 11> kLayerNames{{
    {"input_layernorm", "attn_norm", ALL, 0},
    {"self_attn.q_proj", "attn_q", ALL, ALL},
    {"self_attn.k_proj", "attn_k", ALL, ALL},
    {"self_attn.v_proj", "attn_v", ALL, ALL},
    {"self_attn.o_proj", "attn_output", ALL, LLAMA},
    {"self_attn.q_norm", "attn_q_norm", QWEN3, 0},
    {"self_attn.k_norm", "attn_k_norm", QWEN3, 0},
    {"post_attention_layernorm", "ffn_norm", ALL, 0},
    {"mlp.gate_proj", "ffn_gate", ALL, LLAMA},
    {"mlp.up_proj", "ffn_up", ALL, LLAMA},
    {"mlp.down_proj", "ffn_down", ALL, LLAMA},
}};

unsigned arch_bit(std::string_view arch) {
    if (arch == "qwen3") return QWEN3;
    if (arch == "qwen2") return QWEN2;
    if (arch == "llama") return LLAMA;
    return 0;
}

// Splits "X.weight" / "X.bias" into X and the suffix ("weight"/"bias"); false otherwise.
bool split_suffix(std::string_view name, std::string_view& stem, std::string_view& suffix) {
    for (std::string_view candidate : {std::string_view("weight"), std::string_view("bias")}) {
        if (name.size() > candidate.size() + 1 && name.ends_with(candidate) &&
            name[name.size() - candidate.size() - 1] == '.') {
            stem = name.substr(0, name.size() - candidate.size() - 1);
            suffix = candidate;
            return true;
        }
    }
    return false;
}

// Parses "{i}.REST" where {i} is a plain decimal (no sign, no leading zeros) fitting uint32.
bool split_layer_index(std::string_view text, std::string_view& index, std::string_view& rest) {
    const size_t dot = text.find('.');
    if (dot == std::string_view::npos || dot == 0) return false;
    index = text.substr(0, dot);
    if (index.size() > 1 && index[0] == '0') return false;
    uint32_t value = 0;
    const auto [end, ec] = std::from_chars(index.data(), index.data() + index.size(), value);
    if (ec != std::errc() || end != index.data() + index.size()) return false;
    rest = text.substr(dot + 1);
    return !rest.empty();
}

bool arch_loads(const NamePair& pair, unsigned bit, std::string_view suffix) {
    return ((suffix == "weight" ? pair.weight_archs : pair.bias_archs) & bit) != 0;
}

// Maps STEM.SUFFIX through the table (from one side to the other), with an optional layer index.
std::optional<std::string> map_name(std::string_view arch, std::string_view name, bool to_gguf) {
    const unsigned bit = arch_bit(arch);
    if (bit == 0) return std::nullopt;
    std::string_view stem, suffix;
    if (!split_suffix(name, stem, suffix)) return std::nullopt;

    const std::string_view from_layer = to_gguf ? kHfLayerPrefix : kGgufLayerPrefix;
    const std::string_view to_layer = to_gguf ? kGgufLayerPrefix : kHfLayerPrefix;
    auto from = [to_gguf](const NamePair& pair) { return to_gguf ? pair.hf : pair.gguf; };
    auto to = [to_gguf](const NamePair& pair) { return to_gguf ? pair.gguf : pair.hf; };

    if (stem.starts_with(from_layer)) {
        std::string_view index, rest;
        if (!split_layer_index(stem.substr(from_layer.size()), index, rest)) return std::nullopt;
        for (const NamePair& pair : kLayerNames) {
            if (from(pair) == rest && arch_loads(pair, bit, suffix)) {
                std::string out;
                out.reserve(to_layer.size() + index.size() + to(pair).size() + suffix.size() + 2);
                out.append(to_layer).append(index).append(".").append(to(pair)).append(".").append(
                    suffix);
                return out;
            }
        }
        return std::nullopt;
    }
    for (const NamePair& pair : kGlobalNames) {
        if (from(pair) == stem && arch_loads(pair, bit, suffix))
            return std::string(to(pair)) + "." + std::string(suffix);
    }
    return std::nullopt;
}

}  // namespace

std::string_view strip_model_prefix(std::string_view hf_name) {
    return hf_name.starts_with(kModelPrefix) ? hf_name.substr(kModelPrefix.size()) : hf_name;
}

std::optional<std::string> gguf_tensor_name(std::string_view arch, std::string_view hf_name) {
    return map_name(arch, strip_model_prefix(hf_name), /*to_gguf=*/true);
}

std::optional<std::string> hf_tensor_name(std::string_view arch, std::string_view gguf_name) {
    return map_name(arch, gguf_name, /*to_gguf=*/false);
}

bool is_supported_arch(std::string_view model_type) { return arch_bit(model_type) != 0; }

}  // namespace rebox
