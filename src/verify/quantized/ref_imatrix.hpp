// verify's own reader of the importance matrix a file was quantized with (`rebox verify
// --imatrix FILE`), written apart from the writer's quantize_file/imatrix_file so a misreading
// there cannot agree with itself. Both formats llama-quantize v0.4.0 loads, told apart by content:
// llama.cpp's GGUF imatrix (tensors NAME.in_sum2 and NAME.counts, F32, and the keys
// imatrix.datasets, imatrix.chunk_count, imatrix.chunk_size) and the legacy imatrix.dat (int32
// entry count; per entry int32 name length, name, int32 ncall, int32 value count, float32
// values). Normalized as llama-quantize's load_imatrix does: GGUF sums / lround(count) per
// expert slice (1.0 where the rounded count is not positive), legacy values / ncall (the values
// themselves when ncall is not positive). Then which entry llama-quantize hands ggml for a tensor.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rebox::verify_ref {

struct RefImatrix {
    std::string file;                                   // for messages
    std::map<std::string, std::vector<float>> entries;  // GGUF tensor name -> normalized weights
    bool legacy = false;
};

// Reads and normalizes FILE. Throws rebox::Error (input class) naming the file and the entry for
// anything llama-quantize would not load or that cannot be read safely: a length or count past
// the end, a negative name length, an entry without values, a GGUF imatrix without its three keys
// or with sums but no counts (or counts not splitting the sums into equal slices, or not F32), a
// count that is not a finite integer range value, and a normalized value that is not finite
// (llama-quantize refuses those).
RefImatrix read_ref_imatrix(const std::filesystem::path& path);
// The same from bytes already in memory (`file` names them in messages).
RefImatrix parse_ref_imatrix(std::span<const uint8_t> bytes, const std::string& file);

// The entry llama-quantize passes to ggml for a GGUF tensor of ne[0] = values_per_row and
// `experts` = ne[2] (1 for a 2-D tensor): none when the imatrix has no entry of that name;
// the entry when it holds values_per_row * experts values; none for token_embd.weight and
// per_layer_token_embd.weight of another size (llama-quantize ignores those); else `problem`
// says the sizes disagree (llama-quantize refuses such a file, so no file it wrote has it).
struct RefImatrixEntry {
    std::span<const float> weights;  // empty: quantized without one
    std::string problem;
};
RefImatrixEntry ref_imatrix_entry(const RefImatrix& imatrix, std::string_view tensor_name,
                                  uint64_t values_per_row, uint64_t experts);

}  // namespace rebox::verify_ref
