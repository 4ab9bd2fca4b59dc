// read_compressed_tensors_model: llm-compressor / vLLM compressed-tensors checkpoints
// (docs/formats.md §5). format "pack-quantized": P.weight_packed int32 [out, ceil(in/pf)] (pf =
// 32/bits codes per word, lsb0, stored as q_signed + 2^(bits-1)), P.weight_scale [out, n_groups],
// P.weight_shape [2] = [out, in], optional P.weight_zero_point int32 [ceil(out/pf), n_groups]
// (packed along dim 0 with the same offset) and P.weight_g_idx int32 [in]; without a zero point
// z = 2^(bits-1), so q - z is the signed code. format "int-quantized": P.weight int8 [out, in] with
// P.weight_scale, z = 0 or the signed I8 P.weight_zero_point. One weight setting for all
// config_groups (group or channel strategy).
#include <nlohmann/json.hpp>

#include "format/shape_text.hpp"
#include "prequant_common.hpp"
#include "source/prequant_readers.hpp"
#include "source_helpers.hpp"

namespace rebox {
namespace {

using detail::shape_text;
using prequant::Located;

constexpr const char* kConfigFix = "use the config.json llm-compressor wrote";

struct WeightSetting {
    int bits = 0;
    bool symmetric = true;
    int64_t group_size = 0;  // 0: channel strategy (one group per row)
};

class CtReader {
  public:
    CtReader(const ModelDir& dir, SourceModel& model) : reader_(dir, model) {
        ok_ = parse_config(*prequant::quantization_config(dir.config()));
    }

    void run() {
        if (packed_) {
            reader_.walk({".weight_packed"},
                         {".weight_scale", ".weight_zero_point", ".weight_shape", ".weight_g_idx"},
                         [this](const std::string& module, const Located& where) {
                             if (ok_) read_packed(module, where);
                         });
            return;
        }
        reader_.walk({".weight"}, {".weight_scale", ".weight_zero_point", ".weight_g_idx"},
                     [this](const std::string& module, const Located& where) {
                         if (!reader_.find(module + ".weight_scale"))
                             reader_.add_float(where);
                         else if (ok_)
                             read_int8(module, where);
                     });
    }

  private:
    bool parse_config(const nlohmann::json& q) {
        const auto fmt = q.find("format");
        const std::string format =
            fmt != q.end() && fmt->is_string() ? fmt->get<std::string>() : "";
        if (format != "pack-quantized" && format != "int-quantized") {
            reader_.block_config(
                "quantization_config.format",
                "compressed-tensors format '" + format +
                    "' is not supported (expected pack-quantized or int-quantized)",
                "save the model with an integer weight format");
            return false;
        }
        packed_ = format == "pack-quantized";
        const auto groups = q.find("config_groups");
        std::optional<WeightSetting> setting;
        if (groups != q.end() && groups->is_object())
            for (const auto& [key, group] : groups->items()) {
                const std::string field = "quantization_config.config_groups." + key;
                if (!group.is_object() || !group.contains("weights") ||
                    !group["weights"].is_object()) {
                    reader_.block_config(field, "has no \"weights\" object", kConfigFix);
                    return false;
                }
                if (const auto f = group.find("format");
                    f != group.end() && f->is_string() && *f != format) {
                    reader_.block_config(field + ".format",
                                         "format '" + f->get<std::string>() + "' differs from '" +
                                             format + "' (one format per checkpoint is supported)",
                                         kConfigFix);
                    return false;
                }
                const auto parsed = parse_weights(group["weights"], field + ".weights");
                if (!parsed) return false;
                if (setting &&
                    (setting->bits != parsed->bits || setting->group_size != parsed->group_size ||
                     setting->symmetric != parsed->symmetric)) {
                    reader_.block_config(field + ".weights",
                                         "differs from another config group (one weight setting "
                                         "for all groups is supported)",
                                         kConfigFix);
                    return false;
                }
                setting = parsed;
            }
        if (!setting) {
            reader_.block_config("quantization_config.config_groups",
                                 "missing or empty (expected the weights' num_bits and strategy)",
                                 kConfigFix);
            return false;
        }
        if (!packed_ && setting->bits != 8) {
            reader_.block_config("quantization_config.config_groups",
                                 "int-quantized with num_bits " + std::to_string(setting->bits) +
                                     " (expected 8: int8 weights)",
                                 kConfigFix);
            return false;
        }
        setting_ = *setting;
        return true;
    }

    std::optional<WeightSetting> parse_weights(const nlohmann::json& w, const std::string& field) {
        WeightSetting s;
        const auto bits = prequant::json_int(w, "num_bits");
        if (!bits || *bits < 2 || *bits > 8) {
            reader_.block_config(field + ".num_bits",
                                 "num_bits " +
                                     (w.contains("num_bits") ? w["num_bits"].dump() : "missing") +
                                     " (expected 2 to 8)",
                                 kConfigFix);
            return std::nullopt;
        }
        s.bits = static_cast<int>(*bits);
        if (const auto t = w.find("type"); t != w.end() && *t != "int") {
            reader_.block_config(field + ".type", "type " + t->dump() + " (expected \"int\")",
                                 "only integer weights have an exact ggml block type");
            return std::nullopt;
        }
        if (const auto sym = w.find("symmetric"); sym != w.end() && sym->is_boolean())
            s.symmetric = *sym;
        const auto strategy = w.find("strategy");
        const std::string strat =
            strategy != w.end() && strategy->is_string() ? strategy->get<std::string>() : "";
        if (strat == "group") {
            const auto group = prequant::json_int(w, "group_size");
            if (!group || *group < 1) {
                reader_.block_config(field + ".group_size",
                                     "group strategy needs a positive group_size", kConfigFix);
                return std::nullopt;
            }
            s.group_size = *group;
        } else if (strat != "channel") {
            reader_.block_config(
                field + ".strategy",
                "strategy '" + strat + "' is not supported (expected group or channel)",
                kConfigFix);
            return std::nullopt;
        }
        return s;
    }

    // Common tail: scales, optional g_idx, then the tensor.
    bool finish(const std::string& module, const std::string& name, const Located& anchor,
                IntQuantView v, const std::string& why) {
        const Located* scale =
            reader_.require(module, ".weight_scale", shape_text({v.rows, v.n_groups}));
        if (!scale || !reader_.read_scales(name, *scale, {v.rows, v.n_groups}, why, false, &v))
            return false;
        v.method = "compressed-tensors";
        v.symmetric = setting_.symmetric;
        v.packed_bytes += v.codes.size() + v.zeros.size() + v.scales.size();
        if (!reader_.read_g_idx(name, module + ".weight_g_idx", why, &v)) return false;
        reader_.add_int_quant(name, anchor, v);
        return true;
    }

    void set_groups(IntQuantView* v) const {
        v->group = setting_.group_size == 0 ? v->cols : setting_.group_size;
        v->n_groups = (v->cols + v->group - 1) / v->group;
    }

    void read_packed(const std::string& module, const Located& packed) {
        const std::string name = module + ".weight";
        const int bits = setting_.bits;
        const int64_t per_word = 32 / bits;
        const Located* shape_part = reader_.require(module, ".weight_shape", "I64 [2] = [out, in]");
        if (!shape_part) return;
        if (!reader_.expect(name, *shape_part, {StDtype::I64, StDtype::I32}, {2}, "[out, in]"))
            return;
        const std::span<const uint8_t> dims = shape_part->file->data(*shape_part->info);
        const auto dim = [&](int i) -> int64_t {
            if (shape_part->info->dtype == StDtype::I32) return prequant::load_i32(dims, i);
            int64_t value = 0;
            for (int b = 7; b >= 0; --b) value = value << 8 | dims[8 * i + b];
            return value;
        };
        const int64_t out = dim(0), in = dim(1);
        const std::string why =
            "for weight_shape " + shape_text({out, in}) + " at num_bits " + std::to_string(bits);
        if (out < 1 || in < 1 ||
            !reader_.expect(name, packed, {StDtype::I32, StDtype::U32},
                            {out, (in + per_word - 1) / per_word}, why))
            return;
        IntQuantView v;
        v.bits = bits;
        v.rows = out;
        v.cols = in;
        set_groups(&v);
        v.code_layout = IntCodeLayout::row_words;
        v.codes = packed.file->data(*packed.info);
        v.zero_layout = IntZeroLayout::constant;
        v.zero_constant = 1 << (bits - 1);
        if (const Located* zp = reader_.find(module + ".weight_zero_point")) {
            if (!reader_.expect(name, *zp, {StDtype::I32, StDtype::U32},
                                {(out + per_word - 1) / per_word, v.n_groups},
                                why + " (packed along dim 0)"))
                return;
            v.zero_layout = IntZeroLayout::column_words;
            v.zeros = zp->file->data(*zp->info);
        } else if (!setting_.symmetric) {
            reader_.require(module, ".weight_zero_point",
                            "the zero points of an asymmetric scheme, I32 " +
                                shape_text({(out + per_word - 1) / per_word, v.n_groups}));
            return;
        }
        finish(module, name, packed, v, why);
    }

    void read_int8(const std::string& module, const Located& weight) {
        const std::string name = module + ".weight";
        const auto& shape = weight.info->shape;
        if (shape.size() != 2 || !reader_.expect(name, weight, {StDtype::I8}, shape, "")) {
            if (shape.size() != 2)
                reader_.block(name, weight,
                              "shape " + shape_text(shape) + " (expected [out, in] int8)",
                              kConfigFix);
            return;
        }
        IntQuantView v;
        v.bits = 8;
        v.rows = shape[0];
        v.cols = shape[1];
        set_groups(&v);
        v.code_layout = IntCodeLayout::row_int8;
        v.codes = weight.file->data(*weight.info);
        v.zero_layout = IntZeroLayout::constant;
        v.zero_constant = 0;
        if (const Located* zp = reader_.find(module + ".weight_zero_point")) {
            if (!reader_.expect(name, *zp, {StDtype::I8}, {v.rows, v.n_groups},
                                "for weight " + shape_text(shape)))
                return;
            v.zero_layout = IntZeroLayout::row_int8;
            v.zeros = zp->file->data(*zp->info);
        } else if (!setting_.symmetric) {
            reader_.require(
                module, ".weight_zero_point",
                "the zero points of an asymmetric scheme, I8 " + shape_text({v.rows, v.n_groups}));
            return;
        }
        finish(module, name, weight, v, "for weight " + shape_text(shape));
    }

    prequant::PackedReader reader_;
    WeightSetting setting_;
    bool packed_ = true;
    bool ok_ = false;
};

}  // namespace

SourceModel read_compressed_tensors_model(const ModelDir& model_dir) {
    return source_detail::read_with<CtReader>(model_dir, "compressed-tensors");
}

}  // namespace rebox
