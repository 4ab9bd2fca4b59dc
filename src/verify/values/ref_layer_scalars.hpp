// verify's own reading of per-layer scalar source tensors that llama.cpp's converter writes as
// FLOAT32 array KVs instead of tensors (a record's RefArch::layer_scalars: apertus' xIELU
// parameters), matched and read apart from the writer's plan (ref_layer_scalars.cpp).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "verify/arch/ref_arch.hpp"
#include "verify/sources/source_index.hpp"

namespace rebox::verify_ref {

// The record's layer_scalars entry (index) and layer a source name is a value of:
// "[model.][language_model.]layers.N.<hf>" with nothing after; nullopt otherwise.
std::optional<std::pair<size_t, uint32_t>> match_ref_layer_scalar(const RefArch& arch,
                                                                  std::string_view name);

// One expected array KV: its key and each layer's value (nullopt: the source has none).
struct RefLayerScalarKv {
    std::string key;
    std::vector<std::optional<float>> values;
};

// The arrays the record asks for, from the index's entries: each value the entry's one binary32
// value (dequantized, or widened). An entry of more than one value, or one whose values verify
// cannot compute, is a problem line.
std::vector<RefLayerScalarKv> expected_layer_scalars(const RefArch& arch, uint32_t layers,
                                                     const SourceIndex& index,
                                                     std::vector<std::string>& problems);

}  // namespace rebox::verify_ref
