// tokenizer.model (a SentencePiece ModelProto, no tokenizer.json) -> llama.cpp SPM vocabulary, as
// convert_hf_to_gguf's _create_vocab_sentencepiece builds it: pieces with their own scores and
// types (read with Debian's libsentencepiece), padded to vocab_size with [PAD<i>] / -10000 /
// UNUSED; added_tokens.json and tokenizer_config.json added_tokens_decoder entries placed over them
// with score -1000. The two ModelProto facts the processor API does not expose (trainer model type,
// normalizer add_dummy_prefix) are read from the protobuf wire format directly.
#include <sentencepiece_processor.h>

#include <charconv>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unordered_set>

#include "json_file.hpp"
#include "model/tokenizer_vocab.hpp"
#include "rebox/error.hpp"
#include "tokenizer_special.hpp"
#include "tokenizer_spm.hpp"

namespace rebox::detail {
namespace {

constexpr const char* kFile = "tokenizer.model";
constexpr float kPadScore = -10000.0f;   // convert_hf_to_gguf's filler score
constexpr float kAddedScore = -1000.0f;  // and its score for added tokens
constexpr uint64_t kTrainerSpecField = 2, kNormalizerSpecField = 3;
constexpr uint64_t kModelTypeField = 3, kAddDummyPrefixField = 3;
constexpr uint64_t kModelTypeBpe = 2, kModelTypeUnigram = 1;
constexpr uint64_t kPiecesField = 1, kPieceTypeField = 3, kPieceTypeUserDefined = 4;

// A bounds-checked reader of protobuf wire format (varint, 64-bit, length-delimited, 32-bit).
class ProtoReader {
  public:
    explicit ProtoReader(std::string_view data) : data_(data) {}
    bool done() const { return at_ == data_.size(); }

    // Reads the next field; its payload is a varint value or a length-delimited view.
    bool next(uint64_t& field, uint64_t& varint, std::string_view& bytes) {
        uint64_t tag = 0;
        if (!read_varint(tag)) return false;
        field = tag >> 3;
        switch (tag & 7) {
            case 0:
                return read_varint(varint);
            case 1:
                return skip(8);
            case 5:
                return skip(4);
            case 2: {
                uint64_t length = 0;
                if (!read_varint(length) || length > data_.size() - at_) return false;
                bytes = data_.substr(at_, length);
                at_ += length;
                return true;
            }
            default:
                return false;
        }
    }

  private:
    bool read_varint(uint64_t& value) {
        value = 0;
        for (int shift = 0; shift < 64 && at_ < data_.size(); shift += 7) {
            const auto byte = static_cast<uint8_t>(data_[at_++]);
            value |= uint64_t{byte & 0x7fu} << shift;
            if ((byte & 0x80u) == 0) return true;
        }
        return false;
    }
    bool skip(size_t n) {
        if (n > data_.size() - at_) return false;
        at_ += n;
        return true;
    }
    std::string_view data_;
    size_t at_ = 0;
};

// Calls fn(varint, payload) for each occurrence of `field` inside the sub-message `message` of the
// ModelProto, in file order (so the last call is the value protobuf keeps).
template <typename Fn>
void visit_spec_field(std::string_view model, uint64_t message, uint64_t field, Fn&& fn) {
    ProtoReader top(model);
    while (!top.done()) {
        uint64_t number = 0, varint = 0;
        std::string_view bytes;
        if (!top.next(number, varint, bytes))
            throw_input_error(kFile, "", "not a SentencePiece model (bad protobuf)");
        if (number != message) continue;
        ProtoReader inner(bytes);
        while (!inner.done()) {
            uint64_t inner_number = 0, value = 0;
            std::string_view payload;
            if (!inner.next(inner_number, value, payload))
                throw_input_error(kFile, "", "not a SentencePiece model (bad protobuf)");
            if (inner_number == field) fn(value, payload);
        }
    }
}

std::optional<uint64_t> spec_varint(std::string_view model, uint64_t message, uint64_t field) {
    std::optional<uint64_t> found;
    visit_spec_field(model, message, field,
                     [&](uint64_t value, std::string_view) { found = value; });
    return found;
}

}  // namespace

std::optional<uint64_t> sentencepiece_spec_varint(std::string_view model, uint64_t message,
                                                  uint64_t field) {
    return spec_varint(model, message, field);
}

std::string read_sentencepiece_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in) throw_input_error(path.string(), "", "cannot read file");
    return text.str();
}

std::optional<std::string> sentencepiece_spec_bytes(std::string_view model, uint64_t message,
                                                    uint64_t field) {
    std::optional<std::string> found;
    visit_spec_field(model, message, field,
                     [&](uint64_t, std::string_view payload) { found = std::string(payload); });
    return found;
}

namespace {

// Ids of the pieces whose ModelProto type is USER_DEFINED (the processor API cannot tell them).
std::unordered_set<uint64_t> user_defined_ids(std::string_view model) {
    std::unordered_set<uint64_t> ids;
    ProtoReader top(model);
    uint64_t index = 0;
    while (!top.done()) {
        uint64_t number = 0, varint = 0;
        std::string_view bytes;
        if (!top.next(number, varint, bytes))
            throw_input_error(kFile, "", "not a SentencePiece model (bad protobuf)");
        if (number != kPiecesField) continue;
        ProtoReader piece(bytes);
        while (!piece.done()) {
            uint64_t field = 0, value = 0;
            std::string_view ignored;
            if (!piece.next(field, value, ignored))
                throw_input_error(kFile, "pieces", "bad protobuf");
            if (field == kPieceTypeField && value == kPieceTypeUserDefined) ids.insert(index);
        }
        ++index;
    }
    return ids;
}

// convert_hf_to_gguf does_token_look_special (the subset a SentencePiece checkpoint uses).
bool looks_special(const std::string& token) {
    if (token == "<pad>" || token == "<mask>" || token == "<2mass>" || token == "[@BOS@]")
        return true;
    if (token.size() >= 4 && token.starts_with("<|") && token.ends_with("|>")) return true;
    return token.starts_with("<unused") && token.ends_with(">");
}

std::string spaces_for_metaspace(const std::string& text) {
    std::string out;
    for (size_t i = 0; i < text.size();) {
        if (text.compare(i, 3, "\xE2\x96\x81") == 0) {
            out.push_back(' ');
            i += 3;
        } else {
            out.push_back(text[i++]);
        }
    }
    return out;
}

}  // namespace

TokenizerVocab read_sentencepiece_model(const std::filesystem::path& model_dir,
                                        const TokenizerOptions& options) {
    const std::filesystem::path path = model_dir / kFile;
    check_file_size(path, kMaxTokenizerBytes);
    const std::string bytes = read_sentencepiece_file(path);

    const uint64_t model_type =
        spec_varint(bytes, kTrainerSpecField, kModelTypeField).value_or(kModelTypeUnigram);
    if (model_type != kModelTypeBpe)
        throw Error(ExitClass::blocker, kFile, "trainer_spec.model_type",
                    model_type == kModelTypeUnigram ? "Unigram" : std::to_string(model_type),
                    "BPE (llama.cpp's SentencePiece tokenizer merges by score)");

    sentencepiece::SentencePieceProcessor processor;
    if (const auto status = processor.LoadFromSerializedProto(bytes); !status.ok())
        throw_input_error(kFile, "",
                          std::string("not a SentencePiece model (") + status.ToString() + ")");
    const auto piece_count = static_cast<uint64_t>(processor.GetPieceSize());
    const uint64_t vocab_size = options.vocab_size != 0 ? options.vocab_size : piece_count;
    if (piece_count > vocab_size)
        throw Error(ExitClass::blocker, kFile, "pieces",
                    std::to_string(piece_count) + " pieces, more than vocab_size " +
                        std::to_string(vocab_size),
                    "the tokenizer.model that belongs to this checkpoint");

    TokenizerVocab vocab;
    vocab.model = "llama";
    vocab.pre = "default";
    vocab.add_space_prefix =
        spec_varint(bytes, kNormalizerSpecField, kAddDummyPrefixField).value_or(1) != 0;
    vocab.tokens.resize(vocab_size);
    vocab.scores.assign(vocab_size, kPadScore);
    vocab.token_types.assign(vocab_size, static_cast<int32_t>(TokenType::UNUSED));
    for (uint64_t id = 0; id < vocab_size; ++id)
        vocab.tokens[id] = "[PAD" + std::to_string(id) + "]";
    // User-defined pieces (always matched whole by SentencePiece) become USER_DEFINED so that
    // llama.cpp matches them whole too; convert_hf_to_gguf leaves them NORMAL.
    const std::unordered_set<uint64_t> user_defined = user_defined_ids(bytes);
    for (int id = 0; id < static_cast<int>(piece_count); ++id) {
        TokenType type = TokenType::NORMAL;
        if (user_defined.count(static_cast<uint64_t>(id))) {
            type = TokenType::USER_DEFINED;
        } else if (processor.IsUnknown(id)) {
            type = TokenType::UNKNOWN;
            vocab.unk_id = static_cast<uint32_t>(id);
        } else if (processor.IsControl(id)) {
            type = TokenType::CONTROL;
        } else if (processor.IsUnused(id)) {
            type = TokenType::UNUSED;
        } else if (processor.IsByte(id)) {
            type = TokenType::BYTE;
        }
        vocab.tokens[id] = processor.IdToPiece(id);
        vocab.scores[id] = processor.GetScore(id);
        vocab.token_types[id] = static_cast<int32_t>(type);
    }

    // added_tokens.json {"text": id}: USER_DEFINED; then tokenizer_config.json
    // added_tokens_decoder.
    auto place_added = [&](uint64_t id, std::string text, bool control) {
        if (id >= vocab_size) {
            vocab.dropped_added_tokens.push_back(text + " (id " + std::to_string(id) + ")");
            return;
        }
        if (!control) text = spaces_for_metaspace(text);  // the converter's user-defined spaces
        vocab.tokens[id] = std::move(text);
        vocab.scores[id] = kAddedScore;
        vocab.token_types[id] =
            static_cast<int32_t>(control ? TokenType::CONTROL : TokenType::USER_DEFINED);
    };
    if (const auto added_path = model_dir / "added_tokens.json";
        std::filesystem::is_regular_file(added_path)) {
        const nlohmann::json added = read_json_object(added_path);
        for (const auto& [text, id] : added.items()) {
            if (!id.is_number_unsigned())
                throw_input_error("added_tokens.json", text, "expected a non-negative token id");
            place_added(id.get<uint64_t>(), text, false);
        }
    }
    if (const auto config_path = model_dir / "tokenizer_config.json";
        std::filesystem::is_regular_file(config_path)) {
        const auto config = read_json_object(config_path);
        if (const auto decoder = config.find("added_tokens_decoder");
            decoder != config.end() && decoder->is_object()) {
            for (const auto& [key, entry] : decoder->items()) {
                const std::string field = "added_tokens_decoder." + key;
                uint64_t id = 0;
                const char* end = key.data() + key.size();
                if (key.empty() || std::from_chars(key.data(), end, id).ptr != end)
                    throw_input_error("tokenizer_config.json", field, "key is not a token id");
                if (!entry.is_object() || !entry.contains("content") ||
                    !entry["content"].is_string())
                    throw_input_error("tokenizer_config.json", field,
                                      "expected {\"content\": ...}");
                const std::string text = entry["content"].get<std::string>();
                const bool special = entry.value("special", false);
                place_added(id, text, special || looks_special(text));
            }
        }
    }

    // llama.cpp aborts on duplicate token strings.
    std::unordered_set<std::string_view> seen;
    for (uint64_t id = 0; id < vocab_size; ++id)
        if (!seen.insert(vocab.tokens[id]).second)
            throw Error(ExitClass::blocker, kFile, "pieces",
                        "token string '" + vocab.tokens[id] + "' appears twice (second at id " +
                            std::to_string(id) + ")",
                        "unique token strings, as llama.cpp requires");

    // gguf-py's SpecialVocab without tokenizer.json has no added_tokens to look contents up in:
    // only the add_* flags, the chat template and config.json ids apply.
    apply_special_tokens(model_dir, TokenizerJsonSpecials{}, options.config, vocab);
    return vocab;
}

}  // namespace rebox::detail
