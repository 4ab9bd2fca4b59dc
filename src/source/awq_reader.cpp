// read_awq_model: AutoAWQ GEMM checkpoints (docs/formats.md §5). Module P stores P.qweight int32
// [in, out/8] and P.qzeros int32 [in/group, out/8], 4-bit codes packed along the output dim in
// AWQ's nibble order (nibble i holds column [0,2,4,6,1,3,5,7][i] of its 8), and P.scales
// [in/group, out]. The view reads code (r, k) where it is stored, so no transposed copy is made.
#include <nlohmann/json.hpp>

#include "format/shape_text.hpp"
#include "prequant_common.hpp"
#include "source/prequant_readers.hpp"
#include "source_helpers.hpp"

namespace rebox {
namespace {

using detail::shape_text;
using prequant::Located;

constexpr const char* kConfigFix = "use the config.json AutoAWQ wrote";

class AwqReader {
  public:
    AwqReader(const ModelDir& dir, SourceModel& model) : reader_(dir, model) {
        ok_ = parse_config(*prequant::quantization_config(dir.config()));
    }

    void run() {
        reader_.walk({".qweight"}, {".qzeros", ".scales"},
                     [this](const std::string& module, const Located& where) {
                         if (ok_) read_module(module, where);
                     });
    }

  private:
    bool parse_config(const nlohmann::json& q) {
        std::string version = "gemm";
        if (const auto it = q.find("version"); it != q.end() && it->is_string()) {
            version = it->get<std::string>();
            for (char& c : version)
                c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        }
        if (version != "gemm") {
            reader_.block_config("quantization_config.version",
                                 "AWQ version '" + q["version"].get<std::string>() +
                                     "' is not supported (expected gemm)",
                                 "save the model with AutoAWQ's GEMM kernels (version gemm)");
            return false;
        }
        auto bits = prequant::json_int(q, "bits");
        if (!bits) bits = prequant::json_int(q, "w_bit");
        if (!bits || *bits != 4) {
            reader_.block_config("quantization_config.bits",
                                 "AWQ bits " +
                                     (bits ? std::to_string(*bits) : std::string("missing")) +
                                     " (expected 4: GEMM packs 8 nibbles per int32)",
                                 kConfigFix);
            return false;
        }
        auto group = prequant::json_int(q, "group_size");
        if (!group) group = prequant::json_int(q, "q_group_size");
        if (!group || (*group < 1 && *group != -1)) {
            reader_.block_config("quantization_config.group_size",
                                 "AWQ group_size " +
                                     (group ? std::to_string(*group) : std::string("missing")) +
                                     " (expected -1 or a positive integer)",
                                 kConfigFix);
            return false;
        }
        group_ = *group;  // -1: one group per row, resolved per module
        if (const auto it = q.find("zero_point"); it != q.end() && *it != true) {
            reader_.block_config("quantization_config.zero_point",
                                 "AWQ zero_point " + it->dump() +
                                     " (expected true: GEMM qzeros hold the zero points)",
                                 kConfigFix);
            return false;
        }
        return true;
    }

    void read_module(const std::string& module, const Located& qweight) {
        const std::string name = module + ".weight";
        const auto& shape = qweight.info->shape;
        if (shape.size() != 2 || shape[0] < 1 || shape[1] < 1) {
            reader_.block(
                name, qweight,
                qweight.info->name + " has shape " + shape_text(shape) + " (expected [in, out/8])",
                kConfigFix);
            return;
        }
        const int64_t in = shape[0], out = shape[1] * 8;
        const int64_t group = group_ == -1 ? in : group_;
        if (in % group != 0) {
            reader_.block(name, qweight,
                          std::to_string(in) + " input rows of " + qweight.info->name +
                              " are not a multiple of group_size " + std::to_string(group),
                          kConfigFix);
            return;
        }
        const int64_t n_groups = in / group;
        if (!reader_.expect(name, qweight, {StDtype::I32, StDtype::U32}, shape, "")) return;
        const Located* scales =
            reader_.require(module, ".scales", "F16 " + shape_text({n_groups, out}));
        const Located* qzeros =
            reader_.require(module, ".qzeros", "I32 " + shape_text({n_groups, out / 8}));
        if (!scales || !qzeros) return;
        const std::string why = "for " + qweight.info->name + " " + shape_text(shape) +
                                ", group_size " + std::to_string(group_);
        IntQuantView v;
        if (!reader_.read_scales(name, *scales, {n_groups, out}, why, true, &v) ||
            !reader_.expect(name, *qzeros, {StDtype::I32, StDtype::U32}, {n_groups, out / 8}, why))
            return;
        v.bits = 4;
        v.rows = out;
        v.cols = in;
        v.group = group;
        v.n_groups = n_groups;
        v.code_layout = IntCodeLayout::awq_output_packed;
        v.codes = qweight.file->data(*qweight.info);
        v.zero_layout = IntZeroLayout::awq_output_packed;
        v.zeros = qzeros->file->data(*qzeros->info);
        v.method = "awq";
        v.packed_bytes = v.codes.size() + v.zeros.size() + v.scales.size();
        reader_.add_int_quant(name, qweight, v);
    }

    prequant::PackedReader reader_;
    int64_t group_ = 0;
    bool ok_ = false;
};

}  // namespace

SourceModel read_awq_model(const ModelDir& model_dir) {
    return source_detail::read_with<AwqReader>(model_dir, "awq");
}

}  // namespace rebox
