// verify's reading of transformers' fused expert tensors (fused_experts_index.hpp).
#include "verify/sources/fused_experts_index.hpp"

#include <string>

#include "arch/tensor_names.hpp"
#include "rebox/error.hpp"

namespace rebox::verify_ref {
namespace {

constexpr std::string_view kFusedGateUp = "mlp.experts.gate_up_proj";
constexpr std::string_view kFusedDown = "mlp.experts.down_proj";

// Entry `i` renamed to `name` in the index (its old key dropped).
void rename_fused_entry(SourceIndex& index, size_t i, const std::string& name) {
    index.by_stripped_name.erase(std::string(strip_model_prefix(index.entries[i].name)));
    index.entries[i].name = name;
    add_by_stripped_name(index, i);
}

// The transposed layout: down_proj [E, F, hidden] read as [E, hidden, F]; gate_up_proj [E, hidden,
// 2F] as gate [E, F, hidden] and up [E, F, hidden].
void split_transposed(SourceIndex& index, size_t i) {
    SourceTensor& entry = index.entries[i];
    const std::string name = entry.name;
    const uint64_t rows = static_cast<uint64_t>(entry.shape[1]),
                   columns = static_cast<uint64_t>(entry.shape[2]);
    entry.transposed_rows = rows;
    entry.transposed_columns = columns;
    if (name.ends_with(kFusedDown)) {
        std::swap(entry.shape[1], entry.shape[2]);
        rename_fused_entry(index, i, name + ".weight");
        return;
    }
    const std::string head = name.substr(0, name.size() - kFusedGateUp.size()) + "mlp.experts.";
    if (columns % 2 != 0) {
        entry.problem = error_message(entry.file, name,
                                      "shape " + shape_text(entry.shape) +
                                          " has no even last dim of gate columns then up columns");
        return;
    }
    entry.shape = {entry.shape[0], static_cast<int64_t>(columns / 2), static_cast<int64_t>(rows)};
    entry.element_count /= 2;
    SourceTensor up = entry;
    up.transposed_offset = columns / 2;
    rename_fused_entry(index, i, head + "gate_proj.weight");
    up.name = head + "up_proj.weight";
    index.entries.push_back(std::move(up));
    add_by_stripped_name(index, index.entries.size() - 1);
}

}  // namespace

void split_fused_experts(SourceIndex& index, bool transposed) {
    const size_t count = index.entries.size();
    for (size_t i = 0; i < count; ++i) {
        SourceTensor& entry = index.entries[i];
        const std::string name = entry.name;
        const bool fused_float = !entry.quantized && !entry.prequant && !entry.fp4 &&
                                 entry.problem.empty() && entry.shape.size() == 3;
        if (!fused_float) continue;
        if (transposed && (name.ends_with(kFusedDown) || name.ends_with(kFusedGateUp))) {
            split_transposed(index, i);
            continue;
        }
        if (name.ends_with(kFusedDown)) {
            rename_fused_entry(index, i, name + ".weight");
            continue;
        }
        if (!name.ends_with(kFusedGateUp)) continue;
        const std::string head = name.substr(0, name.size() - kFusedGateUp.size()) + "mlp.experts.";
        if (entry.shape[1] % 2 != 0) {
            entry.problem = error_message(entry.file, name,
                                          "shape " + shape_text(entry.shape) +
                                              " has no even dim 1 of gate rows then up rows");
            continue;
        }
        entry.shape[1] /= 2;
        entry.element_count /= 2;
        entry.deinterleave_row_values = static_cast<uint64_t>(entry.shape[2]);
        entry.half_rows = static_cast<uint64_t>(entry.shape[1]);
        SourceTensor up = entry;
        entry.deinterleave = 3;  // the first half of each expert's rows
        up.deinterleave = 4;     // the second
        rename_fused_entry(index, i, head + "gate_proj.weight");
        up.name = head + "up_proj.weight";
        index.entries.push_back(std::move(up));
        add_by_stripped_name(index, index.entries.size() - 1);
    }
}

std::optional<SwitchGluNames> switch_glu_names(std::string_view fused) {
    constexpr std::string_view kGateUp = ".experts.gate_up_proj", kDown = ".experts.down_proj";
    const bool gate_up = fused.ends_with(kGateUp);
    if (!gate_up && !fused.ends_with(kDown)) return std::nullopt;
    const std::string head(fused.substr(0, fused.size() - (gate_up ? kGateUp : kDown).size()));
    const std::string glu = head + ".experts.switch_glu.";
    if (gate_up) return SwitchGluNames{glu + "gate_proj.weight", glu + "up_proj.weight"};
    return SwitchGluNames{glu + "down_proj.weight", ""};
}

std::string merged_experts_name(std::string_view pattern) {
    std::string name(pattern);
    if (const size_t at = name.find("{e}."); at != std::string::npos) name.erase(at, 4);
    return name;
}

}  // namespace rebox::verify_ref
