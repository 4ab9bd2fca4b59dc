// rebox check, mmproj files (general.architecture clip): what llama.cpp v0.4.0's mtmd (clip.cpp's
// clip_model_loader) needs before it loads the projector: a projector type it knows, every key it
// reads with its exact type (gguf_get_val_* asserts the type and aborts the process), the tensors
// its loader requires for the projector, and, for a text model + mmproj pair, the text model's
// input embedding width equal to the projector's output width (mtmd_context's check).
#include <array>
#include <string_view>

#include "gguf_tools/check_context.hpp"
#include "gguf_tools/kv_text.hpp"

namespace rebox::check_detail {
namespace {

// clip-impl.h's PROJECTOR_TYPE_NAMES in llama.cpp v0.4.0.
constexpr std::array<std::string_view, 61> kKnownProjectors = {
    "mlp",
    "ldp",
    "ldpv2",
    "resampler",
    "adapter",
    "qwen2vl_merger",
    "qwen2.5vl_merger",
    "qwen3vl_merger",
    "step3vl",
    "gemma3",
    "gemma3nv",
    "gemma3na",
    "gemma4v",
    "gemma4a",
    "gemma4uv",
    "gemma4ua",
    "phi4",
    "idefics3",
    "pixtral",
    "ultravox",
    "internvl",
    "llama4",
    "qwen2a",
    "qwen3a",
    "glma",
    "qwen2.5o",
    "voxtral",
    "meralion",
    "musicflamingo",
    "lfm2",
    "kimivl",
    "paddleocr",
    "lightonocr",
    "cogvlm",
    "janus_pro",
    "dots_ocr",
    "dots3note_v",
    "dots3note_a",
    "deepseekocr",
    "deepseekocr2",
    "deepseek4v",
    "lfm2a",
    "glm4v",
    "youtuvl",
    "yasa2",
    "kimik25",
    "nemotron_v2_vl",
    "exaone4_5",
    "hunyuanvl",
    "minicpmv4_6",
    "granite_speech",
    "mimovl",
    "minimax_m3",
    "granite4_vision",
    "mimo_audio",
    "parakeet",
    "qwen3tts_spkenc",
    "qwen3tts_gen",
    "pockettts_spkenc",
    "pockettts_gen",
    "muse-glimmer",
};

struct ClipKey {
    std::string_view key;
    std::string_view type;  // gguf_type_spec_name's spelling
    bool required;          // clip.cpp's get_*(key, out, required)
};

// The keys clip_model_loader::load_hparams reads for a vision encoder, whatever the projector.
constexpr ClipKey kVisionKeys[] = {
    {"clip.has_vision_encoder", "BOOL", false},
    {"clip.use_gelu", "BOOL", false},
    {"clip.use_silu", "BOOL", false},
    {"clip.vision.embedding_length", "UINT32", true},
    {"clip.vision.attention.head_count", "UINT32", true},
    {"clip.vision.attention.head_count_kv", "UINT32", false},
    {"clip.vision.attention.head_dim", "UINT32", false},
    {"clip.vision.feed_forward_length", "UINT32", true},
    {"clip.vision.block_count", "UINT32", true},
    {"clip.vision.projection_dim", "UINT32", true},
    {"clip.vision.attention.layer_norm_epsilon", "FLOAT32", true},
    {"clip.vision.image_size", "UINT32", true},
    {"clip.vision.patch_size", "UINT32", true},
    {"clip.vision.image_mean", "ARRAY[FLOAT32]", false},
    {"clip.vision.image_std", "ARRAY[FLOAT32]", false},
    {"clip.vision.projector.scale_factor", "UINT32", false},
};

std::string projector_type(CheckContext& ctx) {
    for (std::string_view key : {"clip.projector_type", "clip.vision.projector_type"}) {
        const GgufValue* value = ctx.find(key);
        if (value == nullptr) continue;
        if (value->as_string() == nullptr) {
            ctx.finding(std::string(key),
                        "has type " + gguf_type_spec_name(*value) +
                            "; mtmd reads it as a STRING and aborts (write it so)");
            return {};
        }
        return *value->as_string();
    }
    ctx.finding("clip.projector_type",
                "missing; mtmd cannot tell the projector (write the converter's projector type)");
    return {};
}

void check_keys(CheckContext& ctx) {
    for (const ClipKey& k : kVisionKeys) {
        const GgufValue* value = ctx.find(k.key);
        if (value == nullptr) {
            if (k.required)
                ctx.finding(std::string(k.key),
                            "missing; mtmd refuses the file (\"Key not "
                            "found\"): write it as the converter does");
            continue;
        }
        const std::string actual = gguf_type_spec_name(*value);
        if (actual != k.type)
            ctx.finding(std::string(k.key), "has type " + actual + "; mtmd reads it as " +
                                                std::string(k.type) +
                                                " and aborts the process (write it so)");
    }
}

// clip_model_loader::load_tensors: per layer the attention output and the FFN up/down weights,
// plus the projector's own tensors (gemma3: its two; qwen2vl_merger / qwen2.5vl_merger /
// qwen3vl_merger: mm.0 and mm.2, weight and bias).
void check_projector_tensors(CheckContext& ctx, const std::string& projector,
                             std::vector<std::string> required) {
    const GgufValue* blocks = ctx.find("clip.vision.block_count");
    const auto n_layer = blocks != nullptr ? blocks->as_u32() : std::nullopt;
    for (uint32_t il = 0; n_layer && il < *n_layer; ++il)
        for (const char* part : {"attn_out", "ffn_up", "ffn_down"})
            required.push_back("v.blk." + std::to_string(il) + "." + part + ".weight");
    for (const std::string& name : required)
        if (ctx.find_tensor(name) == nullptr)
            ctx.finding(name, "missing; mtmd's " + projector +
                                  " projector requires it (\"unable to find "
                                  "tensor\"): convert the vision tower again");
}

}  // namespace

void check_mmproj(CheckContext& ctx) {
    const std::string projector = projector_type(ctx);
    check_keys(ctx);
    if (projector.empty()) return;
    bool known = false;
    for (std::string_view name : kKnownProjectors) known |= name == projector;
    if (!known)
        ctx.finding("clip.projector_type",
                    "is \"" + projector +
                        "\", a projector llama.cpp v0.4.0's mtmd does not know (\"unknown "
                        "projector type\"): use a newer llama.cpp or the converter's type");
    else if (projector == "gemma3")
        check_projector_tensors(ctx, projector,
                                {"mm.input_projection.weight", "mm.soft_emb_norm.weight"});
    else if (projector == "gemma4v")  // std_bias / std_scale and the clip bounds are optional
        check_projector_tensors(ctx, projector, {"mm.input_projection.weight"});
    else if (projector == "qwen2vl_merger" || projector == "qwen2.5vl_merger") {
        check_projector_tensors(ctx, projector,
                                {"mm.0.weight", "mm.0.bias", "mm.2.weight", "mm.2.bias"});
        // load_hparams: 2.5's window-attention period is required (get_u32 with required).
        const GgufValue* pattern = ctx.find("clip.vision.n_wa_pattern");
        if (projector == "qwen2.5vl_merger" && pattern == nullptr)
            ctx.finding("clip.vision.n_wa_pattern",
                        "missing; mtmd's qwen2.5vl_merger requires it (\"Key not found\"): write "
                        "fullatt_block_indexes[0] + 1 as the converter does");
        else if (pattern != nullptr && gguf_type_spec_name(*pattern) != "UINT32")
            ctx.finding("clip.vision.n_wa_pattern",
                        "has type " + gguf_type_spec_name(*pattern) +
                            "; mtmd reads it as UINT32 and aborts the process (write it so)");
    } else if (projector == "qwen3vl_merger") {
        check_projector_tensors(ctx, projector,
                                {"mm.0.weight", "mm.0.bias", "mm.2.weight", "mm.2.bias"});
        // load_tensors takes a layer's deepstack merger when v.deepstack.N.fc1.weight is there;
        // the graph then uses its norm and fc2 too.
        const GgufValue* blocks = ctx.find("clip.vision.block_count");
        const auto n_layer = blocks != nullptr ? blocks->as_u32() : std::nullopt;
        for (uint32_t il = 0; n_layer && il < *n_layer; ++il) {
            const std::string prefix = "v.deepstack." + std::to_string(il) + ".";
            if (ctx.find_tensor(prefix + "fc1.weight") == nullptr) continue;
            for (const char* part :
                 {"norm.weight", "norm.bias", "fc1.bias", "fc2.weight", "fc2.bias"})
                if (ctx.find_tensor(prefix + part) == nullptr)
                    ctx.finding(prefix + part,
                                "missing beside " + prefix +
                                    "fc1.weight; mtmd's qwen3vl_merger deepstack merger uses it: "
                                    "convert the vision tower again");
        }
    } else if (projector == "pixtral") {
        // mm.1 / mm.2 weights (biases optional) and the [IMG_BREAK] row; Mistral 3.1's patch
        // merger is optional, but its graph then multiplies by mm.input_norm.
        check_projector_tensors(ctx, projector,
                                {"mm.1.weight", "mm.2.weight", "v.token_embd.img_break"});
        if (ctx.find_tensor("mm.patch_merger.weight") != nullptr &&
            ctx.find_tensor("mm.input_norm.weight") == nullptr)
            ctx.finding("mm.input_norm.weight",
                        "missing beside mm.patch_merger.weight; mtmd's pixtral graph normalizes "
                        "with it before the merger: convert the vision tower again");
    } else
        ctx.warning("clip.projector_type",
                    "\"" + projector + "\": rebox does not check this projector's tensors");
}

// clip_model_loader::load_tensors: the layers holding a deepstack merger
// (v.deepstack.N.fc1.weight).
static uint64_t mmproj_deepstack_layers(const CheckContext& ctx) {
    const GgufValue* blocks = ctx.find("clip.vision.block_count");
    const auto n_layer = blocks != nullptr ? blocks->as_u32() : std::nullopt;
    uint64_t count = 0;
    for (uint32_t il = 0; n_layer && il < *n_layer; ++il)
        count += ctx.find_tensor("v.deepstack." + std::to_string(il) + ".fc1.weight") != nullptr;
    return count;
}

std::optional<uint64_t> mmproj_output_width(const CheckContext& ctx) {
    // clip_n_mmproj_embd: gemma3 takes mm.input_projection's ne[0], gemma4v (a Linear weight,
    // [vision, text]) its ne[1]; qwen2vl_merger and qwen2.5vl_merger mm.2.bias's ne[0].
    const GgufValue* type = ctx.find("clip.projector_type");
    if (type == nullptr) type = ctx.find("clip.vision.projector_type");
    const std::string* name = type != nullptr ? type->as_string() : nullptr;
    if (const auto* proj = ctx.find_tensor("mm.input_projection.weight"); proj != nullptr)
        return static_cast<uint64_t>(
            proj->info->ne.at(name != nullptr && *name == "gemma4v" ? 1 : 0));
    if (name != nullptr && (*name == "qwen2vl_merger" || *name == "qwen2.5vl_merger"))
        if (const auto* bias = ctx.find_tensor("mm.2.bias"); bias != nullptr)
            return static_cast<uint64_t>(bias->info->ne.at(0));
    // pixtral: mm.2.weight's ne[1] (a Linear weight, [text, text]).
    if (name != nullptr && *name == "pixtral")
        if (const auto* proj = ctx.find_tensor("mm.2.weight"); proj != nullptr)
            return static_cast<uint64_t>(proj->info->ne.at(1));
    // qwen3vl_merger: the main path and one per deepstack merger, each mm.2.bias's width.
    if (name != nullptr && *name == "qwen3vl_merger")
        if (const auto* bias = ctx.find_tensor("mm.2.bias"); bias != nullptr)
            return static_cast<uint64_t>(bias->info->ne.at(0)) * (1 + mmproj_deepstack_layers(ctx));
    return std::nullopt;
}

void check_pair_width(CheckContext& text, const CheckContext& mmproj) {
    const std::string arch = text.arch();
    const GgufValue* embd = text.find(arch + ".embedding_length");
    const auto n_embd = embd != nullptr ? embd->as_u32() : std::nullopt;
    const auto width = mmproj_output_width(mmproj);
    if (!n_embd || !width) return;
    // llama_model_n_embd_inp: n_embd, times 1 + n_deepstack_layers for qwen3vl.
    uint64_t n_embd_inp = *n_embd;
    const GgufValue* deep = text.find(arch + ".n_deepstack_layers");
    if (deep && deep->as_u32()) n_embd_inp *= 1 + *deep->as_u32();
    // A deepstack projector beside a text model without the count (llama.cpp's loader reads it
    // as 0): one finding naming the key rather than the width it leads to.
    if (const uint64_t merged = mmproj_deepstack_layers(mmproj); merged > 0 && deep == nullptr) {
        text.finding(
            arch + ".n_deepstack_layers",
            "missing, but the mmproj " + mmproj.head().display_name() + " has " +
                std::to_string(merged) +
                " deepstack mergers; llama.cpp reads 0 and mtmd refuses the pair (\"mismatch "
                "between text model and mmproj\"): write the length of "
                "vision_config.deepstack_visual_indexes as the converter does");
        return;
    }
    if (n_embd_inp != *width)
        text.finding(arch + ".embedding_length",
                     "is " + std::to_string(n_embd_inp) + " but the mmproj " +
                         mmproj.head().display_name() + " projects to " + std::to_string(*width) +
                         "; mtmd refuses the pair (\"mismatch between text model and mmproj\"): "
                         "use the mmproj converted with this text model");
}

}  // namespace rebox::check_detail
