// Pairs the parts of each GPTQ / AWQ / compressed-tensors module and checks their dtypes and
// shapes (docs/formats.md §5): a part that disagrees is a problem on the entry, naming the
// tensor and what was expected; an orphan part is a problem of the index.
#include "prequant_source_index.hpp"

#include <map>
#include <set>

#include "rebox/error.hpp"
#include "ref_half.hpp"

namespace rebox::verify_ref {
namespace {

struct Part {
    const SafetensorsFile* file = nullptr;
    const StTensorInfo* info = nullptr;
    std::span<const uint8_t> data() const { return file->data(*info); }
    const std::string& name() const { return info->name; }
};

using Parts = std::map<std::string, Part>;

std::string shape_text(const std::vector<int64_t>& shape) {
    std::string text = "[";
    for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
    return text + "]";
}

std::string strip(const std::string& name, std::string_view suffix) {
    if (name.size() > suffix.size() && name.ends_with(suffix))
        return name.substr(0, name.size() - suffix.size());
    return "";
}

const Part* find(const Parts& parts, const std::string& name) {
    const auto it = parts.find(name);
    return it == parts.end() ? nullptr : &it->second;
}

bool scale_dtype(StDtype dtype, SourceFloat* out) {
    switch (dtype) {
        case StDtype::F16:
            return *out = SourceFloat::F16, true;
        case StDtype::BF16:
            return *out = SourceFloat::BF16, true;
        case StDtype::F32:
            return *out = SourceFloat::F32, true;
        default:
            return false;
    }
}

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// Checks one part's dtype and shape; on failure sets entry.problem and returns false.
bool expect_part(const Part& part, std::initializer_list<StDtype> dtypes,
                 const std::vector<int64_t>& shape, const std::string& why, SourceEntry& entry) {
    bool dtype_ok = false;
    std::string dtype_names;
    for (StDtype d : dtypes) {
        dtype_ok |= part.info->dtype == d;
        if (!dtype_names.empty()) dtype_names += '/';
        dtype_names.append(st_dtype_name(d));
    }
    if (dtype_ok && part.info->shape == shape) return true;
    entry.problem = error_message(
        part.file->display_name(), part.name(),
        std::string(st_dtype_name(part.info->dtype)) + " " + shape_text(part.info->shape),
        dtype_names + " " + shape_text(shape) + (why.empty() ? std::string() : " (" + why + ")"));
    return false;
}

// Every g_idx value must name an existing group.
bool check_g_idx(const Part& part, uint64_t groups, SourceEntry& entry) {
    const std::span<const uint8_t> data = part.data();
    for (uint64_t k = 0; k < data.size() / 4; ++k) {
        const int32_t g = static_cast<int32_t>(load_u32le(data.data() + 4 * k));
        if (g < 0 || static_cast<uint64_t>(g) >= groups) {
            entry.problem = error_message(part.file->display_name(), part.name(),
                                          "value " + std::to_string(g) + " at input column " +
                                              std::to_string(k) + " is not a group",
                                          "0.." + std::to_string(groups - 1));
            return false;
        }
    }
    return true;
}

void bind_gptq(const PrequantConfig& config, const std::string& module, const Parts& parts,
               const Part& qweight, SourceEntry& entry) {
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
    const Part* qzeros = find(parts, module + ".qzeros");
    const Part* scales = find(parts, module + ".scales");
    if (!qzeros || !scales) {
        entry.problem = error_message(file, module + (qzeros ? ".scales" : ".qzeros"),
                                      "missing (GPTQ stores qweight, qzeros and scales)");
        return;
    }
    if (!scale_dtype(scales->info->dtype, &s.scale_dtype))
        return void(expect_part(*scales, {StDtype::F16}, {groups, out}, why, entry));
    if (!expect_part(*scales, {scales->info->dtype}, {groups, out}, why, entry) ||
        !expect_part(*qzeros, {StDtype::I32}, {groups, static_cast<int64_t>(s.zero_words_per_row)},
                     why, entry))
        return;
    if (const Part* g_idx = find(parts, module + ".g_idx")) {
        if (!expect_part(*g_idx, {StDtype::I32}, {static_cast<int64_t>(s.in)}, why, entry) ||
            !check_g_idx(*g_idx, s.groups, entry))
            return;
        s.g_idx = g_idx->data();
    }
    s.weight = qweight.data();
    s.zeros = qzeros->data();
    s.scales = scales->data();
}

void bind_awq(const PrequantConfig& config, const std::string& module, const Parts& parts,
              const Part& qweight, SourceEntry& entry) {
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
    const Part* qzeros = find(parts, module + ".qzeros");
    const Part* scales = find(parts, module + ".scales");
    if (!qzeros || !scales) {
        entry.problem = error_message(file, module + (qzeros ? ".scales" : ".qzeros"),
                                      "missing (AWQ stores qweight, qzeros and scales)");
        return;
    }
    if (!scale_dtype(scales->info->dtype, &s.scale_dtype))
        return void(expect_part(*scales, {StDtype::F16}, {groups, out}, why, entry));
    if (!expect_part(*scales, {scales->info->dtype}, {groups, out}, why, entry) ||
        !expect_part(*qzeros, {StDtype::I32}, {groups, out / 8}, why, entry))
        return;
    if (const Part* g_idx = find(parts, module + ".g_idx")) {
        entry.problem = error_message(g_idx->file->display_name(), g_idx->name(),
                                      "AWQ gemm has no g_idx", "no such tensor");
        return;
    }
    s.weight = qweight.data();
    s.zeros = qzeros->data();
    s.scales = scales->data();
}

bool has_format(const PrequantConfig& config, std::initializer_list<const char*> names) {
    if (config.ct_formats.empty() || config.ct_formats.count("mixed-precision")) return true;
    for (const char* name : names)
        if (config.ct_formats.count(name)) return true;
    return false;
}

// weight_shape: 2 integers [out, in].
bool read_weight_shape(const Part& part, int64_t* out, int64_t* in, SourceEntry& entry) {
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

void bind_ct_packed(const PrequantConfig& config, const std::string& module, const Parts& parts,
                    const Part& packed, SourceEntry& entry) {
    const std::string file = packed.file->display_name();
    if (!has_format(config, {"pack-quantized"})) {
        entry.problem = error_message(file, packed.name(),
                                      "weight_packed but " + config.field +
                                          " names no format "
                                          "\"pack-quantized\"");
        return;
    }
    const Part* shape_part = find(parts, module + ".weight_shape");
    const Part* scale = find(parts, module + ".weight_scale");
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
    if (!scale_dtype(scale->info->dtype, &s.scale_dtype))
        return void(expect_part(*scale, {StDtype::BF16, StDtype::F16, StDtype::F32}, {out, groups},
                                why, entry));
    if (!expect_part(*scale, {scale->info->dtype}, {out, groups}, why, entry)) return;
    if (const Part* zero = find(parts, module + ".weight_zero_point")) {
        if (!expect_part(*zero, {StDtype::I32},
                         {static_cast<int64_t>(ceil_div(s.out, per_word)), groups},
                         why + ", packed along the output dimension", entry))
            return;
        s.zeros = zero->data();
    }
    if (const Part* g_idx = find(parts, module + ".weight_g_idx")) {
        if (!expect_part(*g_idx, {StDtype::I32}, {in}, why, entry) ||
            !check_g_idx(*g_idx, s.groups, entry))
            return;
        s.g_idx = g_idx->data();
    }
    s.weight = packed.data();
    s.scales = scale->data();
}

void bind_ct_int8(const PrequantConfig& config, const std::string& module, const Parts& parts,
                  const Part& weight, const Part& scale, SourceEntry& entry) {
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
    const std::vector<int64_t> param_shape = {wshape[0], sshape[1]};
    if (!scale_dtype(scale.info->dtype, &s.scale_dtype))
        return void(expect_part(scale, {StDtype::BF16, StDtype::F16, StDtype::F32}, param_shape, "",
                                entry));
    if (!expect_part(scale, {scale.info->dtype}, param_shape, "", entry)) return;
    if (const Part* zero = find(parts, module + ".weight_zero_point")) {
        if (!expect_part(*zero, {StDtype::I8}, param_shape, "", entry)) return;
        s.zeros = zero->data();
    }
    s.weight = weight.data();
    s.scales = scale.data();
}

// The suffixes that are parts of a quantized module (never entries of their own).
const std::vector<std::string_view>& part_suffixes(PrequantMethod method) {
    static const std::vector<std::string_view> gptq_awq = {".qzeros", ".scales", ".g_idx"};
    static const std::vector<std::string_view> ct = {".weight_scale", ".weight_zero_point",
                                                     ".weight_shape", ".weight_g_idx"};
    return method == PrequantMethod::compressed_tensors ? ct : gptq_awq;
}

}  // namespace

bool is_prequant_source(const SafetensorsModel& model, const PrequantConfig& config) {
    if (config.method == PrequantMethod::none) return false;
    for (const auto& file : model.files())
        if (file->metadata().count("mcq")) return false;
    return true;
}

SourceIndex index_prequant_source(const SafetensorsModel& model, const PrequantConfig& config) {
    Parts parts;
    for (const auto& file : model.files())
        for (const StTensorInfo& info : file->tensors()) parts[info.name] = {file.get(), &info};
    const bool ct = config.method == PrequantMethod::compressed_tensors;
    const std::string_view main_suffix = ct ? ".weight_packed" : ".qweight";

    SourceIndex index;
    if (!config.problem.empty()) index.problems.push_back("config.json: " + config.problem);
    if (config.method == PrequantMethod::unknown) {  // no layout to read: every tensor as stored
        for (const auto& [name, part] : parts) {
            SourceEntry entry;
            entry.name = name;
            entry.file = part.file->display_name();
            entry.shape = part.info->shape;
            entry.element_count = part.info->element_count();
            bind_plain(*part.file, *part.info, entry);
            index.entries.push_back(std::move(entry));
        }
        for (size_t i = 0; i < index.entries.size(); ++i) add_by_stripped_name(index, i);
        return index;
    }
    std::set<std::string> modules_seen;
    for (const auto& [name, part] : parts) {
        const std::string& file_name = part.file->display_name();
        bool is_part = false;
        for (std::string_view suffix : part_suffixes(config.method)) {
            const std::string module = strip(name, suffix);
            if (module.empty()) continue;
            is_part = true;
            const Part* int8_weight = ct ? find(parts, module + ".weight") : nullptr;
            const bool has_main = find(parts, module + std::string(main_suffix)) ||
                                  (int8_weight && int8_weight->info->dtype == StDtype::I8 &&
                                   (suffix == ".weight_scale" || suffix == ".weight_zero_point"));
            if (!has_main)
                index.problems.push_back(
                    error_message(file_name, name,
                                  "has no " + module + std::string(main_suffix) + " to belong to"));
        }
        if (is_part) continue;

        SourceEntry entry;
        entry.file = file_name;
        std::string module = strip(name, main_suffix);
        const Part* ct_int8_scale = nullptr;
        if (module.empty() && ct) {
            const std::string base = strip(name, ".weight");
            if (!base.empty() && part.info->dtype == StDtype::I8)
                ct_int8_scale = find(parts, base + ".weight_scale");
            if (ct_int8_scale) module = base;
        }
        if (module.empty()) {  // a plain tensor
            entry.name = name;
            entry.shape = part.info->shape;
            entry.element_count = part.info->element_count();
            bind_plain(*part.file, *part.info, entry);
            index.entries.push_back(std::move(entry));
            continue;
        }
        entry.name = module + ".weight";
        entry.quantized = true;
        entry.prequant = true;
        if (find(parts, entry.name) && !ct_int8_scale)
            entry.problem = error_message(file_name, entry.name,
                                          "stored next to " + name +
                                              " (a module is quantized "
                                              "or not)");
        else if (!config.problem.empty())
            entry.problem = error_message("config.json", config.field, config.problem);
        else if (config.method == PrequantMethod::gptq)
            bind_gptq(config, module, parts, part, entry);
        else if (config.method == PrequantMethod::awq)
            bind_awq(config, module, parts, part, entry);
        else if (ct_int8_scale)
            bind_ct_int8(config, module, parts, part, *ct_int8_scale, entry);
        else
            bind_ct_packed(config, module, parts, part, entry);
        if (entry.problem.empty()) {
            entry.shape = {static_cast<int64_t>(entry.pq.out), static_cast<int64_t>(entry.pq.in)};
            entry.element_count = entry.pq.out * entry.pq.in;
        }
        index.entries.push_back(std::move(entry));
    }
    for (size_t i = 0; i < index.entries.size(); ++i) add_by_stripped_name(index, i);
    return index;
}

}  // namespace rebox::verify_ref
