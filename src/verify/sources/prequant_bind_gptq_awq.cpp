// verify's pairing of a GPTQ or AWQ gemm module (P.qweight, P.qzeros, P.scales, GPTQ's P.g_idx):
// shapes derived from qweight and config.json's bits / group_size (docs/formats.md §5.1, §5.2).
#include "rebox/error.hpp"
#include "verify/sources/prequant_parts.hpp"

namespace rebox::verify_ref {

namespace {

// A module's qzeros and scales, both present (else a problem naming the missing one), scales
// F16/BF16/F32 of scale_shape and qzeros I32 of zero_shape (else a problem saying `why`).
bool find_zeros_scales(const std::string& file, const std::string& module, const Parts& parts,
                       const char* format, const std::vector<int64_t>& scale_shape,
                       const std::vector<int64_t>& zero_shape, const std::string& why,
                       SourceTensor& entry, const Part** qzeros, const Part** scales) {
    *qzeros = find_part(parts, module + ".qzeros");
    *scales = find_part(parts, module + ".scales");
    if (!*qzeros || !*scales) {
        entry.problem = error_message(
            file, module + (*qzeros ? ".scales" : ".qzeros"),
            std::string("missing (") + format + " stores qweight, qzeros and scales)");
        return false;
    }
    if (!source_float((*scales)->info->dtype, &entry.pq.scale_dtype)) {
        expect_part(**scales, {StDtype::F16}, scale_shape, why, entry);
        return false;
    }
    return expect_part(**scales, {(*scales)->info->dtype}, scale_shape, why, entry) &&
           expect_part(**qzeros, {StDtype::I32}, zero_shape, why, entry);
}

// AWQ (gemm or gemv) stores no g_idx: one is a problem.
bool awq_has_g_idx(const std::string& module, const Parts& parts, SourceTensor& entry) {
    const Part* g_idx = find_part(parts, module + ".g_idx");
    if (!g_idx) return false;
    entry.problem = error_message(g_idx->file->display_name(), g_idx->name(), "AWQ has no g_idx",
                                  "no such tensor");
    return true;
}

void set_data(const Part& qweight, const Part& qzeros, const Part& scales, PrequantSource& s) {
    s.weight = qweight.data();
    s.zeros = qzeros.data();
    s.scales = scales.data();
}

}  // namespace

void bind_gptq(const PrequantConfig& config, const std::string& module, const Parts& parts,
               const Part& qweight, SourceTensor& entry) {
    const std::string file = qweight.file->display_name();
    const unsigned bits = static_cast<unsigned>(config.bits);
    const std::vector<int64_t>& wshape = qweight.info->shape;
    if (qweight.info->dtype != StDtype::I32 || wshape.size() != 2 || wshape[0] < 1 ||
        wshape[1] < 1 || (wshape[0] * 32) % bits != 0 || (wshape[1] * bits) % 32 != 0) {
        entry.problem = error_message(
            file, qweight.name(),
            std::string(st_dtype_name(qweight.info->dtype)) + " " + shape_text(wshape),
            "I32 [in*bits/32, out] with out*bits a multiple of 32 at bits " + std::to_string(bits) +
                " (" + config.field + ".bits)");
        return;
    }
    PrequantSource& s = entry.pq;
    s.layout = PrequantLayout::gptq;
    s.bits = bits;
    s.out = static_cast<uint64_t>(wshape[1]);
    s.in = static_cast<uint64_t>(wshape[0]) * 32 / bits;
    s.group = config.group ? static_cast<uint64_t>(config.group) : s.in;
    s.groups = ceil_div(s.in, s.group);
    s.zero_add = config.gptq_stores_zero_minus_one ? 1 : 0;
    s.zero_words_per_row = s.out * bits / 32;
    const int64_t groups = static_cast<int64_t>(s.groups), out = static_cast<int64_t>(s.out);
    const std::string why = "from qweight " + shape_text(wshape) + ", " + config.field +
                            ".group_size " + std::to_string(config.group ? config.group : -1);
    const Part *qzeros = nullptr, *scales = nullptr;
    if (!find_zeros_scales(file, module, parts, "GPTQ", {groups, out},
                           {groups, static_cast<int64_t>(s.zero_words_per_row)}, why, entry,
                           &qzeros, &scales))
        return;
    if (const Part* g_idx = find_part(parts, module + ".g_idx")) {
        if (!expect_part(*g_idx, {StDtype::I32}, {static_cast<int64_t>(s.in)}, why, entry) ||
            !check_g_idx(*g_idx, s.groups, entry))
            return;
        s.g_idx = g_idx->data();
    }
    set_data(qweight, *qzeros, *scales, s);
}

void bind_awq(const PrequantConfig& config, const std::string& module, const Parts& parts,
              const Part& qweight, SourceTensor& entry) {
    const std::string file = qweight.file->display_name();
    const std::vector<int64_t>& wshape = qweight.info->shape;
    const int64_t group = config.group;
    if (qweight.info->dtype != StDtype::I32 || wshape.size() != 2 || wshape[0] < 1 ||
        wshape[1] < 1 || (group > 0 && wshape[0] % group != 0)) {
        entry.problem = error_message(
            file, qweight.name(),
            std::string(st_dtype_name(qweight.info->dtype)) + " " + shape_text(wshape),
            "I32 [in, out/8] with in a multiple of " + config.field + ".group_size " +
                std::to_string(group));
        return;
    }
    PrequantSource& s = entry.pq;
    s.layout = PrequantLayout::awq_gemm;
    s.bits = 4;
    s.in = static_cast<uint64_t>(wshape[0]);
    s.out = static_cast<uint64_t>(wshape[1]) * 8;
    s.group = group > 0 ? static_cast<uint64_t>(group) : s.in;
    s.groups = s.in / s.group;
    const int64_t groups = static_cast<int64_t>(s.groups), out = static_cast<int64_t>(s.out);
    const std::string why = "from qweight " + shape_text(wshape) + ", " + config.field +
                            ".group_size " + std::to_string(group);
    const Part *qzeros = nullptr, *scales = nullptr;
    if (!find_zeros_scales(file, module, parts, "AWQ", {groups, out}, {groups, out / 8}, why, entry,
                           &qzeros, &scales) ||
        awq_has_g_idx(module, parts, entry))
        return;
    set_data(qweight, *qzeros, *scales, s);
}

// AutoAWQ's calculate_zeros_width, rewritten from docs/formats.md §5.2: the groups of a row in
// whole 8-nibble words, rounded up to a multiple of 4 words (group 32) or 2 (group 64).
uint64_t awq_gemv_zero_words(uint64_t in, uint64_t group) {
    const uint64_t words = ceil_div(in / group, 8);
    const uint64_t multiple = group == 32 ? 4 : group == 64 ? 2 : 1;
    return ceil_div(words, multiple) * multiple;
}

void bind_awq_gemv(const PrequantConfig& config, const std::string& module, const Parts& parts,
                   const Part& qweight, SourceTensor& entry) {
    const std::string file = qweight.file->display_name();
    const std::vector<int64_t>& wshape = qweight.info->shape;
    const int64_t group = config.group;
    if (qweight.info->dtype != StDtype::I32 || wshape.size() != 2 || wshape[0] < 1 ||
        wshape[1] < 1 || (group > 0 && (wshape[1] * 8) % group != 0)) {
        entry.problem = error_message(
            file, qweight.name(),
            std::string(st_dtype_name(qweight.info->dtype)) + " " + shape_text(wshape),
            "I32 [out, in/8] with in a multiple of " + config.field + ".group_size " +
                std::to_string(group) + " (AWQ gemv)");
        return;
    }
    PrequantSource& s = entry.pq;
    s.layout = PrequantLayout::awq_gemv;
    s.bits = 4;
    s.out = static_cast<uint64_t>(wshape[0]);
    s.in = static_cast<uint64_t>(wshape[1]) * 8;
    s.group = group > 0 ? static_cast<uint64_t>(group) : s.in;
    s.groups = s.in / s.group;
    s.zero_words_per_row = awq_gemv_zero_words(s.in, s.group);
    s.scales_per_row = 8 * s.zero_words_per_row;
    const int64_t out = static_cast<int64_t>(s.out);
    const std::string why = "from qweight " + shape_text(wshape) + ", " + config.field +
                            ".group_size " + std::to_string(group) + ", AWQ gemv";
    const Part *qzeros = nullptr, *scales = nullptr;
    if (!find_zeros_scales(
            file, module, parts, "AWQ", {out, static_cast<int64_t>(s.scales_per_row)},
            {out, static_cast<int64_t>(s.zero_words_per_row)}, why, entry, &qzeros, &scales) ||
        awq_has_g_idx(module, parts, entry))
        return;
    set_data(qweight, *qzeros, *scales, s);
}

}  // namespace rebox::verify_ref
