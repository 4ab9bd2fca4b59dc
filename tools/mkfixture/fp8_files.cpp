// Writers of the FP8 block-quantized fixtures (fp8_files.hpp): E4M3 codes uniform over every
// byte but the two NaNs, one scale per block drawn as the options say.
#include "fp8_files.hpp"

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "fp16.hpp"
#include "hf_files.hpp"
#include "mlx_pack.hpp"
#include "prng.hpp"
#include "safetensors_writer.hpp"

namespace mkfixture {

namespace fs = std::filesystem;

namespace {

bool fp8_stays_bf16(const std::string& name) {
    return name.find("embed_tokens") != std::string::npos || name == "lm_head.weight" ||
           name.ends_with("mlp.gate.weight");
}

void put_bf16_values(std::ostream& out, const std::string& name, int64_t length, double center,
                     double spread, uint64_t seed) {
    SplitMix64 rng = stream_for(seed, name);
    std::string bytes;
    for (int64_t i = 0; i < length; ++i) {
        const uint16_t v = float_to_bf16(static_cast<float>(center + rng.uniform(-spread, spread)));
        bytes.push_back(static_cast<char>(v & 0xff));
        bytes.push_back(static_cast<char>(v >> 8));
    }
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

int scale_width(const Fp8Options& o) { return o.scales == "bf16" || o.scales == "f16" ? 2 : 4; }

// One scale's little-endian bytes.
std::string scale_bytes(SplitMix64& rng, const Fp8Options& o) {
    const double amax_over_448 = rng.uniform(0.5e-4, 2e-4);
    std::string bytes(static_cast<size_t>(scale_width(o)), '\0');
    if (o.scales == "bf16" || o.scales == "f16") {
        const float f = static_cast<float>(amax_over_448);
        const uint16_t h = o.scales == "bf16" ? float_to_bf16(f) : float_to_half(f);
        bytes[0] = static_cast<char>(h & 0xff), bytes[1] = static_cast<char>(h >> 8);
        return bytes;
    }
    float f = static_cast<float>(amax_over_448);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    if (o.scales == "pow2")
        bits = static_cast<uint32_t>(127 - 16 - static_cast<int>(rng.uniform_bits(8) % 5)) << 23;
    else if (o.scales == "f32-short")
        bits &= ~0xfu;  // 1 + 19 significand bits: times 4 bits of E4M3 fits binary32's 24
    else
        bits |= 1u;  // 24 significant bits: most products need 25 to 27
    std::memcpy(bytes.data(), &bits, 4);
    return bytes;
}

void append_fp8_entries(std::vector<StTensor>& out, const PlanUnit& unit, uint64_t seed,
                        const Fp8Options& options) {
    if (!unit.quantized) {
        const NormTensor n = unit.norm;
        out.push_back({n.name, "BF16", n.shape(), static_cast<uint64_t>(n.length) * 2,
                       [n, seed](std::ostream& s) {
                           put_bf16_values(s, n.name, n.length, n.center, n.spread, seed);
                       }});
        return;
    }
    const QuantTensor q = unit.quant;
    if (fp8_stays_bf16(q.name)) {
        out.push_back({q.name,
                       "BF16",
                       {q.rows, q.cols},
                       static_cast<uint64_t>(q.rows * q.cols) * 2,
                       [q, seed](std::ostream& s) {
                           put_bf16_values(s, q.name, q.rows * q.cols, 0.0, 0.05, seed);
                       }});
        return;
    }
    const bool target = q.name.ends_with("layers.0.self_attn.q_proj.weight");
    out.push_back({q.name,
                   "F8_E4M3",
                   {q.rows, q.cols},
                   static_cast<uint64_t>(q.rows * q.cols),
                   [q, seed, target, options](std::ostream& s) {
                       SplitMix64 rng = stream_for(seed, q.name + ".fp8");
                       std::string bytes(static_cast<size_t>(q.rows * q.cols), '\0');
                       for (char& b : bytes) {
                           uint32_t v = rng.uniform_bits(8);
                           if ((v & 0x7f) == 0x7f) v &= 0xf7;  // no NaN: 0x7F -> 0x77
                           b = static_cast<char>(v);
                       }
                       if (target && options.defect == "nan") bytes[0] = 0x7f;
                       s.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
                   }});
    if (target && options.defect == "no-scale") return;
    const bool channel = options.layout == "ct-channel";
    const bool per_tensor = options.layout == "modelopt";
    const int64_t block_rows = channel ? 1 : per_tensor ? q.rows : options.block_rows;
    const int64_t block_cols = channel || per_tensor ? q.cols : options.block_cols;
    const int64_t srows = (q.rows + block_rows - 1) / block_rows +
                          (target && options.defect == "scale-shape" ? 1 : 0);
    const int64_t scols = (q.cols + block_cols - 1) / block_cols;
    const std::string dtype = options.scales == "bf16"  ? "BF16"
                              : options.scales == "f16" ? "F16"
                                                        : "F32";
    // ModelOpt FP8: one F32 scale of shape [] per weight, and the static activation scale beside.
    const std::vector<int64_t> scale_shape =
        per_tensor && srows == 1 ? std::vector<int64_t>{} : std::vector<int64_t>{srows, scols};
    if (per_tensor) {
        const std::string module = q.name.substr(0, q.name.size() - std::string("weight").size());
        out.push_back({module + "input_scale", "F32", {}, 4, [](std::ostream& s) {
                           const float one = 0.0125f;
                           s.write(reinterpret_cast<const char*>(&one), 4);
                       }});
    }
    out.push_back({q.name + (options.layout == "fp8" ? "_scale_inv" : "_scale"), dtype, scale_shape,
                   static_cast<uint64_t>(srows * scols * scale_width(options)),
                   [q, seed, srows, scols, options](std::ostream& s) {
                       SplitMix64 rng = stream_for(seed, q.name + ".fp8_scales");
                       for (int64_t i = 0; i < srows * scols; ++i) {
                           const std::string b = scale_bytes(rng, options);
                           s.write(b.data(), static_cast<std::streamsize>(b.size()));
                       }
                   }});
}

}  // namespace

void add_fp8_quantization(const fs::path& out_dir, const Fp8Options& options) {
    if (options.layout == "modelopt") {  // ModelOpt's export: hf_quant_config.json beside
        std::ofstream side(out_dir / "hf_quant_config.json", std::ios::binary | std::ios::trunc);
        side << nlohmann::ordered_json{{"producer", {{"name", "modelopt"}, {"version", "0.29.0"}}},
                                       {"quantization",
                                        {{"quant_algo", "FP8"},
                                         {"kv_cache_quant_algo", nullptr},
                                         {"exclude_modules", {"lm_head"}}}}}
                    .dump(4)
             << "\n";
        if (!side)
            throw std::runtime_error((out_dir / "hf_quant_config.json").string() +
                                     ": cannot write");
        return;
    }
    const fs::path path = out_dir / "config.json";
    nlohmann::ordered_json config;
    {
        std::ifstream in(path);
        config = nlohmann::ordered_json::parse(in);
    }
    if (options.layout == "fp8") {
        config["quantization_config"] = {
            {"activation_scheme", "dynamic"},
            {"fmt", "e4m3"},
            {"quant_method", "fp8"},
            {"weight_block_size", {options.block_rows, options.block_cols}}};
        if (options.scales == "pow2") config["quantization_config"]["scale_fmt"] = "ue8m0";
    } else {  // llm-compressor's FP8_DYNAMIC (channel) / FP8_BLOCK schemes
        const bool block = options.layout == "ct-block";
        const nlohmann::ordered_json weights = {
            {"num_bits", 8},
            {"type", "float"},
            {"symmetric", true},
            {"group_size", nullptr},
            {"strategy", block ? "block" : "channel"},
            {"block_structure", block
                                    ? nlohmann::ordered_json{options.block_rows, options.block_cols}
                                    : nlohmann::ordered_json(nullptr)},
            {"dynamic", false},
            {"actorder", nullptr},
            {"observer", "minmax"},
            {"observer_kwargs", nlohmann::ordered_json::object()}};
        const nlohmann::ordered_json activations = {
            {"num_bits", 8},
            {"type", "float"},
            {"symmetric", true},
            {"group_size", block ? nlohmann::ordered_json(128) : nlohmann::ordered_json(nullptr)},
            {"strategy", block ? "group" : "token"},
            {"dynamic", true},
            {"observer", nullptr}};
        config["quantization_config"] = {{"config_groups",
                                          {{"group_0",
                                            {{"targets", {"Linear"}},
                                             {"weights", weights},
                                             {"input_activations", activations},
                                             {"output_activations", nullptr},
                                             {"format", "float-quantized"}}}}},
                                         {"format", "float-quantized"},
                                         {"global_compression_ratio", nullptr},
                                         {"ignore", {"lm_head"}},
                                         {"kv_cache_scheme", nullptr},
                                         {"quant_method", "compressed-tensors"},
                                         {"quantization_status", "compressed"},
                                         {"sparsity_config", nlohmann::ordered_json::object()},
                                         {"version", "0.12.2"}};
    }
    config["torch_dtype"] = "bfloat16";
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << config.dump(2) << "\n";
    if (!out) throw std::runtime_error(path.string() + ": cannot write");
}

void write_fp8_model_files(const fs::path& out_dir, const ModelPlan& plan, int shard_count,
                           uint64_t seed, const Fp8Options& options) {
    write_safetensors_files(
        out_dir, plan, shard_count,
        [&](const std::vector<PlanUnit>& units) {
            std::vector<StTensor> tensors;
            for (const PlanUnit& u : units) append_fp8_entries(tensors, u, seed, options);
            return tensors;
        },
        [](const std::vector<PlanUnit>&) {
            return std::vector<std::pair<std::string, std::string>>{{"format", "pt"}};
        });
}

}  // namespace mkfixture
