// Writers of the plain float fixture: weight values of magnitude 0.001..0.05 with a random sign
// (seeded per tensor name, like every fixture tensor), norms near 1, qwen2 biases near 0, each
// rounded to the chosen dtype with the fixture's own roundings. bf16 and f16 values of these
// magnitudes are all fp16-normal, so a bf16 fixture is exactly representable in fp16 unless the
// not-f16 defect is asked for; f32 values are arbitrary binary32 (most are not fp16).
#include "float_files.hpp"

#include <bit>
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

constexpr float kNotF16Value = 99840.0f;  // bf16 0x47c3; fp16's largest finite is 65504

size_t width(const std::string& dtype) { return dtype == "f32" ? 4 : 2; }
std::string st_dtype(const std::string& dtype) {
    return dtype == "f32" ? "F32" : dtype == "f16" ? "F16" : "BF16";
}

void append(std::string& out, const std::string& dtype, float value) {
    uint32_t bits = dtype == "bf16"  ? float_to_bf16(value)
                    : dtype == "f16" ? float_to_half(value)
                                     : std::bit_cast<uint32_t>(value);
    for (size_t b = 0; b < width(dtype); ++b) out.push_back(static_cast<char>(bits >> (8 * b)));
}

// One tensor's values: a weight (count values, |v| in [0.001, 0.05] times `spread`, random sign)
// or a vector centred on `center`, +- `spread`.
void write_values(std::ostream& out, const std::string& name, uint64_t count, bool weight,
                  double center, double spread, uint64_t seed, const FloatOptions& options) {
    SplitMix64 rng = stream_for(seed, name);
    std::string bytes;
    constexpr uint64_t kRun = 1 << 16;
    for (uint64_t done = 0; done < count;) {
        bytes.clear();
        const uint64_t n = std::min(kRun, count - done);
        for (uint64_t i = 0; i < n; ++i) {
            float value;
            if (weight) {
                const double magnitude = rng.uniform(0.001, 0.05) * spread;
                value = static_cast<float>((rng.next() & 1u) ? -magnitude : magnitude);
            } else {
                value = static_cast<float>(center + rng.uniform(-spread, spread));
            }
            if (done + i == 0 && options.defect == "not-f16" && name == kFloatDefectTensor)
                value = kNotF16Value;
            append(bytes, options.dtype, value);
        }
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        done += n;
    }
}

void append_float_entry(std::vector<StTensor>& out, const PlanUnit& unit, uint64_t seed,
                        const FloatOptions& options) {
    if (!unit.quantized) {
        const NormTensor t = unit.norm;
        out.push_back({t.name, st_dtype(options.dtype), t.shape(),
                       static_cast<uint64_t>(t.length) * width(options.dtype),
                       [t, seed, options](std::ostream& s) {
                           write_values(s, t.name, static_cast<uint64_t>(t.length), false, t.center,
                                        t.spread, seed, options);
                       }});
        return;
    }
    const QuantTensor q = unit.quant;
    const uint64_t count = static_cast<uint64_t>(q.rows * q.cols);
    if (options.defect == "f8-tensor" && q.name == kFloatDefectTensor) {
        out.push_back(
            {q.name, "F8_E4M3", {q.rows, q.cols}, count, [q, seed, count](std::ostream& s) {
                 SplitMix64 rng = stream_for(seed, q.name);
                 for (uint64_t i = 0; i < count; ++i)
                     s.put(static_cast<char>(rng.uniform_bits(7)));  // never NaN
             }});
        return;
    }
    out.push_back({q.name,
                   st_dtype(options.dtype),
                   {q.rows, q.cols},
                   count * width(options.dtype),
                   [q, seed, count, options](std::ostream& s) {
                       write_values(s, q.name, count, true, 0, q.gain, seed, options);
                   }});
}

}  // namespace

const std::vector<std::string>& float_defect_names() {
    static const std::vector<std::string> names = {"not-f16", "f8-tensor"};
    return names;
}

void set_float_torch_dtype(const fs::path& out_dir, const std::string& dtype) {
    const fs::path path = out_dir / "config.json";
    nlohmann::ordered_json config;
    {
        std::ifstream in(path);
        config = nlohmann::ordered_json::parse(in);
    }
    config["torch_dtype"] = dtype == "f32" ? "float32" : dtype == "f16" ? "float16" : "bfloat16";
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << config.dump(2) << "\n";
    if (!out) throw std::runtime_error(path.string() + ": cannot write");
}

void write_float_model_files(const fs::path& out_dir, const ModelPlan& plan, int shard_count,
                             uint64_t seed, const FloatOptions& options) {
    if (options.defect == "not-f16" && options.dtype == "f16")
        throw std::runtime_error(
            "--defect not-f16 needs --dtype bf16 or f32 (an f16 file holds "
            "only fp16 values)");
    write_safetensors_files(
        out_dir, plan, shard_count,
        [&](const std::vector<PlanUnit>& units) {
            std::vector<StTensor> tensors;
            for (const PlanUnit& u : units) append_float_entry(tensors, u, seed, options);
            return tensors;
        },
        [](const std::vector<PlanUnit>&) {
            return std::vector<std::pair<std::string, std::string>>{{"format", "pt"}};
        });
}

}  // namespace mkfixture
