// tokenizer.model -> RefVocab (ref_vocab.hpp read_ref_spm_vocab), as convert_hf_to_gguf's
// _create_vocab_sentencepiece builds it: vocab_size slots of "[PAD<i>]" / -10000 / UNUSED; each
// piece with its own score and type (UNKNOWN, CONTROL, UNUSED, BYTE as the model says, USER_DEFINED
// kept USER_DEFINED: rebox's one documented departure, so llama.cpp matches those pieces whole as
// SentencePiece does; everything else NORMAL); then added_tokens.json entries (USER_DEFINED) and
// tokenizer_config.json's added_tokens_decoder (CONTROL when special or special-looking, else
// USER_DEFINED), each with score -1000 and a user-defined token's U+2581 read as ' '. The special
// ids are gguf-py SpecialVocab's without a tokenizer.json (tokenizer_config.json add flags,
// config.json ids) after the unknown piece; add_space_prefix is the normalizer's add_dummy_prefix.
#include <charconv>
#include <nlohmann/json.hpp>

#include "model/json_file.hpp"
#include "rebox/error.hpp"
#include "verify/tokenizer/ref_spm_model.hpp"
#include "verify/tokenizer/ref_vocab.hpp"

namespace rebox::verify_ref {
namespace {

constexpr float kFillerScore = -10000.0f;
constexpr float kAddedScore = -1000.0f;

int32_t llama_type_of(int32_t piece_type) {
    switch (piece_type) {
        case 2:
            return kTokenUnknown;
        case 3:
            return kTokenControl;
        case 4:
            return kTokenUserDefined;
        case 5:
            return kTokenUnused;
        case 6:
            return kTokenByte;
        default:
            return kTokenNormal;  // NORMAL, or a value the enum does not have
    }
}

}  // namespace

RefVocab read_ref_spm_vocab(const RefSpmModel& model, const std::filesystem::path& model_dir,
                            uint64_t vocab_size) {
    if (vocab_size == 0) vocab_size = model.pieces.size();
    if (model.pieces.size() > vocab_size)
        throw Error(ExitClass::input, "tokenizer.model", "pieces",
                    std::to_string(model.pieces.size()) + " pieces",
                    "at most config.json vocab_size " + std::to_string(vocab_size));
    if (vocab_size > kMaxRefVocab)
        throw Error(ExitClass::input, "config.json", "vocab_size", std::to_string(vocab_size),
                    "at most " + std::to_string(kMaxRefVocab));
    RefVocab vocab;
    vocab.tokens.resize(vocab_size);
    for (uint64_t id = 0; id < vocab_size; ++id)
        vocab.tokens[id] = "[PAD" + std::to_string(id) + "]";
    vocab.scores.assign(vocab_size, kFillerScore);
    vocab.token_types.assign(vocab_size, kTokenUnused);
    for (size_t id = 0; id < model.pieces.size(); ++id) {
        const RefSpmPiece& piece = model.pieces[id];
        vocab.tokens[id] = piece.text;
        vocab.scores[id] = piece.score;
        vocab.token_types[id] = llama_type_of(piece.type);
        if (vocab.token_types[id] == kTokenUnknown && !vocab.unk_id)
            vocab.unk_id = static_cast<uint32_t>(id);
    }
    const auto place_added = [&vocab, vocab_size](uint64_t id, const std::string& text,
                                                  bool control) {
        if (id >= vocab_size) return;  // the converter ignores it
        vocab.tokens[id] = control ? text : detail::ref_spaces_for_metaspace(text);
        vocab.scores[id] = kAddedScore;
        vocab.token_types[id] = control ? kTokenControl : kTokenUserDefined;
    };
    if (const auto path = model_dir / "added_tokens.json"; std::filesystem::is_regular_file(path)) {
        const nlohmann::json added = rebox::detail::read_json_object(path);
        for (const auto& [text, id] : added.items()) {
            if (!id.is_number_unsigned())
                throw Error(ExitClass::input, "added_tokens.json", text, "is " + id.dump(),
                            "a non-negative token id");
            place_added(id.get<uint64_t>(), text, false);
        }
    }
    if (const auto path = model_dir / "tokenizer_config.json";
        std::filesystem::is_regular_file(path)) {
        const nlohmann::json config = rebox::detail::read_json_object(path);
        if (const auto decoder = config.find("added_tokens_decoder");
            decoder != config.end() && decoder->is_object())
            for (const auto& [key, entry] : decoder->items()) {
                const std::string field = "added_tokens_decoder." + key;
                uint64_t id = 0;
                const char* end = key.data() + key.size();
                if (key.empty() || std::from_chars(key.data(), end, id).ptr != end)
                    throw Error(ExitClass::input, "tokenizer_config.json", field,
                                "key is not a token id", "a decimal id");
                if (!entry.is_object() || !entry.contains("content") ||
                    !entry["content"].is_string())
                    throw Error(ExitClass::input, "tokenizer_config.json", field,
                                "has no string content", "{\"content\": \"...\", ...}");
                const std::string text = entry["content"].get<std::string>();
                const auto special = entry.find("special");
                const bool is_special =
                    special != entry.end() && special->is_boolean() && special->get<bool>();
                place_added(id, text, is_special || detail::ref_looks_special(text));
            }
    }
    detail::derive_ref_specials(nullptr, {}, model_dir, false, vocab);
    vocab.add_space_prefix = model.add_dummy_prefix;
    return vocab;
}

}  // namespace rebox::verify_ref
