// WordPiece tokenizer.json for verify (convert_hf_to_gguf BertModel.set_vocab, gguf-py
// SpecialVocab._parse_normalizer): llama.cpp's phantom-space convention (a CONTROL token stays as
// it is, "##x" becomes "x", any other token gains U+2581 in front, the [PAD<i>] fillers too) and
// the normalizer's lowercase / strip_accents flags (Lowercase, StripAccents, a BertNormalizer's
// own fields where they are booleans, the members of a Sequence).
#include "verify/tokenizer/ref_vocab_kinds.hpp"

namespace rebox::verify_ref {
namespace {

using simdjson::dom::array;
using simdjson::dom::element;

void read_normalizer(const element& normalizer, RefVocab& vocab, int depth = 0) {
    std::string_view type;
    if (depth > 8 || normalizer["type"].get(type)) return;
    if (type == "Lowercase") vocab.normalizer_lowercase = true;
    if (type == "StripAccents") vocab.normalizer_strip_accents = true;
    if (type == "BertNormalizer") {
        bool flag = false;
        if (!normalizer["lowercase"].get(flag)) vocab.normalizer_lowercase = flag;
        if (!normalizer["strip_accents"].get(flag)) vocab.normalizer_strip_accents = flag;
    }
    array items;
    if (type == "Sequence" && !normalizer["normalizers"].get(items))
        for (const element item : items) read_normalizer(item, vocab, depth + 1);
}

}  // namespace

void apply_ref_wordpiece(const element& root, RefVocab& vocab) {
    for (size_t id = 0; id < vocab.tokens.size(); ++id) {
        if (vocab.token_types[id] == kTokenControl) continue;
        std::string& token = vocab.tokens[id];
        if (token.starts_with("##"))
            token.erase(0, 2);
        else
            token.insert(0, "\xE2\x96\x81");
    }
    element normalizer;
    if (!root["normalizer"].get(normalizer) && normalizer.is_object())
        read_normalizer(normalizer, vocab);
}

}  // namespace rebox::verify_ref
