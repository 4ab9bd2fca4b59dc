// Everything `rebox quantize` decides before writing a byte: the input set and, from
// quantize_choices, each tensor's type in llama's order, the output KVs and layouts, and the
// output paths (never the input's).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "format/gguf_layout.hpp"
#include "format/gguf_shards.hpp"
#include "quantize_file/quantize_choices.hpp"
#include "rebox/rebox.hpp"

namespace rebox {

struct QuantizeJobTensor {
    const GgufSet::Tensor* source = nullptr;
    std::string name;  // in the output (renumbered by --prune-layers)
    GgmlType target = GgmlType::F32;
    TensorTypeChoice choice;
    const std::vector<float>* imatrix = nullptr;  // its entry (ne[0] * ne[2] weights), if used
};

struct QuantizeJob {
    QuantFtypeInfo ftype;
    GgufSet input;
    Imatrix imatrix;                         // empty without --imatrix
    std::vector<QuantizeJobTensor> tensors;  // llama's order (--keep-split: the input's)
    ShardedLayout layout;                    // one shard unless split limits are set
    std::vector<std::filesystem::path> outputs;
    std::vector<std::string> notes;
    bool needs_imatrix = false;  // dry_run without an imatrix: a real run would refuse
};

// Throws Error (input class) for bad options, unreadable input, an output that is the input, and
// a type that cannot hold a tensor's rows.
QuantizeJob make_quantize_job(const std::filesystem::path& input,
                              const std::filesystem::path& output, const QuantizeOptions& options);

}  // namespace rebox
