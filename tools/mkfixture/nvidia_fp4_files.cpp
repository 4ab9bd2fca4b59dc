// Writers of the ModelOpt / compressed-tensors FP4 fixtures (nvidia_fp4_files.hpp): E2M1 codes
// uniform at random, packed two per byte element 2i low; E4M3 block scales in the range a
// quantizer with a per-tensor factor produces (amax_block / 6 scaled by 448 * 6 / amax: 2 .. 448);
// E8M0 scales near 2^-8; one per-tensor factor per module drawn around amax / (6 * 448).
#include "nvidia_fp4_files.hpp"

#include <cstring>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "fp16.hpp"
#include "hf_files.hpp"
#include "mlx_files.hpp"
#include "mlx_pack.hpp"
#include "prng.hpp"
#include "safetensors_writer.hpp"

namespace mkfixture {

using ojson = nlohmann::ordered_json;
namespace fs = std::filesystem;

namespace {

bool is_modelopt(const NvidiaFp4Options& o) { return o.format == "modelopt-nvfp4"; }
bool is_mx(const NvidiaFp4Options& o) { return o.format == "ct-mxfp4"; }
int group_of(const NvidiaFp4Options& o) { return is_mx(o) ? 32 : 16; }

// Embeddings and routers stay BF16, as ModelOpt's and llm-compressor's default recipes leave them.
bool stays_float(const QuantTensor& q) {
    return q.name.find("embed_tokens") != std::string::npos ||
           q.name == "backbone.embeddings.weight" ||  // Nemotron-H's embedding
           q.name.ends_with("mlp.gate.weight") || q.name.ends_with("mixer.gate.weight") ||
           q.name.ends_with("block_sparse_moe.gate.weight") ||
           q.name.ends_with("shared_expert_gate.weight");
}

void write_bf16_values(std::ostream& out, const std::string& name, int64_t length, double center,
                       double spread, uint64_t seed) {
    SplitMix64 rng = stream_for(seed, name);
    std::vector<char> bytes;
    bytes.reserve(static_cast<size_t>(length) * 2);
    for (int64_t i = 0; i < length; ++i) {
        const uint16_t v = float_to_bf16(static_cast<float>(center + rng.uniform(-spread, spread)));
        bytes.push_back(static_cast<char>(v & 0xff));
        bytes.push_back(static_cast<char>(v >> 8));
    }
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Codes of row r: element 2i in the low nibble of byte i (pack_fp4_to_uint8 / NVFP4QTensor).
void write_codes(std::ostream& out, const QuantTensor& t, uint64_t seed) {
    SplitMix64 rng = stream_for(seed, t.name + ".codes");
    std::vector<char> row(static_cast<size_t>(t.cols / 2));
    for (int64_t r = 0; r < t.rows; ++r) {
        for (char& byte : row) {
            const uint32_t even = rng.uniform_bits(4), odd = rng.uniform_bits(4);
            byte = static_cast<char>(even | odd << 4);
        }
        out.write(row.data(), static_cast<std::streamsize>(row.size()));
    }
}

bool factor_is_one(const QuantTensor& t, const NvidiaFp4Options& options);

void write_scales(std::ostream& out, const QuantTensor& t, uint64_t seed,
                  const NvidiaFp4Options& options) {
    SplitMix64 rng = stream_for(seed, t.name + ".block_scales");
    std::vector<char> bytes(static_cast<size_t>(t.rows * (t.cols / group_of(options))));
    const bool small = options.small_scales_when_one && factor_is_one(t, options);
    for (char& b : bytes) {
        // E4M3 exponent field 8..15 (2 .. 448 with the mantissa; 0x7f excluded), or E8M0 2^-10..-6;
        // small: exponent field 0..3 (never the zero scale)
        const uint32_t e = (small ? 0 : 8) + rng.uniform_bits(small ? 2 : 3);
        uint32_t m = rng.uniform_bits(3);
        if (small && e == 0 && m == 0) m = 1;
        b = static_cast<char>(is_mx(options) ? 117 + rng.uniform_bits(8) % 5
                                             : (e == 15 && m == 7 ? 0x7e : e << 3 | m));
    }
    if (t.name == kMlxInexactTensor && !options.bad_scale.empty())
        bytes[0] = static_cast<char>(is_mx(options)               ? 0xff
                                     : options.bad_scale == "nan" ? 0x7f
                                                                  : 0xb8);  // -1.0
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// The per-tensor factor of a module: ModelOpt weight_scale_2 = amax / (6 * 448), compressed-
// tensors weight_global_scale = 448 * 6 / amax, amax of weights near 0.05 (1 with ffn_scale_one).
bool factor_is_one(const QuantTensor& t, const NvidiaFp4Options& options) {
    return (options.ffn_scale_one && t.name.find(".mlp.") != std::string::npos) ||
           (!options.scale_one_part.empty() &&
            t.name.find(options.scale_one_part) != std::string::npos);
}

float global_factor(const QuantTensor& t, uint64_t seed, const NvidiaFp4Options& options) {
    if (factor_is_one(t, options)) return 1.0f;
    SplitMix64 rng = stream_for(seed, t.name + ".global");
    const double amax = rng.uniform(0.03, 0.12);
    return static_cast<float>(is_modelopt(options) ? amax / (6.0 * 448.0) : 448.0 * 6.0 / amax);
}

StTensor f32_scalar(const std::string& name, std::vector<int64_t> shape, float value) {
    return {name, "F32", std::move(shape), 4, [value](std::ostream& s) {
                char bytes[4];
                std::memcpy(bytes, &value, 4);
                s.write(bytes, 4);
            }};
}

void append_entries(std::vector<StTensor>& out, const PlanUnit& unit, uint64_t seed,
                    const NvidiaFp4Options& options) {
    if (!unit.quantized) {
        const NormTensor n = unit.norm;
        out.push_back({n.name, "BF16", n.dims.empty() ? std::vector<int64_t>{n.length} : n.dims,
                       static_cast<uint64_t>(n.length) * 2, [n, seed](std::ostream& s) {
                           write_bf16_values(s, n.name, n.length, n.center, n.spread, seed);
                       }});
        return;
    }
    const QuantTensor q = unit.quant;
    if (stays_float(q)) {
        out.push_back({q.name,
                       "BF16",
                       {q.rows, q.cols},
                       static_cast<uint64_t>(q.rows * q.cols) * 2,
                       [q, seed](std::ostream& s) {
                           write_bf16_values(s, q.name, q.rows * q.cols, 0.0, 0.05, seed);
                       }});
        return;
    }
    const std::string module = q.name.substr(0, q.name.size() - std::string(".weight").size());
    const int64_t groups = q.cols / group_of(options);
    const int64_t scale_cols =
        options.bad_shape && q.name == kMlxInexactTensor ? groups - 1 : groups;
    out.push_back({is_modelopt(options) ? q.name : module + ".weight_packed",
                   "U8",
                   {q.rows, q.cols / 2},
                   static_cast<uint64_t>(q.rows * q.cols / 2),
                   [q, seed](std::ostream& s) { write_codes(s, q, seed); }});
    out.push_back({module + ".weight_scale",
                   is_mx(options) ? "U8" : "F8_E4M3",
                   {q.rows, scale_cols},
                   static_cast<uint64_t>(q.rows * scale_cols),
                   [q, seed, options, scale_cols, groups](std::ostream& s) {
                       std::ostringstream all;
                       write_scales(all, q, seed, options);
                       const std::string bytes = all.str();
                       for (int64_t r = 0; r < q.rows; ++r)
                           s.write(bytes.data() + r * groups, scale_cols);
                   }});
    if (is_mx(options)) return;
    const float factor = global_factor(q, seed, options);
    if (is_modelopt(options)) {
        out.push_back(f32_scalar(module + ".weight_scale_2", {}, factor));
        out.push_back(f32_scalar(module + ".input_scale", {}, 0.0125f));
    } else {
        out.push_back(f32_scalar(module + ".weight_global_scale", {1}, factor));
        out.push_back(f32_scalar(module + ".input_global_scale", {1}, 80.0f));
    }
}

}  // namespace

void add_nvidia_fp4_quantization(const fs::path& out_dir, const NvidiaFp4Options& options) {
    if (is_modelopt(options)) {
        const ojson side = {
            {"producer", {{"name", "modelopt"}, {"version", "0.29.0"}}},
            {"quantization",
             {{"quant_algo", "NVFP4"},
              {"kv_cache_quant_algo", nullptr},
              {"group_size", 16},
              {"exclude_modules", ojson::array({"model.embed_tokens", "*mlp.gate"})}}}};
        std::ofstream out(out_dir / "hf_quant_config.json", std::ios::binary | std::ios::trunc);
        out << side.dump(4) << "\n";
        if (!out) throw std::runtime_error("hf_quant_config.json: cannot write");
        return;
    }
    const fs::path path = out_dir / "config.json";
    ojson config;
    {
        std::ifstream in(path);
        config = ojson::parse(in);
    }
    const std::string format = is_mx(options) ? "mxfp4-pack-quantized" : "nvfp4-pack-quantized";
    ojson weights = {{"num_bits", 4},
                     {"type", "float"},
                     {"symmetric", true},
                     {"group_size", group_of(options)},
                     {"strategy", is_mx(options) ? "group" : "tensor_group"},
                     {"dynamic", false},
                     {"observer", "minmax"}};
    config["quantization_config"] = {
        {"quant_method", "compressed-tensors"},
        {"format", format},
        {"quantization_status", "compressed"},
        {"ignore", ojson::array({"model.embed_tokens", "re:.*mlp.gate$"})},
        {"config_groups",
         {{"group_0",
           {{"targets", ojson::array({"Linear"})}, {"weights", weights}, {"format", format}}}}}};
    config["torch_dtype"] = "bfloat16";
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << config.dump(2) << "\n";
    if (!out) throw std::runtime_error(path.string() + ": cannot write");
}

void write_nvidia_fp4_model_files(const fs::path& out_dir, const ModelPlan& plan, int shard_count,
                                  uint64_t seed, const NvidiaFp4Options& options) {
    write_safetensors_files(
        out_dir, plan, shard_count,
        [&](const std::vector<PlanUnit>& units) {
            std::vector<StTensor> tensors;
            for (const PlanUnit& u : units) append_entries(tensors, u, seed, options);
            return tensors;
        },
        [](const std::vector<PlanUnit>&) {
            return std::vector<std::pair<std::string, std::string>>{{"format", "pt"}};
        });
}

}  // namespace mkfixture
