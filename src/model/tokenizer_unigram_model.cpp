// sentencepiece.bpe.model (XLM-R's SentencePiece Unigram ModelProto) -> llama.cpp's "t5"
// vocabulary, the branch llama.cpp's converter prefers when the file is present
// (BertModel._xlmroberta_set_vocab): the trainer's model type must be UNIGRAM; pieces, scores and
// types from Debian's libsentencepiece (UNKNOWN, CONTROL, UNUSED, BYTE as the processor says),
// padded to max(vocab_size, pieces) with [PAD<i>] / -10000 / UNUSED, then realigned to fairseq's
// ids as the converter does: <s> <pad> </s> <unk> (scores 0; CONTROL x3, UNKNOWN) followed by
// entries 3 .. n-2 of that table, so GGUF id k >= 4 holds piece k - 1 (XLM-R's <mask> is not in
// the model: its id stays a [PAD] entry, as in the converter's files). add_space_prefix,
// remove_extra_whitespaces and the precompiled charsmap come from the normalizer_spec.
#include <sentencepiece_processor.h>

#include <unordered_set>

#include "json_file.hpp"
#include "rebox/error.hpp"
#include "tokenizer_spm.hpp"
#include "tokenizer_unigram.hpp"

namespace rebox::detail {
namespace {

constexpr const char* kFile = "sentencepiece.bpe.model";
constexpr uint64_t kTrainerSpec = 2, kNormalizerSpec = 3;
constexpr uint64_t kModelType = 3, kUnigram = 1;
constexpr uint64_t kCharsmap = 2, kAddDummyPrefix = 3, kRemoveExtraWhitespaces = 4;

}  // namespace

TokenizerVocab read_unigram_sentencepiece(const std::filesystem::path& model_dir,
                                          const TokenizerOptions& options) {
    const std::filesystem::path path = model_dir / kFile;
    check_file_size(path, kMaxTokenizerBytes);
    const std::string bytes = read_sentencepiece_file(path);
    const uint64_t model_type =
        sentencepiece_spec_varint(bytes, kTrainerSpec, kModelType).value_or(kUnigram);
    if (model_type != kUnigram)
        throw Error(ExitClass::blocker, kFile, "trainer_spec.model_type",
                    "type " + std::to_string(model_type) + " is not Unigram",
                    "a Unigram model (llama.cpp's converter asserts it)");
    sentencepiece::SentencePieceProcessor processor;
    if (const auto status = processor.LoadFromSerializedProto(bytes); !status.ok())
        throw_input_error(kFile, "",
                          std::string("not a SentencePiece model (") + status.ToString() + ")");
    const auto pieces = static_cast<uint64_t>(processor.GetPieceSize());
    if (options.vocab_size != 0 && pieces + 1 > options.vocab_size)
        throw Error(ExitClass::blocker, kFile, "pieces",
                    std::to_string(pieces) +
                        " pieces (+1 for fairseq's <pad>), beyond the "
                        "vocabulary of config.json vocab_size " +
                        std::to_string(options.vocab_size),
                    "the sentencepiece.bpe.model that belongs to these weights");
    const uint64_t size = std::max<uint64_t>(options.vocab_size, pieces);
    if (size < 4) throw_input_error(kFile, "pieces", "fewer than 4 entries");

    std::vector<std::string> tokens(size);
    std::vector<float> scores(size, kUnigramPadScore);
    std::vector<int32_t> types(size, static_cast<int32_t>(TokenType::UNUSED));
    for (uint64_t id = 0; id < size; ++id) tokens[id] = "[PAD" + std::to_string(id) + "]";
    for (int id = 0; id < static_cast<int>(pieces); ++id) {
        TokenType type = TokenType::NORMAL;
        if (processor.IsUnknown(id))
            type = TokenType::UNKNOWN;
        else if (processor.IsControl(id))
            type = TokenType::CONTROL;
        else if (processor.IsUnused(id))
            type = TokenType::UNUSED;
        else if (processor.IsByte(id))
            type = TokenType::BYTE;
        tokens[id] = processor.IdToPiece(id);
        scores[id] = processor.GetScore(id);
        types[id] = static_cast<int32_t>(type);
    }
    // The realignment: [<s>, <pad>, </s>, <unk>] + table[3:-1].
    TokenizerVocab vocab;
    vocab.model = "t5";
    vocab.pre = "default";
    vocab.tokens = {"<s>", "<pad>", "</s>", "<unk>"};
    vocab.scores = {0.0f, 0.0f, 0.0f, 0.0f};
    const auto control = static_cast<int32_t>(TokenType::CONTROL);
    vocab.token_types = {control, control, control, static_cast<int32_t>(TokenType::UNKNOWN)};
    for (uint64_t id = 3; id + 1 < size; ++id) {
        vocab.tokens.push_back(std::move(tokens[id]));
        vocab.scores.push_back(scores[id]);
        vocab.token_types.push_back(types[id]);
    }
    std::unordered_set<std::string_view> seen;
    for (size_t id = 0; id < vocab.tokens.size(); ++id)
        if (!seen.insert(vocab.tokens[id]).second)
            throw Error(ExitClass::blocker, kFile, "pieces",
                        "token string '" + vocab.tokens[id] + "' appears twice (second at id " +
                            std::to_string(id) + ")",
                        "unique token strings, as llama.cpp requires");
    vocab.add_space_prefix =
        sentencepiece_spec_varint(bytes, kNormalizerSpec, kAddDummyPrefix).value_or(1) != 0;
    vocab.remove_extra_whitespaces =
        sentencepiece_spec_varint(bytes, kNormalizerSpec, kRemoveExtraWhitespaces).value_or(1) != 0;
    if (const auto charsmap = sentencepiece_spec_bytes(bytes, kNormalizerSpec, kCharsmap))
        vocab.precompiled_charsmap.assign(charsmap->begin(), charsmap->end());
    return vocab;
}

}  // namespace rebox::detail
