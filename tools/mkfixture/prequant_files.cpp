// Writers of the GPTQ / AWQ / compressed-tensors fixtures: each quantized linear's logical content
// (prequant_content.cpp) packed by prequant_pack.hpp into the format's tensors, the float tensors
// rounded to F16/BF16 by the fixture's own roundings, and quantization_config as the producers
// write it (docs/formats.md §5.1-§5.3).
#include "prequant_files.hpp"

#include <algorithm>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "fp16.hpp"
#include "hf_files.hpp"
#include "mlx_pack.hpp"  // float_to_bf16
#include "prequant_pack.hpp"
#include "prng.hpp"
#include "safetensors_writer.hpp"

namespace mkfixture {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace {

bool is_ct(const PrequantOptions& o) { return o.format == "compressed-tensors"; }
bool is_ct_int(const PrequantOptions& o) { return is_ct(o) && o.ct_format == "int-quantized"; }
// Unquantized tensors: F16 in GPTQ/AWQ files, BF16 in compressed-tensors ones.
std::string float_dtype(const PrequantOptions& o) { return is_ct(o) ? "BF16" : "F16"; }
std::string scale_st_dtype(const PrequantOptions& o) {
    return o.scale_dtype == "bf16" ? "BF16" : "F16";
}
// The bits config.json claims (bits-not-allowed on awq claims 8 over a 4-bit layout).
int claimed_bits(const PrequantOptions& o) {
    return o.defect == "bits-not-allowed" && o.format == "awq" ? 8 : o.bits;
}

// The projections (Qwen3.5's gated delta-net in_proj_qkv / in_proj_z, Gemma 4 E2B's per-layer
// input gate / projection and DeepSeek-V3's kv_a_proj_with_mqa among them), not the embedding or
// lm_head.
bool is_quantized_linear(const PlanUnit& u) {
    const std::string& name = u.quant.name;
    return u.quantized &&
           (name.ends_with("_proj.weight") || name.ends_with("in_proj_qkv.weight") ||
            name.ends_with("in_proj_z.weight") || name.ends_with("per_layer_input_gate.weight") ||
            name.ends_with("per_layer_projection.weight") ||
            name.ends_with("kv_a_proj_with_mqa.weight"));
}

void put_u16(std::string& out, uint16_t v) {
    out.push_back(static_cast<char>(v & 0xffu));
    out.push_back(static_cast<char>(v >> 8));
}
void put_u32(std::string& out, uint32_t v) {
    for (int b = 0; b < 4; ++b) out.push_back(static_cast<char>((v >> (8 * b)) & 0xffu));
}

uint16_t round_float(float value, const std::string& st_dtype) {
    return st_dtype == "BF16" ? float_to_bf16(value) : float_to_half(value);
}

// A float tensor: weights |v| in [0.001, 0.05] with a random sign, vectors center +- spread.
StTensor float_tensor(const std::string& name, std::vector<int64_t> shape, bool weight,
                      double center, double spread, uint64_t seed, const std::string& st_dtype) {
    uint64_t count = 1;
    for (int64_t d : shape) count *= static_cast<uint64_t>(d);
    return {name, st_dtype, shape, count * 2, [=](std::ostream& s) {
                SplitMix64 rng = stream_for(seed, name);
                std::string bytes;
                for (uint64_t i = 0; i < count; ++i) {
                    double v;
                    if (weight) {
                        const double magnitude = rng.uniform(0.001, 0.05);
                        v = (rng.next() & 1u) ? -magnitude : magnitude;
                    } else {
                        v = center + rng.uniform(-spread, spread);
                    }
                    put_u16(bytes, round_float(static_cast<float>(v), st_dtype));
                    if (bytes.size() >= (1u << 16)) {
                        s.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
                        bytes.clear();
                    }
                }
                s.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
            }};
}

// The content of one linear, computed on first use by whichever of its tensors is written first.
struct LazyQuant {
    std::string module;
    int64_t out, in;
    PrequantOptions options;
    uint64_t seed;
    std::shared_ptr<LogicalQuant> cache = std::make_shared<LogicalQuant>();
    std::shared_ptr<int> users_left = std::make_shared<int>(0);  // tensors still to be written
    const LogicalQuant& get() const {
        if (cache->q.empty()) *cache = make_logical_quant(module, out, in, options, seed);
        return *cache;
    }
    // Called by each tensor's writer when it is done: the last one frees the content.
    void done() const {
        if (--*users_left == 0) *cache = LogicalQuant{};
    }
};

void write_words(std::ostream& s, const std::vector<uint32_t>& words) {
    std::string bytes;
    bytes.reserve(words.size() * 4);
    for (uint32_t w : words) put_u32(bytes, w);
    s.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Scales as stored: [groups, out] (GPTQ, AWQ) or, transposed, [out, groups] (compressed-tensors);
// `rows_kept` < the full count drops the last rows (defect scales-shape).
StTensor scales_tensor(const std::string& name, const LazyQuant& lq, bool out_major,
                       int64_t out_kept, const std::string& st_dtype) {
    const int64_t groups = (lq.in + (lq.options.group < 0 ? lq.in : lq.options.group) - 1) /
                           (lq.options.group < 0 ? lq.in : lq.options.group);
    std::vector<int64_t> shape =
        out_major ? std::vector<int64_t>{out_kept, groups} : std::vector<int64_t>{groups, out_kept};
    return {name, st_dtype, shape, static_cast<uint64_t>(groups * out_kept) * 2,
            [lq, out_major, out_kept, groups](std::ostream& s) {
                const LogicalQuant& t = lq.get();
                std::string bytes;
                if (out_major) {
                    for (int64_t n = 0; n < out_kept; ++n)
                        for (int64_t g = 0; g < groups; ++g)
                            put_u16(bytes, t.scale_bits[static_cast<size_t>(g * t.out + n)]);
                } else {
                    for (int64_t g = 0; g < groups; ++g)
                        for (int64_t n = 0; n < out_kept; ++n)
                            put_u16(bytes, t.scale_bits[static_cast<size_t>(g * t.out + n)]);
                }
                s.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
                lq.done();
            }};
}

// GPTQ (§5.1): qweight columns and qzeros rows are LSB-first bit streams; v1 stores z - 1.
void append_gptq(std::vector<StTensor>& out, const LazyQuant& lq, bool defect_module) {
    const PrequantOptions& o = lq.options;
    const int b = o.bits;
    const int64_t group = o.group < 0 ? lq.in : o.group, groups = (lq.in + group - 1) / group;
    const std::string& m = lq.module;
    out.push_back({m + ".qweight",
                   "I32",
                   {lq.in * b / 32, lq.out},
                   static_cast<uint64_t>(lq.in * b / 32 * lq.out) * 4,
                   [lq, b](std::ostream& s) {
                       const LogicalQuant& t = lq.get();
                       std::vector<std::vector<uint32_t>> columns;
                       std::vector<uint32_t> column(static_cast<size_t>(t.in));
                       for (int64_t n = 0; n < t.out; ++n) {
                           for (int64_t k = 0; k < t.in; ++k)
                               column[static_cast<size_t>(k)] =
                                   t.q[static_cast<size_t>(n * t.in + k)];
                           columns.push_back(pack_bit_stream(column, b));
                       }
                       std::vector<uint32_t> words;  // row-major [in*b/32, out]
                       for (size_t w = 0; w < columns[0].size(); ++w)
                           for (const auto& c : columns) words.push_back(c[w]);
                       write_words(s, words);
                       lq.done();
                   }});
    const bool v1 = o.checkpoint_format == "gptq";
    out.push_back({m + ".qzeros",
                   "I32",
                   {groups, lq.out * b / 32},
                   static_cast<uint64_t>(groups * lq.out * b / 32) * 4,
                   [lq, b, v1](std::ostream& s) {
                       const LogicalQuant& t = lq.get();
                       std::vector<uint32_t> words;
                       for (int64_t g = 0; g < t.groups; ++g) {
                           const std::span<const int32_t> row(t.z.data() + g * t.out,
                                                              static_cast<size_t>(t.out));
                           const std::vector<uint32_t> packed = gptq_qzeros_row(row, b, v1);
                           words.insert(words.end(), packed.begin(), packed.end());
                       }
                       write_words(s, words);
                       lq.done();
                   }});
    if (!(defect_module && o.defect == "missing-scales"))
        out.push_back(scales_tensor(
            m + ".scales", lq, false,
            defect_module && o.defect == "scales-shape" ? lq.out - 8 : lq.out, "F16"));
    out.push_back(
        {m + ".g_idx", "I32", {lq.in}, static_cast<uint64_t>(lq.in) * 4, [lq](std::ostream& s) {
             const LogicalQuant& t = lq.get();
             std::vector<uint32_t> words(t.g_idx.begin(), t.g_idx.end());
             write_words(s, words);
             lq.done();
         }});
}

// AWQ gemm (§5.2): [in, out/8] words, nibbles in AWQ_ORDER; z stored as is.
void append_awq(std::vector<StTensor>& out, const LazyQuant& lq, bool defect_module) {
    const PrequantOptions& o = lq.options;
    const int64_t group = o.group < 0 ? lq.in : o.group, groups = lq.in / group;
    const std::string& m = lq.module;
    out.push_back({m + ".qweight",
                   "I32",
                   {lq.in, lq.out / 8},
                   static_cast<uint64_t>(lq.in * (lq.out / 8)) * 4,
                   [lq](std::ostream& s) {
                       const LogicalQuant& t = lq.get();
                       std::vector<uint32_t> words;
                       std::array<uint32_t, 8> eight{};
                       for (int64_t k = 0; k < t.in; ++k)
                           for (int64_t w = 0; w < t.out / 8; ++w) {
                               for (int64_t c = 0; c < 8; ++c)
                                   eight[static_cast<size_t>(c)] =
                                       t.q[static_cast<size_t>((8 * w + c) * t.in + k)];
                               words.push_back(pack_awq_word(eight));
                           }
                       write_words(s, words);
                       lq.done();
                   }});
    out.push_back({m + ".qzeros",
                   "I32",
                   {groups, lq.out / 8},
                   static_cast<uint64_t>(groups * (lq.out / 8)) * 4,
                   [lq](std::ostream& s) {
                       const LogicalQuant& t = lq.get();
                       std::vector<uint32_t> words;
                       std::array<uint32_t, 8> eight{};
                       for (int64_t g = 0; g < t.groups; ++g)
                           for (int64_t w = 0; w < t.out / 8; ++w) {
                               for (int64_t c = 0; c < 8; ++c)
                                   eight[static_cast<size_t>(c)] = static_cast<uint32_t>(
                                       t.z[static_cast<size_t>(g * t.out + 8 * w + c)]);
                               words.push_back(pack_awq_word(eight));
                           }
                       write_words(s, words);
                       lq.done();
                   }});
    if (!(defect_module && o.defect == "missing-scales"))
        out.push_back(scales_tensor(
            m + ".scales", lq, false,
            defect_module && o.defect == "scales-shape" ? lq.out - 8 : lq.out, "F16"));
}

// AutoAWQ's calculate_zeros_width: groups per row in whole words of 8, rounded up to a multiple of
// 4 (group 32) or 2 (group 64) (docs/formats.md §5.2).
int64_t awq_gemv_zero_words(int64_t in, int64_t group) {
    const int64_t multiple = group >= 128 ? 1 : group == 64 ? 2 : 4;
    const int64_t base = (in / group + 7) / 8;
    return (base + multiple - 1) / multiple * multiple;
}

// AWQ gemv (§5.2): qweight [out, in/8] in natural nibble order (the row's 4-bit stream), qzeros
// [out, W] likewise over the groups, scales [out, 8W]; the padding beyond in/group is zero.
void append_awq_gemv(std::vector<StTensor>& out, const LazyQuant& lq, bool defect_module) {
    const PrequantOptions& o = lq.options;
    const int64_t group = o.group < 0 ? lq.in : o.group, groups = lq.in / group;
    const int64_t zw = awq_gemv_zero_words(lq.in, group);
    const std::string& m = lq.module;
    out.push_back({m + ".qweight",
                   "I32",
                   {lq.out, lq.in / 8},
                   static_cast<uint64_t>(lq.out * (lq.in / 8)) * 4,
                   [lq](std::ostream& s) {
                       const LogicalQuant& t = lq.get();
                       std::vector<uint32_t> words;
                       for (int64_t n = 0; n < t.out; ++n) {
                           const std::span<const uint32_t> row(t.q.data() + n * t.in,
                                                               static_cast<size_t>(t.in));
                           const std::vector<uint32_t> packed = pack_bit_stream(row, 4);
                           words.insert(words.end(), packed.begin(), packed.end());
                       }
                       write_words(s, words);
                       lq.done();
                   }});
    out.push_back({m + ".qzeros",
                   "I32",
                   {lq.out, zw},
                   static_cast<uint64_t>(lq.out * zw) * 4,
                   [lq, groups, zw](std::ostream& s) {
                       const LogicalQuant& t = lq.get();
                       std::vector<uint32_t> words, fields(static_cast<size_t>(8 * zw));
                       for (int64_t n = 0; n < t.out; ++n) {
                           std::fill(fields.begin(), fields.end(), 0u);
                           for (int64_t g = 0; g < groups; ++g)
                               fields[static_cast<size_t>(g)] =
                                   static_cast<uint32_t>(t.z[static_cast<size_t>(g * t.out + n)]);
                           const std::vector<uint32_t> packed = pack_bit_stream(fields, 4);
                           words.insert(words.end(), packed.begin(), packed.end());
                       }
                       write_words(s, words);
                       lq.done();
                   }});
    if (defect_module && o.defect == "missing-scales") return;
    const int64_t rows = defect_module && o.defect == "scales-shape" ? lq.out - 8 : lq.out;
    out.push_back({m + ".scales",
                   "F16",
                   {rows, 8 * zw},
                   static_cast<uint64_t>(rows * 8 * zw) * 2,
                   [lq, groups, zw, rows](std::ostream& s) {
                       const LogicalQuant& t = lq.get();
                       std::string bytes;
                       for (int64_t n = 0; n < rows; ++n)
                           for (int64_t g = 0; g < 8 * zw; ++g)
                               put_u16(bytes, g < groups
                                                  ? t.scale_bits[static_cast<size_t>(g * t.out + n)]
                                                  : uint16_t{0});
                       s.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
                       lq.done();
                   }});
}

// compressed-tensors (§5.3): pack-quantized fields q + 2^(b-1) (signed codes with an offset), or
// int-quantized I8 codes; zero points only when asymmetric.
void append_ct(std::vector<StTensor>& out, const LazyQuant& lq, bool defect_module) {
    const PrequantOptions& o = lq.options;
    const int b = o.bits;
    const int64_t group = o.group < 0 ? lq.in : o.group, groups = lq.in / group;
    const std::string& m = lq.module;
    if (is_ct_int(o)) {
        out.push_back({m + ".weight",
                       "I8",
                       {lq.out, lq.in},
                       static_cast<uint64_t>(lq.out * lq.in),
                       [lq](std::ostream& s) {
                           const LogicalQuant& t = lq.get();
                           std::string bytes;  // q_s = q - 128, two's complement
                           for (uint32_t q : t.q) bytes.push_back(static_cast<char>(q - 128u));
                           s.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
                           lq.done();
                       }});
    } else {
        const int64_t per_word = 32 / b, words_per_row = (lq.in + per_word - 1) / per_word;
        out.push_back(
            {m + ".weight_packed",
             "I32",
             {lq.out, words_per_row},
             static_cast<uint64_t>(lq.out * words_per_row) * 4,
             [lq, b](std::ostream& s) {
                 const LogicalQuant& t = lq.get();
                 std::vector<uint32_t> words;
                 const int32_t half = 1 << (b - 1);
                 std::vector<int32_t> row(static_cast<size_t>(t.in));
                 for (int64_t n = 0; n < t.out; ++n) {
                     for (int64_t k = 0; k < t.in; ++k)  // the signed code q - 2^(b-1)
                         row[static_cast<size_t>(k)] =
                             static_cast<int32_t>(t.q[static_cast<size_t>(n * t.in + k)]) - half;
                     const std::vector<uint32_t> packed = pack_ct_signed(row, b);
                     words.insert(words.end(), packed.begin(), packed.end());
                 }
                 write_words(s, words);
                 lq.done();
             }});
    }
    if (!(defect_module && o.defect == "missing-scales"))
        out.push_back(scales_tensor(
            m + ".weight_scale", lq, true,
            defect_module && o.defect == "scales-shape" ? lq.out - 8 : lq.out, scale_st_dtype(o)));
    if (!o.sym) {
        if (is_ct_int(o)) {
            out.push_back({m + ".weight_zero_point",
                           "I8",
                           {lq.out, groups},
                           static_cast<uint64_t>(lq.out * groups),
                           [lq, groups](std::ostream& s) {
                               const LogicalQuant& t = lq.get();
                               std::string bytes;
                               for (int64_t n = 0; n < t.out; ++n)
                                   for (int64_t g = 0; g < groups; ++g)
                                       bytes.push_back(static_cast<char>(
                                           t.z[static_cast<size_t>(g * t.out + n)] - 128));
                               s.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
                               lq.done();
                           }});
        } else {
            const int64_t per_word = 32 / b, zp_rows = (lq.out + per_word - 1) / per_word;
            out.push_back({m + ".weight_zero_point",
                           "I32",
                           {zp_rows, groups},
                           static_cast<uint64_t>(zp_rows * groups) * 4,
                           [lq, b, groups, zp_rows](std::ostream& s) {
                               const LogicalQuant& t = lq.get();
                               // Packed along dim 0: column g's fields over the rows n.
                               std::vector<std::vector<uint32_t>> columns;
                               std::vector<int32_t> column(static_cast<size_t>(t.out));
                               for (int64_t g = 0; g < groups; ++g) {
                                   for (int64_t n = 0; n < t.out; ++n)  // signed zero point
                                       column[static_cast<size_t>(n)] =
                                           t.z[static_cast<size_t>(g * t.out + n)] - (1 << (b - 1));
                                   columns.push_back(pack_ct_signed(column, b));
                               }
                               std::vector<uint32_t> words;  // row-major [zp_rows, groups]
                               for (int64_t w = 0; w < zp_rows; ++w)
                                   for (const auto& c : columns)
                                       words.push_back(c[static_cast<size_t>(w)]);
                               write_words(s, words);
                               lq.done();
                           }});
        }
    }
    if (!is_ct_int(o))
        out.push_back({m + ".weight_shape", "I64", {2}, 16, [lq](std::ostream& s) {
                           std::string bytes;
                           for (int64_t v : {lq.out, lq.in}) {
                               put_u32(bytes, static_cast<uint32_t>(v));
                               put_u32(bytes,
                                       static_cast<uint32_t>(static_cast<uint64_t>(v) >> 32));
                           }
                           s.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
                           lq.done();
                       }});
}

void append_entries(std::vector<StTensor>& out, const PlanUnit& unit, uint64_t seed,
                    const PrequantOptions& o) {
    const std::string fdt = float_dtype(o);
    if (!unit.quantized) {
        const NormTensor& n = unit.norm;
        out.push_back(float_tensor(n.name, n.dims.empty() ? std::vector<int64_t>{n.length} : n.dims,
                                   false, n.center, n.spread, seed, fdt));
        return;
    }
    const QuantTensor& q = unit.quant;
    if (!is_quantized_linear(unit)) {  // embedding, lm_head: float like real checkpoints
        out.push_back(float_tensor(q.name, {q.rows, q.cols}, true, 0, 0, seed, fdt));
        return;
    }
    const std::string module = q.name.substr(0, q.name.size() - std::string(".weight").size());
    const LazyQuant lq{module, q.rows, q.cols, o, seed};
    const bool defect_module = module == kPrequantDefectModule;
    const size_t first = out.size();
    if (o.format == "gptq")
        append_gptq(out, lq, defect_module);
    else if (o.format == "awq" && o.awq_version == "gemv")
        append_awq_gemv(out, lq, defect_module);
    else if (o.format == "awq")
        append_awq(out, lq, defect_module);
    else
        append_ct(out, lq, defect_module);
    *lq.users_left = static_cast<int>(out.size() - first);  // each of them calls done()
}

}  // namespace

const std::vector<std::string>& prequant_defect_names() {
    static const std::vector<std::string> names = {
        "zero-out-of-range",  "g-idx-out-of-range",   "missing-scales",
        "scales-shape",       "unknown-quant-method", "unknown-layout",
        "inexact-bf16-scale", "bits-not-allowed",     "int8-range"};
    return names;
}

void check_prequant_options(const PrequantOptions& o, const ModelPlan* plan) {
    const bool bits_defect = o.defect == "bits-not-allowed";
    auto fail = [](const std::string& why) { throw std::runtime_error(why); };
    if (o.format == "gptq") {
        if (!bits_defect && o.bits != 2 && o.bits != 3 && o.bits != 4 && o.bits != 8)
            fail("--format gptq: --bits must be 2, 3, 4 or 8");
    } else if (o.format == "awq") {
        if (o.bits != 4) fail("--format awq: --bits must be 4 (AutoAWQ gemm)");
        if (o.sym) fail("--format awq is asymmetric (zero_point true): use --asym");
    } else if (is_ct(o)) {
        if (!bits_defect && (o.bits < 2 || o.bits > 8))
            fail("--format compressed-tensors: --bits must be 2..8");
        if (is_ct_int(o) && o.bits != 8) fail("--ct-format int-quantized needs --bits 8");
    } else {
        fail("prequant: unknown format " + o.format);
    }
    if (o.format != "awq" && o.awq_version != "gemm") fail("--awq-version applies to --format awq");
    if (o.format == "awq" && o.awq_version == "gemv" && o.group >= 0 && o.group != 32 &&
        o.group != 64 && o.group < 128)
        fail("--awq-version gemv: AutoAWQ's calculate_zeros_width knows groups 32, 64 and >= 128");
    if (o.format != "gptq" && (o.checkpoint_format != "gptq" || o.desc_act != "none"))
        fail("--checkpoint-format and --desc-act apply to --format gptq");
    if (!is_ct(o) && o.scale_dtype != "f16")
        fail("--format " + o.format +
             " stores F16 scales (--scale-dtype bf16 is for compressed-tensors)");
    if (o.group != -1 && o.group < 1) fail("--group must be positive or -1");
    if (o.defect == "zero-out-of-range" && !(o.format == "gptq" && o.checkpoint_format == "gptq"))
        fail(
            "--defect zero-out-of-range needs --format gptq --checkpoint-format gptq (v1 stores "
            "z-1, so its field 2^bits-1 decodes to 2^bits; other layouts cannot hold it)");
    if (o.defect == "g-idx-out-of-range" && o.format != "gptq")
        fail("--defect g-idx-out-of-range needs --format gptq");
    if (o.defect == "int8-range" && (o.bits != 8 || o.sym))
        fail("--defect int8-range needs --bits 8 --asym (a symmetric 8-bit q - z always fits)");
    if (o.defect == "inexact-bf16-scale" && !(is_ct(o) && o.scale_dtype == "bf16"))
        fail("--defect inexact-bf16-scale needs --format compressed-tensors --scale-dtype bf16");
    if (plan == nullptr) return;
    for (const PlanUnit& u : plan->units) {
        if (!is_quantized_linear(u)) continue;
        const int64_t in = u.quant.cols, out = u.quant.rows;
        const int64_t group = o.group < 0 ? in : o.group;
        const std::string& name = u.quant.name;
        if (o.format == "gptq" && ((in * o.bits) % 32 != 0 || (out * o.bits) % 32 != 0))
            fail(name + ": in*bits and out*bits must be multiples of 32 for gptq");
        if (o.format != "gptq" && in % group != 0)
            fail(name + ": --group " + std::to_string(o.group) + " does not divide its " +
                 std::to_string(in) + " input columns (" + o.format + " needs whole groups)");
        if (o.format == "awq" && out % 8 != 0) fail(name + ": awq needs out % 8 == 0");
        if ((o.desc_act == "blocks" || o.desc_act == "actorder") &&
            (group % 32 != 0 || in % group != 0 || in / group < 2))
            fail("--desc-act " + o.desc_act +
                 ": needs a group that is a multiple of 32 and at "
                 "least two groups per row (" +
                 name + " has " + std::to_string(in) + " columns)");
    }
}

void add_prequant_quantization(const fs::path& out_dir, const PrequantOptions& o) {
    const fs::path path = out_dir / "config.json";
    ojson config;
    {
        std::ifstream in(path);
        config = ojson::parse(in);
    }
    ojson q;
    if (o.format == "gptq") {
        q = {{"bits", claimed_bits(o)},
             {"group_size", o.group},
             {"damp_percent", 0.01},
             {"desc_act", o.desc_act != "none"},
             {"static_groups", false},
             {"sym", o.sym},
             {"true_sequential", true},
             {"lm_head", false},
             {"model_name_or_path", nullptr},
             {"model_file_base_name", "model"},
             {"quant_method", "gptq"},
             {"checkpoint_format", o.defect == "unknown-layout" ? "marlin" : o.checkpoint_format},
             {"pack_dtype", "int32"},
             {"meta", {{"quantizer", {"rebox-mkfixture"}}}}};
    } else if (o.format == "awq") {
        q = {{"quant_method", "awq"},
             {"zero_point", true},
             {"group_size", o.group},
             {"bits", claimed_bits(o)},
             {"version", o.defect == "unknown-layout" ? "gemv_fast" : o.awq_version},
             {"modules_to_not_convert", nullptr}};
        // Qwen2-VL / Qwen2.5-VL AWQ checkpoints keep the vision tower in float and say so.
        const std::string model_type = config.value("model_type", "");
        if (model_type == "qwen2_vl" || model_type == "qwen2_5_vl")
            q["modules_to_not_convert"] = ojson::array({"visual"});
    } else {
        const std::string format = o.defect == "unknown-layout" ? "marlin-24" : o.ct_format;
        ojson weights = {{"num_bits", claimed_bits(o)},
                         {"type", "int"},
                         {"symmetric", o.sym},
                         {"group_size", o.group < 0 ? ojson(nullptr) : ojson(o.group)},
                         {"strategy", o.group < 0 ? "channel" : "group"},
                         {"block_structure", nullptr},
                         {"dynamic", false},
                         {"actorder", nullptr},
                         {"observer", "minmax"},
                         {"observer_kwargs", ojson::object()}};
        q = {{"config_groups",
              {{"group_0",
                {{"targets", {"Linear"}},
                 {"weights", weights},
                 {"input_activations", nullptr},
                 {"output_activations", nullptr},
                 {"format", format}}}}},
             {"format", format},
             {"global_compression_ratio", nullptr},
             {"ignore", {"lm_head"}},
             {"kv_cache_scheme", nullptr},
             {"quant_method", "compressed-tensors"},
             {"quantization_status", "compressed"},
             {"sparsity_config", ojson::object()},
             {"version", "0.12.2"}};
    }
    if (o.defect == "unknown-quant-method") q["quant_method"] = "hqq";
    config["quantization_config"] = q;
    config["torch_dtype"] = is_ct(o) ? "bfloat16" : "float16";
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << config.dump(2) << "\n";
    if (!out) throw std::runtime_error(path.string() + ": cannot write");
}

void write_prequant_model_files(const fs::path& out_dir, const ModelPlan& plan, int shard_count,
                                uint64_t seed, const PrequantOptions& options) {
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

void write_prequant_fixture(const std::filesystem::path& out_dir, const ModelPlan& plan,
                            uint64_t seed, const PrequantOptions& options) {
    check_prequant_options(options, &plan);
    add_prequant_quantization(out_dir, options);
    write_prequant_model_files(out_dir, plan, 1, seed, options);
}

}  // namespace mkfixture
