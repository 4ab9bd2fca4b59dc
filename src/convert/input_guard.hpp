// Refuses a conversion whose output would replace one of its own inputs (the checkpoint's
// safetensors files, its index, config.json, the tokenizer files), with or without --force.
#pragma once

#include <filesystem>
#include <vector>

#include "source/model_dir.hpp"

namespace rebox::convert_detail {

// Throws an input-class Error naming the output and the input it is (same device and inode, so a
// hard link, a symlink or "./x" against "x" are caught) when any of outputs is a file convert
// reads.
void refuse_output_over_input(const ModelDir& model_dir,
                              const std::vector<std::filesystem::path>& outputs);

}  // namespace rebox::convert_detail
