// Writers of the MLX-layout fixture: group parameters like MLX's quantizer produces them (scale
// sign negative for about half the groups, bias the value of code 0 centring the group), codes
// uniform at random, all packed with the fixture's own word packer and float roundings.
#include "mlx_files.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "fp16.hpp"
#include "hf_files.hpp"
#include "mlx_pack.hpp"
#include "mlx_recipe.hpp"
#include "prng.hpp"
#include "safetensors_writer.hpp"

namespace mkfixture {

using ojson = nlohmann::ordered_json;
namespace fs = std::filesystem;

namespace {

size_t dtype_width(const std::string& dtype) { return dtype == "f32" ? 4 : 2; }
std::string st_dtype(const std::string& dtype) {
    return dtype == "f32" ? "F32" : dtype == "f16" ? "F16" : "BF16";
}

// `value` stored as `dtype`, little-endian, appended to out. Values are chosen fp16-exact for f32.
void append_value(std::vector<char>& out, const std::string& dtype, float value) {
    uint32_t bits = 0;
    if (dtype == "bf16") {
        bits = float_to_bf16(value);
    } else if (dtype == "f16") {
        bits = float_to_half(value);
    } else {
        const float exact = half_to_float(float_to_half(value));  // fp16-exact binary32
        __builtin_memcpy(&bits, &exact, 4);
    }
    for (size_t b = 0; b < dtype_width(dtype); ++b)
        out.push_back(static_cast<char>((bits >> (8 * b)) & 0xffu));
}

// The not-fp16-exact scale of --inexact-scales, as raw bytes: bf16 0x35ff = 2^-20 * (1+127/128)
// (needs ulp 2^-27 < fp16's smallest 2^-24); f32 0.1f (not a dyadic fraction fp16 can hold).
std::vector<char> inexact_scale_bytes(const std::string& dtype) {
    if (dtype == "bf16") return {static_cast<char>(0xff), static_cast<char>(0x35)};
    const float value = 0.1f;
    uint32_t bits;
    __builtin_memcpy(&bits, &value, 4);
    std::vector<char> out;
    for (int b = 0; b < 4; ++b) out.push_back(static_cast<char>((bits >> (8 * b)) & 0xffu));
    return out;
}

struct MlxGroupBytes {
    std::vector<char> scales, biases;
};

MlxGroupBytes make_mlx_params(const QuantTensor& t, uint64_t seed, const MlxOptions& options) {
    MlxGroupBytes out;
    SplitMix64 rng = stream_for(seed, t.name + ".scales");
    const double spread = t.gain / std::sqrt(static_cast<double>(t.cols) / 64.0);
    const double half_range = (std::pow(2.0, t.bits) - 1.0) / 2.0;
    const int64_t groups = t.group_count();
    for (int64_t g = 0; g < groups; ++g) {
        const double magnitude = rng.uniform(0.002, 0.03) * spread;
        const bool coin = (rng.next() & 1u) != 0;
        const bool negative =
            options.negative_scales == "all" || (options.negative_scales == "half" && coin);
        // Round the scale first, then centre the group on it: bias = -scale*(2^b-1)/2.
        std::vector<char> scale_bytes;
        append_value(scale_bytes, options.scale_dtype,
                     static_cast<float>(negative ? -magnitude : magnitude));
        float scale = 0;
        if (options.scale_dtype == "f32") {
            __builtin_memcpy(&scale, scale_bytes.data(), 4);
        } else {
            const uint16_t bits = static_cast<uint16_t>(static_cast<uint8_t>(scale_bytes[0]) |
                                                        static_cast<uint8_t>(scale_bytes[1]) << 8);
            if (options.scale_dtype == "f16") {
                scale = half_to_float(bits);
            } else {
                const uint32_t wide = static_cast<uint32_t>(bits) << 16;
                __builtin_memcpy(&scale, &wide, 4);
            }
        }
        if (g == 0 && options.inexact_scales && t.name == kMlxInexactTensor)
            scale_bytes = inexact_scale_bytes(options.scale_dtype);
        out.scales.insert(out.scales.end(), scale_bytes.begin(), scale_bytes.end());
        append_value(out.biases, options.scale_dtype,
                     static_cast<float>(-static_cast<double>(scale) * half_range));
    }
    return out;
}

void write_mlx_weight(std::ostream& out, const QuantTensor& t, uint64_t seed) {
    SplitMix64 rng = stream_for(seed, t.name + ".weight");
    std::vector<uint8_t> codes(static_cast<size_t>(t.cols));
    std::vector<char> bytes;
    for (int64_t r = 0; r < t.rows; ++r) {
        for (uint8_t& c : codes) c = static_cast<uint8_t>(rng.uniform_bits(t.bits));
        const std::vector<uint32_t> words = pack_mlx_row(codes, t.bits);
        bytes.resize(words.size() * 4);
        for (size_t w = 0; w < words.size(); ++w)
            for (int b = 0; b < 4; ++b)
                bytes[4 * w + static_cast<size_t>(b)] = static_cast<char>(words[w] >> (8 * b));
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    }
}

// FP4 scale bytes as mlx's fp_quantize stores them: E8M0 (2^(e-127)) for mxfp4, E4M3 bytes
// (sign 0, 4 exponent bits with bias 7, 3 mantissa bits) for nvfp4; a spread of magnitudes around
// a typical weight scale (amax / 6 of weights near +-0.05, as mlx's quantizer would pick; nvfp4
// without a global scale lands in E4M3's subnormal and lowest binades). --fp4-bad-scale puts one
// refused byte at index 0 of kMlxInexactTensor.
void write_fp4_scales(std::ostream& out, const QuantTensor& t, uint64_t seed,
                      const MlxOptions& options) {
    SplitMix64 rng = stream_for(seed, t.name + ".scales");
    std::vector<char> bytes(static_cast<size_t>(t.group_count()));
    for (char& b : bytes) {
        const uint64_t r = rng.uniform_bits(8);
        // mxfp4: 2^-10 .. 2^-6; nvfp4: exponent field 0..2 (subnormals 0..7 * 2^-9, then
        // 2^-6 .. 2^-5 * 1.875), any mantissa
        b = static_cast<char>(options.fp4_mode == "mxfp4" ? 117 + r % 5
                                                          : (r % 3) << 3 | rng.uniform_bits(3));
    }
    if (t.name == kMlxInexactTensor && !options.fp4_bad_scale.empty())
        bytes[0] = static_cast<char>(options.fp4_mode == "mxfp4"      ? 0xff
                                     : options.fp4_bad_scale == "nan" ? 0x7f
                                                                      : 0xb8);  // -1.0
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

void write_bf16_norm(std::ostream& out, const NormTensor& t, uint64_t seed) {
    SplitMix64 rng = stream_for(seed, t.name);
    std::vector<char> bytes;
    for (int64_t i = 0; i < t.length; ++i) {
        const uint16_t v =
            float_to_bf16(static_cast<float>(t.center + rng.uniform(-t.spread, t.spread)));
        bytes.push_back(static_cast<char>(v & 0xff));
        bytes.push_back(static_cast<char>(v >> 8));
    }
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

void append_mlx_entries(std::vector<StTensor>& out, const PlanUnit& unit, uint64_t seed,
                        const MlxOptions& options) {
    if (!unit.quantized) {
        const NormTensor norm = unit.norm;
        out.push_back({norm.name, "BF16", norm.shape(), static_cast<uint64_t>(norm.length) * 2,
                       [norm, seed](std::ostream& s) { write_bf16_norm(s, norm, seed); }});
        return;
    }
    const QuantTensor q = unit.quant;
    if (q.mlx_float) {  // an unquantized module: one BF16 [rows, cols] weight near 0
        const NormTensor w{q.name, q.rows * q.cols, 0.0, 0.05};
        out.push_back({w.name, "BF16",
                       q.experts > 0 ? std::vector<int64_t>{q.experts, q.rows / q.experts, q.cols}
                                     : std::vector<int64_t>{q.rows, q.cols},
                       static_cast<uint64_t>(w.length) * 2,
                       [w, seed](std::ostream& s) { write_bf16_norm(s, w, seed); }});
        return;
    }
    const std::string module = q.name.substr(0, q.name.size() - std::string(".weight").size());
    const int64_t words = q.cols * q.bits / 32;
    const int64_t groups_per_row = q.cols / q.group;
    const uint64_t param_bytes =
        static_cast<uint64_t>(q.rows * groups_per_row) * dtype_width(options.scale_dtype);
    // Stacked experts (switch_mlp): [E, rows/E, ...], the same bytes as [rows, ...].
    const auto shape = [&q](int64_t last) {
        return q.experts > 0 ? std::vector<int64_t>{q.experts, q.rows / q.experts, last}
                             : std::vector<int64_t>{q.rows, last};
    };
    auto params = std::make_shared<MlxGroupBytes>();
    out.push_back({q.name, "U32", shape(words), static_cast<uint64_t>(q.rows * words) * 4,
                   [q, seed](std::ostream& s) { write_mlx_weight(s, q, seed); }});
    if (!options.fp4_mode.empty()) {  // U8 scales, no biases
        out.push_back(
            {module + ".scales", "U8", shape(groups_per_row),
             static_cast<uint64_t>(q.rows * groups_per_row),
             [q, seed, options](std::ostream& s) { write_fp4_scales(s, q, seed, options); }});
        return;
    }
    out.push_back({module + ".scales", st_dtype(options.scale_dtype), shape(groups_per_row),
                   param_bytes, [q, seed, options, params](std::ostream& s) {
                       *params = make_mlx_params(q, seed, options);
                       s.write(params->scales.data(),
                               static_cast<std::streamsize>(params->scales.size()));
                   }});
    out.push_back({module + ".biases", st_dtype(options.scale_dtype), shape(groups_per_row),
                   param_bytes, [params](std::ostream& s) {
                       s.write(params->biases.data(),
                               static_cast<std::streamsize>(params->biases.size()));
                       *params = MlxGroupBytes{};
                   }});
}

}  // namespace

void add_mlx_quantization(const fs::path& out_dir, const MlxOptions& options) {
    const fs::path path = out_dir / "config.json";
    ojson config;
    {
        std::ifstream in(path);
        config = ojson::parse(in);
    }
    ojson quant = {{"group_size", kMlxGlobalGroup}, {"bits", kMlxGlobalBits}, {"mode", "affine"}};
    if (!options.fp4_mode.empty())
        quant = {{"group_size", fp4_mode_group(options.fp4_mode)},
                 {"bits", 4},
                 {"mode", options.fp4_mode}};
    for (const auto& [module, setting] : options.overrides) {
        if (setting.first == 0)
            quant[module] = false;
        else
            quant[module] = {{"group_size", setting.second}, {"bits", setting.first}};
    }
    config["quantization"] = quant;
    config["quantization_config"] = quant;
    config["torch_dtype"] = "bfloat16";
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << config.dump(2) << "\n";
    if (!out) throw std::runtime_error(path.string() + ": cannot write");
}

void write_mlx_model_files(const fs::path& out_dir, const ModelPlan& plan, int shard_count,
                           uint64_t seed, const MlxOptions& options) {
    write_safetensors_files(
        out_dir, plan, shard_count,
        [&](const std::vector<PlanUnit>& units) {
            std::vector<StTensor> tensors;
            for (const PlanUnit& u : units) append_mlx_entries(tensors, u, seed, options);
            return tensors;
        },
        [](const std::vector<PlanUnit>&) {
            return std::vector<std::pair<std::string, std::string>>{{"format", "mlx"}};
        });
}

}  // namespace mkfixture
