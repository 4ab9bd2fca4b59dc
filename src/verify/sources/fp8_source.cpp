// ref_e4m3 / expected_from_fp8 / fp8_layout (fp8_source.hpp): E4M3 decoded by assembling the
// binary64 bit pattern (normal) or by scaling the mantissa (subnormal), the block's scale widened
// exactly, their product rounded once to binary32 and checked.
#include "verify/sources/fp8_source.hpp"

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "rebox/error.hpp"
#include "verify/sources/prequant_config.hpp"
#include "verify/values/ref_half.hpp"

namespace rebox::verify_ref {

double ref_e4m3(uint8_t byte) {
    const uint64_t sign = byte >> 7, field = (byte >> 3) & 0xfu, mantissa = byte & 0x7u;
    if (field == 0xf && mantissa == 0x7) return std::numeric_limits<double>::quiet_NaN();
    double magnitude = 0;
    if (field == 0) {  // subnormal: mantissa/8 * 2^(1 - 7)
        magnitude = static_cast<double>(mantissa) / 512.0;
    } else {  // binary64 with exponent field - 7 and the 3 mantissa bits on top of its 52
        const uint64_t bits = (field - 7 + 1023) << 52 | mantissa << 49;
        std::memcpy(&magnitude, &bits, sizeof magnitude);
    }
    return sign ? -magnitude : magnitude;
}

void expected_from_fp8(const Fp8Source& source, uint64_t first, std::span<float> out,
                       PrequantInexact& inexact) {
    for (size_t i = 0; i < out.size(); ++i) {
        const uint64_t index = first + i;
        const uint64_t row = index / source.cols, column = index % source.cols;
        const double scale = stored_scale(
            source.scale_dtype, source.scales,
            (row / source.block_rows) * source.scale_cols + column / source.block_cols);
        const double value = ref_e4m3(source.codes[index]) * scale;
        const bool in_range = std::fabs(value) <= std::numeric_limits<float>::max();
        out[i] = in_range || !std::isfinite(value)
                     ? static_cast<float>(value)
                     : std::copysign(std::numeric_limits<float>::infinity(),
                                     static_cast<float>(value > 0 ? 1 : -1));
        if (source.rounded_to) {  // the lossy path: rounded as the converter rounds
            if (*source.rounded_to == SourceFloat::F16) out[i] = ref_round_to_half(out[i]);
            if (*source.rounded_to == SourceFloat::BF16) out[i] = ref_round_to_bf16(out[i]);
            continue;
        }
        if (!(static_cast<double>(out[i]) == value) && index < inexact.index) {
            inexact.index = index;
            inexact.value = value;
        }
    }
}

namespace {

// The nearer of the two widened neighbours lo < |value| < hi (bits lo_bits, lo_bits + 1), ties to
// the even bits; exact in double.
float nearer(double magnitude, float lo, float hi, uint32_t lo_bits) {
    const double below = magnitude - lo, above = hi - magnitude;
    if (below < above || (below == above && lo_bits % 2 == 0)) return lo;
    return hi;
}

}  // namespace

float ref_round_to_half(float value) {
    if (!std::isfinite(value)) return value;
    const double magnitude = std::fabs(static_cast<double>(value));
    // 65520 = (65504 + 65536) / 2: at or past it the nearest is infinity (65504's bits are odd).
    float rounded = std::numeric_limits<float>::infinity();
    if (magnitude < 65520.0) {
        uint32_t lo = 0, hi = 0x7bff;  // largest bits whose value <= magnitude
        while (lo < hi) {
            const uint32_t mid = (lo + hi + 1) / 2;
            if (half_bits_to_float(static_cast<uint16_t>(mid)) <= magnitude)
                lo = mid;
            else
                hi = mid - 1;
        }
        const float at = half_bits_to_float(static_cast<uint16_t>(lo));
        rounded =
            at == magnitude ? at
            : lo == 0x7bff
                ? nearer(magnitude, at, 65536.0f, lo) == at ? at
                                                            : std::numeric_limits<float>::infinity()
                : nearer(magnitude, at, half_bits_to_float(static_cast<uint16_t>(lo + 1)), lo);
    }
    return std::signbit(value) ? -rounded : rounded;
}

float ref_round_to_bf16(float value) {
    if (!std::isfinite(value)) return value;
    const uint32_t bits = float_bits(std::fabs(value));
    const float lo = float_from_bits(bits & 0xffff0000u);
    const uint32_t hi_bits = (bits & 0xffff0000u) + 0x10000u;
    float rounded = lo;
    if (lo != std::fabs(value)) {
        // Past the largest bfloat16 the next step is 2^128: nearer to it means infinity.
        const bool overflow = hi_bits == 0x7f800000u;
        const double hi = overflow ? std::ldexp(1.0, 128) : double(float_from_bits(hi_bits));
        const double magnitude = std::fabs(static_cast<double>(value));
        const double below = magnitude - lo, above = hi - magnitude;
        const bool up = below > above || (below == above && (bits >> 16) % 2 != 0);
        rounded = !up        ? lo
                  : overflow ? std::numeric_limits<float>::infinity()
                             : float_from_bits(hi_bits);
    }
    return std::signbit(value) ? -rounded : rounded;
}

std::optional<Fp8Layout> fp8_layout(const std::filesystem::path& config_path) {
    if (std::ifstream side(config_path.parent_path() / "hf_quant_config.json"); side) {
        const nlohmann::json j = nlohmann::json::parse(side, nullptr, false);
        const nlohmann::json* q =
            j.is_object() && j.contains("quantization") ? &j["quantization"] : nullptr;
        if (q && q->is_object() && q->value("quant_algo", std::string()) == "FP8")
            return Fp8Layout{0, 0, "_scale", true};
        return std::nullopt;
    }
    std::ifstream in(config_path);
    if (!in) return std::nullopt;
    const nlohmann::json root = nlohmann::json::parse(in, nullptr, false);
    if (root.is_discarded()) return std::nullopt;  // read_prequant_config reports it
    std::string field;
    const nlohmann::json* block =
        find_quant_block(root, {"quantization_config"}, "quant_method", &field);
    if (block == nullptr) return std::nullopt;
    const auto side_of = [&](const nlohmann::json& sizes, size_t k) -> uint64_t {
        if (!sizes.is_array() || sizes.size() != 2 || !sizes[k].is_number_unsigned()) return 0;
        return sizes[k].get<uint64_t>();
    };
    Fp8Layout layout;
    std::string sizes_field;
    nlohmann::json sizes;
    if ((*block)["quant_method"] == "fp8") {
        layout.scale_suffix = "_scale_inv";
        sizes = block->value("weight_block_size", nlohmann::json());
        sizes_field = field + ".weight_block_size";
    } else if ((*block)["quant_method"] == "compressed-tensors") {
        // One config group of 8-bit float weights, format float-quantized (the group's or the
        // block's own "format").
        const auto groups = block->find("config_groups");
        if (groups == block->end() || !groups->is_object() || groups->size() != 1)
            return std::nullopt;
        const nlohmann::json& group = groups->begin().value();
        const nlohmann::json weights = group.value("weights", nlohmann::json());
        const std::string format = group.value("format", block->value("format", std::string()));
        if (format != "float-quantized" || !weights.is_object() ||
            weights.value("type", std::string()) != "float" || weights.value("num_bits", 0) != 8)
            return std::nullopt;
        layout.scale_suffix = "_scale";
        const std::string strategy = weights.value("strategy", std::string());
        if (strategy == "channel") {
            layout.block_rows = 1;
            return layout;  // block_cols 0: one scale per row
        }
        sizes = strategy == "block" ? weights.value("block_structure", nlohmann::json())
                                    : nlohmann::json();
        sizes_field = field + ".config_groups.weights.block_structure";
    } else {
        return std::nullopt;
    }
    layout.block_rows = side_of(sizes, 0);
    layout.block_cols = side_of(sizes, 1);
    const uint64_t limit = uint64_t{1} << 20;
    if (layout.block_rows == 0 || layout.block_cols == 0 || layout.block_rows > limit ||
        layout.block_cols > limit)
        throw Error(ExitClass::input, config_path.string(), sizes_field,
                    "not two block sides in 1..2^20 (verify reads block- or channel-scaled FP8)");
    return layout;
}

}  // namespace rebox::verify_ref
