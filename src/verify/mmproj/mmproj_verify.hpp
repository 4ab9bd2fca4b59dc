// The independent read-back proof of an mmproj file (the vision tower and projector beside a text
// GGUF): verify's own reading of config.json / preprocessor_config.json / processor_config.json
// and its own family statement (ref_vision.hpp) give every tensor's source, shape, type rule and
// value (source widened exactly, + 1 where the converter adds it, as it adds it) and every clip.*
// KV; the file's tensors are decoded by verify's own dequantizers and compared bit for bit.
#pragma once

#include <filesystem>

#include "rebox/rebox.hpp"

namespace rebox {

// Throws Error (input class) only when a file cannot be read at all; every finding is in the
// report (problems for KVs, the tensor set and a checkpoint verify knows no vision family for).
VerifyReport verify_mmproj(const std::filesystem::path& model_dir,
                           const std::filesystem::path& mmproj_gguf);

// `other`'s tensors, findings and counts added to `into`: one verdict for a text model and its
// mmproj (convert, verify).
void fold_report(VerifyReport& into, const VerifyReport& other);

}  // namespace rebox
