// Everything `rebox quantize` decides before writing a byte: the input set, each tensor's type in
// llama's order (recipe/), the output KVs in llama-quantize's order and the output layouts. Every
// refusal that does not need the tensor values happens here, so nothing is created for them.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "format/gguf_layout.hpp"
#include "format/gguf_shards.hpp"
#include "quantize_file/imatrix_file.hpp"
#include "rebox/rebox.hpp"
#include "recipe/type_choice.hpp"

namespace rebox {

struct QuantizeJobTensor {
    const GgufSet::Tensor* source = nullptr;
    GgmlType target = GgmlType::F32;
    TensorTypeChoice choice;
    bool requantize = false;      // source quantized, target differs, --allow-requantize
    bool kept_quantized = false;  // source quantized, target differs, kept as it is
    const std::vector<float>* imatrix = nullptr;  // its entry (ne[0] * ne[2] weights), if used
};

struct QuantizeJob {
    QuantFtypeInfo ftype;
    GgufSet input;
    Imatrix imatrix;                         // empty without --imatrix
    std::vector<QuantizeJobTensor> tensors;  // llama's order
    ShardedLayout layout;                    // one shard unless split limits are set
    std::vector<std::filesystem::path> outputs;
    std::vector<std::string> notes;
};

// Throws Error (input class) for bad options, unreadable input, an output that is the input, and
// a type that cannot hold a tensor's rows.
QuantizeJob make_quantize_job(const std::filesystem::path& input,
                              const std::filesystem::path& output, const QuantizeOptions& options);

}  // namespace rebox
