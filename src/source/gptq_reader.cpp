// read_gptq_model: AutoGPTQ / GPTQModel checkpoints (docs/formats.md §5). Module P stores
// P.qweight int32 [in*bits/32, out] (codes packed along the input dim, one lsb0 stream per output
// column; 3-bit codes cross words), P.qzeros int32 [n_groups, out*bits/32] (packed along the
// output dim), P.scales [n_groups, out] and optionally P.g_idx int32 [in]. checkpoint_format
// "gptq" (v1, the default) stores z - 1, "gptq_v2" stores z. Bits 2, 3, 4, 8. g_idx values are
// range-checked here; whether each 32-value block lies in one group is the plan's question.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "format/shape_text.hpp"
#include "prequant_common.hpp"
#include "source/int_quant_view.hpp"
#include "source/prequant_readers.hpp"
#include "source_helpers.hpp"

namespace rebox {
namespace {

using detail::shape_text;
using prequant::Located;

constexpr const char* kConfigFix = "use the config.json the GPTQ quantizer wrote";

struct GptqConfig {
    int bits = 0;
    int64_t group_size = 0;  // -1: one group per row
    bool v1 = true;          // checkpoint_format "gptq": stored zero = z - 1
    bool sym = false;
};

class GptqReader {
  public:
    GptqReader(const ModelDir& dir, SourceModel& model) : reader_(dir, model) {
        ok_ = parse_config(*prequant::quantization_config(dir.config()));
    }

    void run() {
        reader_.walk({".qweight"}, {".qzeros", ".scales", ".g_idx"},
                     [this](const std::string& module, const Located& where) {
                         if (ok_) read_module(module, where);
                     });
    }

  private:
    bool parse_config(const nlohmann::json& q) {
        const auto bits = prequant::json_int(q, "bits");
        if (!bits || (*bits != 2 && *bits != 3 && *bits != 4 && *bits != 8)) {
            reader_.block_config("quantization_config.bits",
                                 "GPTQ bits " +
                                     (q.contains("bits") ? q["bits"].dump() : "missing") +
                                     " (expected 2, 3, 4 or 8)",
                                 kConfigFix);
            return false;
        }
        cfg_.bits = static_cast<int>(*bits);
        const auto group = prequant::json_int(q, "group_size");
        if (!group || (*group != -1 && *group < 1)) {
            reader_.block_config(
                "quantization_config.group_size",
                "GPTQ group_size " +
                    (q.contains("group_size") ? q["group_size"].dump() : "missing") +
                    " (expected -1 or a positive integer)",
                kConfigFix);
            return false;
        }
        cfg_.group_size = *group;
        std::string format = "gptq";
        for (const char* key : {"checkpoint_format", "format"})
            if (const auto it = q.find(key); it != q.end() && it->is_string()) {
                format = it->get<std::string>();
                break;
            }
        if (format != "gptq" && format != "gptq_v2") {
            reader_.block_config("quantization_config.checkpoint_format",
                                 "GPTQ checkpoint_format '" + format +
                                     "' is not supported (expected gptq or gptq_v2)",
                                 "save the model in the gptq or gptq_v2 format");
            return false;
        }
        cfg_.v1 = format == "gptq";
        if (const auto it = q.find("pack_dtype"); it != q.end() && *it != "int32") {
            reader_.block_config("quantization_config.pack_dtype",
                                 "GPTQ pack_dtype " + it->dump() + " (expected int32)", kConfigFix);
            return false;
        }
        if (const auto it = q.find("sym"); it != q.end() && it->is_boolean()) cfg_.sym = *it;
        return true;
    }

    void read_module(const std::string& module, const Located& qweight) {
        const std::string name = module + ".weight";
        const int bits = cfg_.bits;
        const std::string bits_text = "at bits " + std::to_string(bits);
        const auto& shape = qweight.info->shape;
        if (shape.size() != 2 || shape[0] < 1 || shape[1] < 1 || (shape[0] * 32) % bits != 0 ||
            (cfg_.bits == 3 && shape[0] % 3 != 0)) {
            reader_.block(name, qweight,
                          qweight.info->name + " has shape " + shape_text(shape) +
                              " (expected [in*bits/32, out] with whole codes " + bits_text + ")",
                          kConfigFix);
            return;
        }
        if (qweight.info->dtype != StDtype::I32 && qweight.info->dtype != StDtype::U32) {
            reader_.block(name, qweight,
                          qweight.info->name + " has dtype " +
                              std::string(st_dtype_name(qweight.info->dtype)) +
                              " (expected I32 packed words)",
                          kConfigFix);
            return;
        }
        const int64_t in = shape[0] * 32 / bits, out = shape[1];
        const int64_t group = cfg_.group_size == -1 ? in : cfg_.group_size;
        const int64_t n_groups = (in + group - 1) / group;
        const Located* scales =
            reader_.require(module, ".scales", "F16 " + shape_text({n_groups, out}));
        const Located* qzeros = reader_.require(
            module, ".qzeros", "I32 [" + std::to_string(n_groups) + ", out*bits/32]");
        if (!scales || !qzeros) return;
        const std::string why = "for " + qweight.info->name + " " + shape_text(shape) + " " +
                                bits_text + ", group_size " + std::to_string(cfg_.group_size);
        if ((out * bits) % 32 != 0) {
            reader_.block(name, *qzeros,
                          std::to_string(out) +
                              " output columns do not pack into whole qzeros words " + bits_text,
                          kConfigFix);
            return;
        }
        IntQuantView v;
        if (!reader_.read_scales(name, *scales, {n_groups, out}, why, true, &v) ||
            !reader_.expect(name, *qzeros, {StDtype::I32, StDtype::U32},
                            {n_groups, out * bits / 32}, why))
            return;
        v.bits = bits;
        v.rows = out;
        v.cols = in;
        v.group = group;
        v.n_groups = n_groups;
        v.code_layout = IntCodeLayout::input_packed_columns;
        v.codes = qweight.file->data(*qweight.info);
        v.zero_layout = IntZeroLayout::output_packed_rows;
        v.zeros = qzeros->file->data(*qzeros->info);
        v.zero_add = cfg_.v1 ? 1 : 0;
        v.method = cfg_.v1 ? "gptq" : "gptq_v2";
        v.symmetric = cfg_.sym;
        v.packed_bytes = v.codes.size() + v.zeros.size() + v.scales.size();
        if (!reader_.read_g_idx(name, module + ".g_idx", why, &v)) return;
        if (cfg_.v1 && !check_v1_zeros(name, *qzeros, v)) return;
        reader_.add_int_quant(name, qweight, v);
    }

    // checkpoint_format gptq stores z - 1: a stored 2^bits - 1 means z = 2^bits, outside the
    // codes' range (what a v1 packer makes of z = 0): a blocker naming the first one.
    bool check_v1_zeros(const std::string& name, const Located& qzeros, const IntQuantView& v) {
        const int32_t limit = 1 << v.bits;
        for (int64_t g = 0; g < v.n_groups; ++g)
            for (int64_t r = 0; r < v.rows; ++r)
                if (int_zero(v, r, g) >= limit) {
                    reader_.block(name, qzeros,
                                  qzeros.info->name + ": stored zero " + std::to_string(limit - 1) +
                                      " of group " + std::to_string(g) + " column " +
                                      std::to_string(r) + " means z = " + std::to_string(limit) +
                                      " (checkpoint_format gptq adds 1), "
                                      "outside [0, " +
                                      std::to_string(limit) + ")",
                                  "re-save the checkpoint as gptq_v2 (GPTQModel) or fix the zero");
                    return false;
                }
        return true;
    }

    prequant::PackedReader reader_;
    GptqConfig cfg_;
    bool ok_ = false;
};

}  // namespace

SourceModel read_gptq_model(const ModelDir& model_dir) {
    return source_detail::read_with<GptqReader>(model_dir, "gptq");
}

}  // namespace rebox
