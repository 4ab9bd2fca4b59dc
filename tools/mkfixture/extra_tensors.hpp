// --extra-tensor NAME:DTYPE: tensors appended to a written fixture's model.safetensors, such as the
// non-parameter buffers checkpoints saved before transformers 4.31 carry (an I64
// embeddings.position_ids, an F32 rotary_emb.inv_freq) or any other stray tensor a test wants
// refused. Each is [1, 16] holding 0..15 in its dtype (I64 or F32).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace mkfixture {

// Throws std::runtime_error for a malformed spec (NAME:I64 or NAME:F32).
void check_extra_tensor_specs(const std::vector<std::string>& specs);

// Rewrites out_dir/model.safetensors with the extra tensors after the existing ones (their bytes
// and the metadata kept). Throws std::runtime_error when the fixture has no single
// model.safetensors (--shards) or a name is already taken.
void append_extra_tensors(const std::filesystem::path& out_dir,
                          const std::vector<std::string>& specs);

}  // namespace mkfixture
