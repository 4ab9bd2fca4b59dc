// verify's own reader of a SentencePiece tokenizer.model (a serialized ModelProto), for the fields
// llama.cpp's converter takes from it: each piece's text, score and type; the trainer's model type,
// special ids and byte_fallback; the normalizer's add_dummy_prefix, remove_extra_whitespaces and
// precompiled_charsmap.
// Protobuf wire format read by hand with every varint, length and count checked before use; it
// shares nothing with the writer's reader in src/model/.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rebox::verify_ref {

// sentencepiece_model.proto ModelProto.SentencePiece.Type (the same numbers as llama.cpp's token
// types: NORMAL 1, UNKNOWN 2, CONTROL 3, USER_DEFINED 4, UNUSED 5, BYTE 6).
struct RefSpmPiece {
    std::string text;
    float score = 0.0f;
    int32_t type = 1;  // proto2 default NORMAL
};

struct RefSpmModel {
    std::vector<RefSpmPiece> pieces;
    int32_t model_type = 1;  // TrainerSpec.ModelType: UNIGRAM 1 (default), BPE 2, WORD 3, CHAR 4
    int32_t unk_id = 0, bos_id = 1, eos_id = 2, pad_id = -1;  // TrainerSpec defaults
    bool byte_fallback = false;
    bool add_dummy_prefix = true;               // NormalizerSpec default
    bool remove_extra_whitespaces = true;       // NormalizerSpec default
    std::vector<uint8_t> precompiled_charsmap;  // NormalizerSpec; empty when absent
};

// The most pieces verify reads when config.json names no vocab_size (no released model is near
// it: Gemma 3 has 262,144).
inline constexpr uint64_t kMaxRefSpmPieces = uint64_t{1} << 22;

// Parses ModelProto bytes. The pieces are counted before any is stored, so a file claiming more
// than max_pieces fails without allocating for them. Throws rebox::Error (input) naming `file`
// and the field for a truncated or over-long varint, a length past the end of its message, a wire
// type protobuf does not have (or a group), a field of the wrong wire type, no pieces, or more
// than max_pieces pieces.
RefSpmModel parse_ref_spm_model(std::string_view bytes, const std::string& file = "tokenizer.model",
                                uint64_t max_pieces = kMaxRefSpmPieces);

}  // namespace rebox::verify_ref
