// verify's pairing of a compressed-tensors module: pack-quantized (P.weight_packed, P.weight_scale,
// P.weight_zero_point, P.weight_shape, P.weight_g_idx) or int-quantized (I8 P.weight with
// P.weight_scale and P.weight_zero_point), docs/formats.md §5.3.
#include "rebox/error.hpp"
#include "verify/sources/prequant_parts.hpp"
#include "verify/values/ref_half.hpp"

namespace rebox::verify_ref {
namespace {

bool has_format(const PrequantConfig& config, std::initializer_list<const char*> names) {
    if (config.ct_formats.empty() || config.ct_formats.count("mixed-precision")) return true;
    for (const char* name : names)
        if (config.ct_formats.count(name)) return true;
    return false;
}

// weight_shape: 2 integers [out, in].
bool read_weight_shape(const Part& part, int64_t* out, int64_t* in, SourceTensor& entry) {
    const std::span<const uint8_t> data = part.data();
    const bool i64 = part.info->dtype == StDtype::I64;
    if ((part.info->dtype != StDtype::I32 && !i64) || part.info->shape != std::vector<int64_t>{2} ||
        data.size() != (i64 ? 16u : 8u)) {
        entry.problem = error_message(
            part.file->display_name(), part.name(),
            std::string(st_dtype_name(part.info->dtype)) + " " + shape_text(part.info->shape),
            "I32 or I64 [2] holding [out, in]");
        return false;
    }
    const auto at = [&](int i) -> int64_t {
        if (!i64) return static_cast<int32_t>(load_u32le(data.data() + 4 * i));
        return static_cast<int64_t>(
            load_u32le(data.data() + 8 * i) |
            (static_cast<uint64_t>(load_u32le(data.data() + 8 * i + 4)) << 32));
    };
    *out = at(0);
    *in = at(1);
    return true;
}

}  // namespace

void bind_ct_packed(const PrequantConfig& config, const std::string& module, const Parts& parts,
                    const Part& packed, SourceTensor& entry) {
    const std::string file = packed.file->display_name();
    if (!has_format(config, {"pack-quantized"})) {
        entry.problem = error_message(file, packed.name(),
                                      "weight_packed but " + config.field +
                                          " names no format "
                                          "\"pack-quantized\"");
        return;
    }
    const Part* shape_part = find_part(parts, module + ".weight_shape");
    const Part* scale = find_part(parts, module + ".weight_scale");
    if (!shape_part || !scale) {
        entry.problem = error_message(file, module + (scale ? ".weight_shape" : ".weight_scale"),
                                      "missing (pack-quantized stores weight_packed, "
                                      "weight_scale and weight_shape)");
        return;
    }
    int64_t out = 0, in = 0;
    if (!read_weight_shape(*shape_part, &out, &in, entry)) return;
    const unsigned bits = static_cast<unsigned>(config.ct_bits);
    const int64_t per_word = 32 / bits;
    if (out < 1 || in < 1 || out > (int64_t{1} << 40) || in > (int64_t{1} << 40)) {
        entry.problem = error_message(shape_part->file->display_name(), shape_part->name(),
                                      shape_text({out, in}), "positive [out, in]");
        return;
    }
    PrequantSource& s = entry.pq;
    s.layout = PrequantLayout::ct_packed;
    s.bits = bits;
    s.out = static_cast<uint64_t>(out);
    s.in = static_cast<uint64_t>(in);
    s.group = config.ct_strategy == "group" ? static_cast<uint64_t>(config.ct_group) : s.in;
    s.groups = ceil_div(s.in, s.group);
    s.scales_per_row = s.groups;
    s.weight_words_per_row = ceil_div(s.in, static_cast<uint64_t>(per_word));
    const int64_t groups = static_cast<int64_t>(s.groups);
    const std::string why =
        "from weight_shape [" + std::to_string(out) + ", " + std::to_string(in) + "], num_bits " +
        std::to_string(bits) + ", " + config.ct_strategy +
        (config.ct_strategy == "group" ? " group_size " + std::to_string(config.ct_group)
                                       : std::string());
    if (!expect_part(packed, {StDtype::I32}, {out, static_cast<int64_t>(s.weight_words_per_row)},
                     why, entry))
        return;
    if (!source_float(scale->info->dtype, &s.scale_dtype))
        return void(expect_part(*scale, {StDtype::BF16, StDtype::F16, StDtype::F32}, {out, groups},
                                why, entry));
    if (!expect_part(*scale, {scale->info->dtype}, {out, groups}, why, entry)) return;
    if (const Part* zero = find_part(parts, module + ".weight_zero_point")) {
        if (!expect_part(*zero, {StDtype::I32},
                         {static_cast<int64_t>(ceil_div(s.out, per_word)), groups},
                         why + ", packed along the output dimension", entry))
            return;
        s.zeros = zero->data();
    }
    if (const Part* g_idx = find_part(parts, module + ".weight_g_idx")) {
        if (!expect_part(*g_idx, {StDtype::I32}, {in}, why, entry) ||
            !check_g_idx(*g_idx, s.groups, entry))
            return;
        s.g_idx = g_idx->data();
    }
    s.weight = packed.data();
    s.scales = scale->data();
}

void bind_ct_int8(const PrequantConfig& config, const std::string& module, const Parts& parts,
                  const Part& weight, const Part& scale, SourceTensor& entry) {
    const std::string file = weight.file->display_name();
    if (!has_format(config, {"int-quantized", "naive-quantized"})) {
        entry.problem = error_message(file, weight.name(),
                                      "int8 weight but " + config.field +
                                          " names no format "
                                          "\"int-quantized\"");
        return;
    }
    const std::vector<int64_t>& wshape = weight.info->shape;
    const std::vector<int64_t>& sshape = scale.info->shape;
    if (wshape.size() != 2 || wshape[0] < 1 || wshape[1] < 1 || sshape.size() != 2 ||
        sshape[1] < 1 || wshape[1] % sshape[1] != 0) {
        entry.problem = error_message(file, scale.name(), "shape " + shape_text(sshape),
                                      "[out, groups] dividing weight " + shape_text(wshape));
        return;
    }
    PrequantSource& s = entry.pq;
    s.layout = PrequantLayout::ct_int8;
    s.bits = 8;
    s.out = static_cast<uint64_t>(wshape[0]);
    s.in = static_cast<uint64_t>(wshape[1]);
    s.groups = static_cast<uint64_t>(sshape[1]);
    s.group = s.in / s.groups;
    s.scales_per_row = s.groups;
    const std::vector<int64_t> param_shape = {wshape[0], sshape[1]};
    if (!source_float(scale.info->dtype, &s.scale_dtype))
        return void(expect_part(scale, {StDtype::BF16, StDtype::F16, StDtype::F32}, param_shape, "",
                                entry));
    if (!expect_part(scale, {scale.info->dtype}, param_shape, "", entry)) return;
    if (const Part* zero = find_part(parts, module + ".weight_zero_point")) {
        if (!expect_part(*zero, {StDtype::I8}, param_shape, "", entry)) return;
        s.zeros = zero->data();
    }
    s.weight = weight.data();
    s.scales = scale.data();
}

}  // namespace rebox::verify_ref
