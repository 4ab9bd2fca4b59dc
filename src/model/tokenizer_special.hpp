// Internal: special token ids and add_bos/add_eos for the GGUF tokenizer, decided the way gguf-py's
// SpecialVocab does (tokenizer.json post_processor, tokenizer_config.json, then config.json).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/tokenizer_vocab.hpp"

namespace rebox::detail {

// The few facts of tokenizer.json the special-token rules need.
struct TokenizerJsonSpecials {
    std::vector<std::pair<std::string, uint32_t>> added_tokens;  // content, id; file order
    bool encoder = false;  // a byte-level BPE encoder vocabulary: sep / mask / add_sep as well
    // Each TemplateProcessing post-processor (in order) whose "single" template has more than one
    // item: the SpecialToken id at its start / end (nullopt when that item is a Sequence).
    // The "pair" template's items: a SpecialToken's id, or a Sequence's id ("A", "B").
    struct PairItem {
        bool special = false;
        std::string id;
    };
    struct TemplateEnds {
        std::optional<std::string> first, last;
        std::vector<PairItem> pair;
    };
    std::vector<TemplateEnds> templates;
    // A RobertaProcessing post-processor (XLM-R): its cls and sep token contents.
    struct Roberta {
        std::optional<std::string> cls, sep;
    };
    std::optional<Roberta> roberta;
};

// Sets vocab.bos_id/eos_id/eot_id/pad_id/unk_id, add_bos/add_eos and chat_template; for a "bert"
// or "t5" vocabulary also sep_id/mask_id and add_sep (from the pair template, or a
// RobertaProcessing). Ids outside
// vocab.tokens are left unset (llama.cpp would ignore them). Throws rebox::Error (input) for
// malformed tokenizer_config.json / config.json.
// `hparams_json`: config.json already parsed, or null to read model_dir/config.json if it exists.
void apply_special_tokens(const std::filesystem::path& model_dir,
                          const TokenizerJsonSpecials& specials, const nlohmann::json* hparams_json,
                          TokenizerVocab& vocab);

}  // namespace rebox::detail
