// KV and layout checks. Expected hyper-parameters come from verify's own config.json reading
// (ref_config), pooling from modules.json, the tokenizer from verify's own reading of
// tokenizer.json / tokenizer.model (ref_tokenizer, ref_vocab, ref_spm_model: never the writer's
// tokenizer code); typing follows llama.cpp (docs/gguf.md §1.7, §3.1).
#include "verify/metadata/metadata_checks.hpp"

#include <cmath>
#include <set>
#include <type_traits>
#include <variant>

#include "format/gguf_layout.hpp"
#include "gguf_tools/known_keys.hpp"
#include "model/pooling.hpp"
#include "rebox/error.hpp"
#include "rebox/ggml_type.hpp"
#include "verify/arch/ref_arch.hpp"
#include "verify/metadata/kv_checker.hpp"
#include "verify/quantized/ref_quantize.hpp"
#include "verify/tokenizer/ref_tokenizer.hpp"
#include "verify/values/ref_rope.hpp"

namespace rebox::verify_ref {
namespace {

// _set_vocab_glm: bos / eot / unk / eom are the ids of [gMASK] / <|user|> / <|endoftext|> /
// <|observation|>, each where gguf-py's SpecialVocab set none (the writer refuses a vocabulary
// without them).
void apply_glm_specials(RefVocab& vocab, std::optional<uint32_t>& eom) {
    const auto id_of = [&vocab](std::string_view text) -> std::optional<uint32_t> {
        for (size_t id = 0; id < vocab.tokens.size(); ++id)
            if (vocab.tokens[id] == text) return static_cast<uint32_t>(id);
        return std::nullopt;
    };
    if (!vocab.bos_id) vocab.bos_id = id_of("[gMASK]");
    if (!vocab.eot_id) vocab.eot_id = id_of("<|user|>");
    if (!vocab.unk_id) vocab.unk_id = id_of("<|endoftext|>");
    eom = id_of("<|observation|>");
}

void check_tokenizer(KvChecker& kv, const RefConfig& config, const RefArch* arch,
                     const std::filesystem::path& model_dir, const KvCheckOptions& options,
                     std::vector<std::string>& unchecked) {
    const GgufSet& gguf = kv.gguf_;
    // tokenizer.json, or a SentencePiece tokenizer.model / sentencepiece.bpe.model in its place.
    const bool has_tokenizer_json =
        std::filesystem::exists(model_dir / "tokenizer.json") ||
        std::filesystem::exists(model_dir / "tokenizer.model") ||
        std::filesystem::exists(model_dir / "sentencepiece.bpe.model") ||
        std::filesystem::exists(model_dir / "tiktoken.model");
    kv.handled("tokenizer.ggml.tokens");
    const GgufValue* tokens = gguf.find("tokenizer.ggml.tokens");
    if (tokens == nullptr) {
        if (has_tokenizer_json)
            kv.problem("tokenizer.ggml.tokens", "missing", "the source vocabulary");
        return;
    }
    if (!tokens->is_array() || tokens->elem_type != GgufType::STRING)
        return kv.problem("tokenizer.ggml.tokens", "not a STRING array");
    const uint64_t token_count = tokens->array.size();
    if (config.vocab_size != 0 && token_count != config.vocab_size)
        kv.problem("tokenizer.ggml.tokens", std::to_string(token_count) + " tokens",
                   std::to_string(config.vocab_size) + " (config.json vocab_size)");
    for (size_t i = 0; i < tokens->array.size(); ++i) {
        const std::string* text = std::get_if<std::string>(&tokens->array[i]);
        if (text == nullptr || text->empty()) {
            kv.problem("tokenizer.ggml.tokens", "token " + std::to_string(i) + " is empty",
                       "no holes in the vocabulary");
            break;
        }
    }
    for (const char* key : {"tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id"}) {
        const GgufValue* value = gguf.find(key);
        if (value == nullptr) continue;
        const auto id = value->as_u32();
        if (!id) {
            kv.problem(key, "has type " + std::string(gguf_type_name(value->type)), "UINT32");
        } else if (*id >= token_count) {
            kv.problem(key, "is " + std::to_string(*id),
                       "< " + std::to_string(token_count) + " tokens");
        }
    }
    if (!has_tokenizer_json) return;

    RefTokenizer ref;
    try {
        ref = read_ref_tokenizer(model_dir, config.vocab_size, arch && arch->encoder_bpe,
                                 arch && arch->gemma4_vocab);
    } catch (const Error& e) {
        kv.problem(std::filesystem::exists(model_dir / "tokenizer.json")   ? "tokenizer.json"
                   : std::filesystem::exists(model_dir / "tiktoken.model") ? "tiktoken.model"
                                                                           : "tokenizer.model",
                   std::string("cannot derive the tokenizer: ") + e.what());
        return;
    }
    // The pre-tokenizer: SentencePiece vocabularies are "default"; byte-level BPE takes the name
    // the user chose (--tokenizer-pre), else the one verify derives from the Split regex.
    const std::string pre_key = "tokenizer.ggml.pre";
    std::optional<std::string> pre = ref.model == "llama" ? ref.pre : options.tokenizer_pre;
    if (!pre) pre = ref.pre;
    // llama.cpp's converter names a lone ByteLevel pre-tokenizer by the model family's (by its
    // hash): the architecture's record gives the name.
    if (!pre && ref.byte_level_only && arch && !arch->byte_level_pre.empty())
        pre = std::string(arch->byte_level_pre);
    // _set_vocab_glm's tokenizer is known to the converter by its hash as "glm4"; its Split regex
    // is llama-bpe's.
    if (!options.tokenizer_pre && arch && arch->glm_vocab && pre == "llama-bpe") pre = "glm4";
    if (ref.model == "gemma4") {  // llama.cpp names the gemma4 pre-tokenizer itself
        kv.expect_absent(pre_key, "Gemma4Model.set_vocab writes none");
    } else if (pre) {
        kv.handled(pre_key);
        const GgufValue* value = gguf.find(pre_key);
        const std::string* got = value ? value->as_string() : nullptr;
        const std::string why = options.tokenizer_pre && ref.model != "llama"
                                    ? " (verify --tokenizer-pre)"
                                    : " (from tokenizer.json; verify --tokenizer-pre NAME if the "
                                      "file was converted with one)";
        if (got == nullptr || *got != *pre)
            kv.problem(pre_key, got ? "is \"" + *got + "\"" : "missing or not a STRING",
                       "\"" + *pre + "\"" + why);
    } else {
        kv.handled(pre_key);
        unchecked.push_back(pre_key + ": " + ref.pre_problem +
                            " (pass --tokenizer-pre NAME to check it)");
    }
    kv.expect_string("tokenizer.ggml.model", ref.model);
    if (ref.model == "gpt2" || ref.model == "gemma4")
        kv.expect_strings("tokenizer.ggml.merges", ref.merges, "tokenizer.json model.merges");
    else
        kv.expect_absent("tokenizer.ggml.merges",
                         ref.model == "bert" ? "WordPiece has no merges"
                                             : "a SentencePiece vocabulary merges by score");
    kv.expect_optional("tokenizer.chat_template", ref.chat_template,
                       "the source has no chat template");

    // Tokens, types, scores and special ids: verify's own derivation (ref_vocab, ref_spm_model),
    // for every tokenizer kind; nothing here comes from the writer's tokenizer code.
    if (!ref.vocab) {
        kv.problem("tokenizer.json", "cannot derive the expected vocabulary");
        return;
    }
    RefVocab vocab = *ref.vocab;
    std::optional<uint32_t> eom;
    if (arch && arch->glm_vocab) apply_glm_specials(vocab, eom);
    // NemotronHModel.set_vocab: padded to a multiple of 8 with UNUSED "[PAD<id>]"; BOS added
    // for the dense model.
    if (arch && arch->nemotron_vocab) {
        while (vocab.tokens.size() % 8 != 0) {
            vocab.tokens.push_back("[PAD" + std::to_string(vocab.tokens.size()) + "]");
            vocab.token_types.push_back(5);  // gguf-py TokenType.UNUSED
        }
        if (arch->nemotron_add_bos) vocab.add_bos = true;
    }
    const std::string source =
        std::filesystem::exists(model_dir / "sentencepiece.bpe.model") && ref.model == "t5"
            ? "sentencepiece.bpe.model"
        : std::filesystem::exists(model_dir / "tokenizer.json")  ? "tokenizer.json"
        : std::filesystem::exists(model_dir / "tokenizer.model") ? "tokenizer.model"
        : std::filesystem::exists(model_dir / "tiktoken.model")  ? "tiktoken.model"
                                                                 : "tokenizer.model";
    if (vocab.tokens.size() != token_count) {
        kv.problem("tokenizer.ggml.tokens", std::to_string(token_count) + " tokens",
                   std::to_string(vocab.tokens.size()) + " from " + source);
    } else {
        for (size_t i = 0; i < token_count; ++i) {
            const std::string* text = std::get_if<std::string>(&tokens->array[i]);
            if (text == nullptr || *text != vocab.tokens[i]) {
                kv.problem("tokenizer.ggml.tokens", "token " + std::to_string(i) + " differs",
                           "\"" + vocab.tokens[i] + "\" from " + source);
                break;
            }
        }
    }
    check_numbers(kv, "tokenizer.ggml.token_type", GgufType::INT32, vocab.token_types);
    if (ref.model == "llama" || ref.model == "t5" || ref.model == "gemma4")
        check_numbers(kv, "tokenizer.ggml.scores", GgufType::FLOAT32, vocab.scores);
    else
        kv.expect_absent("tokenizer.ggml.scores", "only a SentencePiece vocabulary has scores");
    if (vocab.add_space_prefix)
        kv.expect_bool("tokenizer.ggml.add_space_prefix", *vocab.add_space_prefix);
    else
        kv.expect_absent("tokenizer.ggml.add_space_prefix", "not a SentencePiece vocabulary");
    // Unigram ("t5") only: remove_extra_whitespaces and the normalizer's charsmap (UINT8 bytes).
    kv.expect_optional("tokenizer.ggml.remove_extra_whitespaces", vocab.remove_extra_whitespaces,
                       "not a Unigram vocabulary");
    if (!vocab.precompiled_charsmap.empty()) {
        std::vector<uint64_t> bytes(vocab.precompiled_charsmap.begin(),
                                    vocab.precompiled_charsmap.end());
        check_numbers(kv, "tokenizer.ggml.precompiled_charsmap", GgufType::UINT8, bytes);
    } else {
        kv.expect_absent("tokenizer.ggml.precompiled_charsmap", "no Precompiled normalizer");
    }
    const std::string none = "the source tokenizer defines none";
    kv.expect_optional("tokenizer.ggml.bos_token_id", vocab.bos_id, none);
    kv.expect_optional("tokenizer.ggml.eos_token_id", vocab.eos_id, none);
    kv.expect_optional("tokenizer.ggml.eot_token_id", vocab.eot_id, none);
    kv.expect_optional("tokenizer.ggml.eom_token_id", eom, none);
    kv.expect_optional("tokenizer.ggml.unknown_token_id", vocab.unk_id, none);
    kv.expect_optional("tokenizer.ggml.padding_token_id", vocab.pad_id, none);
    kv.expect_bool("tokenizer.ggml.add_bos_token", vocab.add_bos);
    kv.expect_bool("tokenizer.ggml.add_eos_token", vocab.add_eos);
    // WordPiece ("bert") only: the separator and mask ids, add_sep, the normalizer flags.
    kv.expect_optional("tokenizer.ggml.seperator_token_id", vocab.sep_id, none);
    kv.expect_optional("tokenizer.ggml.mask_token_id", vocab.mask_id, none);
    kv.expect_optional("tokenizer.ggml.add_sep_token", vocab.add_sep,
                       "no TemplateProcessing pair rule");
    kv.expect_optional("tokenizer.ggml.normalizer.lowercase", vocab.normalizer_lowercase,
                       "no lowercasing normalizer");
    kv.expect_optional("tokenizer.ggml.normalizer.strip_accents", vocab.normalizer_strip_accents,
                       "no accent-stripping normalizer");
}

// general.file_type from the tensors, as llama.cpp's converter and loader name a file: any NVFP4
// tensor makes it MOSTLY_NVFP4 (39) and any MXFP4 one MOSTLY_MXFP4_MOE (38), whatever else stays
// BF16 (convert_hf_to_gguf's prepare_metadata names an NVFP4 / MXFP4 checkpoint so); else the most
// common integer block type (llama-model-loader.cpp's guess; a tie to the fewer bytes per value);
// with none, the most common of F32 / F16 / BF16 over tensors of 2 or more dimensions (1-D
// tensors are F32 in every file type). A file holding K or IQ types was quantized
// with a recipe (Q4_K_M, Q3_K_S, ...) that its tensor types alone do not name, so its file type
// is listed as unchecked. In a file with tensors quantized from float sources (`rebox quantize`,
// `convert --quantize`) the file type names the recipe chosen: checked when the tensors name it
// too (a Q8_0 file), else unchecked (Q4_K_M's fallbacks on narrow rows are Q5_0 and Q8_0, which
// no "most common type" rule would name Q4_K_M).
void check_file_type(KvChecker& kv, size_t requantized, std::vector<std::string>& unchecked) {
    for (const GgufSet::Tensor& tensor : kv.gguf_.tensors()) {
        const GgmlType type = tensor.info->type;
        const bool exact_type = type == GgmlType::Q4_0 || type == GgmlType::Q4_1 ||
                                type == GgmlType::Q5_0 || type == GgmlType::Q5_1 ||
                                type == GgmlType::Q8_0 || type == GgmlType::F32 ||
                                type == GgmlType::F16 || type == GgmlType::BF16 ||
                                type == GgmlType::MXFP4 || type == GgmlType::NVFP4;
        if (!exact_type && ref_quant_type_name(ggml_type_id(type)) != nullptr) {
            kv.handled("general.file_type");
            unchecked.push_back(
                "general.file_type: the quantization recipe chosen (the file holds " +
                std::string(ggml_type_name(type)) + ", which several recipes share)");
            return;
        }
    }
    std::optional<LlamaFileType> fp4_file_type;
    for (const auto& [fp4, named] : {std::pair{GgmlType::MXFP4, LlamaFileType::MOSTLY_MXFP4_MOE},
                                     std::pair{GgmlType::NVFP4, LlamaFileType::MOSTLY_NVFP4}})
        for (const GgufSet::Tensor& tensor : kv.gguf_.tensors())
            if (tensor.info->type == fp4) fp4_file_type = named;
    struct Candidate {
        GgmlType type;
        LlamaFileType file_type;
        size_t count = 0;
    };
    Candidate blocks[] = {{GgmlType::Q4_0, LlamaFileType::MOSTLY_Q4_0},
                          {GgmlType::Q4_1, LlamaFileType::MOSTLY_Q4_1},
                          {GgmlType::Q5_0, LlamaFileType::MOSTLY_Q5_0},
                          {GgmlType::Q5_1, LlamaFileType::MOSTLY_Q5_1},
                          {GgmlType::Q8_0, LlamaFileType::MOSTLY_Q8_0}};
    Candidate floats[] = {{GgmlType::F32, LlamaFileType::ALL_F32},
                          {GgmlType::F16, LlamaFileType::MOSTLY_F16},
                          {GgmlType::BF16, LlamaFileType::MOSTLY_BF16}};
    for (const GgufSet::Tensor& tensor : kv.gguf_.tensors()) {
        for (Candidate& c : blocks)
            if (tensor.info->type == c.type) ++c.count;
        if (tensor.info->ne.size() >= 2)
            for (Candidate& c : floats)
                if (tensor.info->type == c.type) ++c.count;
    }
    const Candidate* best = &blocks[0];
    for (const Candidate& c : blocks)
        if (c.count > best->count) best = &c;
    if (best->count == 0) {
        best = &floats[0];
        for (const Candidate& c : floats)
            if (c.count > best->count) best = &c;
    }
    const LlamaFileType expected = fp4_file_type ? *fp4_file_type
                                   : best->count == 0
                                       ? LlamaFileType::MOSTLY_Q4_1  // no tensor at all
                                       : best->file_type;
    if (requantized > 0) {
        const GgufValue* value = kv.gguf_.find("general.file_type");
        const auto stored = value ? value->as_u32() : std::nullopt;
        if (stored && *stored != static_cast<uint32_t>(expected)) {
            kv.handled("general.file_type");
            unchecked.push_back("general.file_type: the quantization recipe chosen (" +
                                std::to_string(requantized) +
                                " tensors quantized from float sources, each checked; their types "
                                "do not name file type " +
                                std::to_string(*stored) + ")");
            return;
        }
    }
    kv.expect_u32("general.file_type", static_cast<uint32_t>(expected));
}

// Every KV no check above looked at: in a namespace llama.cpp reads ({arch}.*, tokenizer.*) it is
// a problem, since it may change what llama.cpp loads, computes or tokenizes; elsewhere
// (general.name and the other model-card keys, rebox.* provenance, a user's own keys) it is listed
// as unchecked, never silently passed.
void sort_out_the_rest(const KvChecker& kv, const std::string& arch,
                       std::vector<std::string>& unchecked) {
    for (const GgufKV& entry : kv.gguf_.kvs()) {
        const std::string& key = entry.key;
        if (kv.was_handled(key)) continue;
        const bool read_by_llama = key.starts_with(arch + ".") || key.starts_with("tokenizer.");
        if (read_by_llama) {
            kv.problems_.push_back(
                error_message(kv.file_, key, "present, but nothing in the source asks for it",
                              "absent (llama.cpp reads " + arch + ".* and tokenizer.* keys)"));
        } else if (key == "general.name" || converter_model_card_type(key)) {
            // Model-card metadata (README.md, generation_config.json, --metadata, --name): it
            // describes the model and changes nothing llama.cpp computes (general.sampling.* are
            // only its default sampler settings).
            unchecked.push_back(key + ": model-card metadata, descriptive (rebox meta may set it)");
        } else if (key.starts_with("rebox.")) {
            unchecked.push_back(key + ": rebox provenance, not read by llama.cpp");
        } else {
            unchecked.push_back(key + ": not a key verify derives");
        }
    }
}

// An encoder's own KVs (BertModel.set_gguf_parameters / set_vocab): layer_norm_eps, causal false,
// token_type_count = type_vocab_size, and the classifier labels (id2label; transformers' dummy pair
// LABEL_0/LABEL_1 only for a reranker, whose head needs the count).
void check_encoder_kvs(KvChecker& kv, const std::string& arch, const RefConfig& config,
                       bool bpe_vocab, bool reranker) {
    if (config.layer_norm_eps)
        kv.expect_f32(arch + ".attention.layer_norm_epsilon", *config.layer_norm_eps);
    kv.expect_bool(arch + ".attention.causal", false);
    // A byte-level BPE encoder vocabulary (modernbert) is written by the BPE path: no token types.
    if (bpe_vocab)
        kv.expect_absent("tokenizer.ggml.token_type_count", "a ModernBERT BPE vocabulary");
    else if (kv.gguf_.find("tokenizer.ggml.tokens") != nullptr)
        kv.expect_u32("tokenizer.ggml.token_type_count", config.type_vocab_size);
    const std::string labels_key = arch + ".classifier.output_labels";
    const bool dummy = config.id2label.size() == 2 && config.id2label[0] == "LABEL_0";
    if (!config.id2label.empty() && (reranker || !dummy))
        kv.expect_strings(labels_key, config.id2label, "config.json id2label");
    else
        kv.expect_absent(labels_key, "no classifier labels in config.json");
}

// gemma-embedding's Dense module `stem` ("dense_2"): its in/out features as the module's
// config.json gives them, or neither KV without the module; llama.cpp's loader asserts that
// dense_2_feat_in and dense_3_feat_out equal n_embd.
void check_dense_kvs(KvChecker& kv, const std::string& arch, const std::string& stem,
                     const std::optional<RefConfig::Dense>& dense, uint32_t hidden) {
    const std::string in_key = arch + "." + stem + "_feat_in";
    const std::string out_key = arch + "." + stem + "_feat_out";
    if (!dense) {
        kv.expect_absent(in_key, "no " + stem + " Dense module in modules.json");
        kv.expect_absent(out_key, "no " + stem + " Dense module in modules.json");
        return;
    }
    kv.expect_u32(in_key, dense->in);
    kv.expect_u32(out_key, dense->out);
    const uint32_t at_hidden = stem == "dense_2" ? dense->in : dense->out;
    if (at_hidden != hidden)
        kv.problem(stem == "dense_2" ? in_key : out_key, std::to_string(at_hidden),
                   "hidden_size " + std::to_string(hidden) + " (llama.cpp's loader asserts it)");
}

// A yarn rope (TextModel.set_gguf_parameters): the type, the factor, the original context, the
// extrapolation and attention factors and the betas config.json gives, each F32 / U32 as gguf-py
// writes them.
void check_yarn(KvChecker& kv, const std::string& arch, const RefRopeScaling& scaling) {
    kv.expect_string(arch + ".rope.scaling.type", "yarn");
    const auto f32 = [&](const std::string& key, std::optional<double> want, const char* field) {
        kv.handled(key);
        const GgufValue* value = kv.gguf_.find(key);
        if (!want) {
            if (value != nullptr) kv.problem(key, "present", std::string("absent: no ") + field);
            return;
        }
        const float expected = static_cast<float>(*want);
        if (value == nullptr || value->type != GgufType::FLOAT32 ||
            static_cast<float>(std::get<double>(value->scalar)) != expected)
            kv.problem(key, "missing or different",
                       "FLOAT32 " + std::to_string(expected) + " (config.json " + field + ")");
    };
    f32(arch + ".rope.scaling.factor", scaling.factor, "rope_scaling.factor");
    kv.expect_u32(arch + ".rope.scaling.original_context_length",
                  scaling.original_max_position_embeddings.value_or(0));
    f32(arch + ".rope.scaling.yarn_ext_factor", scaling.extrapolation_factor,
        "rope_scaling.extrapolation_factor");
    f32(arch + ".rope.scaling.yarn_attn_factor", scaling.attention_factor,
        "rope_scaling.attention_factor");
    f32(arch + ".rope.scaling.yarn_beta_fast", scaling.beta_fast, "rope_scaling.beta_fast");
    f32(arch + ".rope.scaling.yarn_beta_slow", scaling.beta_slow, "rope_scaling.beta_slow");
}

// A per-layer FLOAT32 array KV (apertus' xielu.*): one entry per layer, each bit for bit the
// source tensor's value.
void check_layer_scalars(KvChecker& kv, const RefLayerScalarKv& array) {
    kv.handled(array.key);
    for (size_t layer = 0; layer < array.values.size(); ++layer)
        if (!array.values[layer])
            return kv.problem(array.key, "not checkable",
                              "a source value for layer " + std::to_string(layer));
    const GgufValue* value = kv.gguf_.find(array.key);
    if (value == nullptr || !value->is_array() || value->elem_type != GgufType::FLOAT32)
        return kv.problem(array.key, "missing or not a FLOAT32 array",
                          std::to_string(array.values.size()) + " values, one per layer");
    if (value->array.size() != array.values.size())
        return kv.problem(array.key, std::to_string(value->array.size()) + " entries",
                          std::to_string(array.values.size()) + " (one per layer)");
    for (size_t layer = 0; layer < array.values.size(); ++layer) {
        const double* got = std::get_if<double>(&value->array[layer]);
        if (got == nullptr || static_cast<float>(*got) != *array.values[layer] ||
            std::signbit(static_cast<float>(*got)) != std::signbit(*array.values[layer]))
            return kv.problem(array.key, "entry " + std::to_string(layer) + " differs",
                              std::to_string(*array.values[layer]) + " from the source tensor");
    }
}

}  // namespace

void check_kvs(const GgufSet& gguf, const RefConfig& config, const std::filesystem::path& model_dir,
               const KvCheckOptions& options, std::vector<std::string>& problems,
               std::vector<std::string>& unchecked) {
    KvChecker kv(gguf, problems);
    const RefArch* architecture = find_ref_arch(config.model_type);  // verify's own record
    const std::string arch =
        architecture ? std::string(architecture->gguf_arch) : config.model_type;
    kv.expect_string("general.architecture", arch);
    kv.expect_u32(arch + ".embedding_length", config.hidden_size);
    kv.expect_u32(arch + ".block_count", uint64_t{config.num_hidden_layers} + config.mtp_layers);
    kv.expect_u32(arch + ".attention.head_count", config.num_attention_heads);
    const bool encoder = architecture && architecture->encoder;
    // BertModel writes no head_count_kv (a BERT config has none); gemma4 (a per-layer array) and
    // deepseek2 (1) check their own in their KV hook.
    if (!encoder && !(architecture && architecture->own_head_count_kv))
        kv.expect_u32(arch + ".attention.head_count_kv", config.num_key_value_heads);
    const bool own_context_and_ffn = architecture && architecture->own_context_and_ffn;
    if (config.intermediate_size_given && !own_context_and_ffn)
        kv.expect_u32(arch + ".feed_forward_length", config.intermediate_size);
    kv.expect_u32("general.quantization_version", 2);  // GGML_QNT_VERSION
    check_file_type(kv, options.requantized, unchecked);
    // general.alignment: the layout check proves the file follows it.
    kv.handled("general.alignment");
    // Which of these keys an architecture carries is its record's (verify/arch/).
    const auto lists = [architecture](RefKv key) {
        return architecture != nullptr && architecture->lists(key);
    };
    if (!own_context_and_ffn)
        kv.expect_u32(arch + ".context_length",
                      config.max_position_embeddings - config.position_offset);
    if (lists(RefKv::rope_freq_base)) kv.expect_f32(arch + ".rope.freq_base", config.rope_theta);
    if (lists(RefKv::rms_epsilon))
        kv.expect_f32(arch + ".attention.layer_norm_rms_epsilon", config.rms_norm_eps);
    if (lists(RefKv::key_length)) kv.expect_u32(arch + ".attention.key_length", config.head_dim);
    if (lists(RefKv::value_length))
        kv.expect_u32(arch + ".attention.value_length", config.head_dim);
    if (lists(RefKv::rope_dimension_count_rotary))  // phi3: partial rotary
        kv.expect_u32(arch + ".rope.dimension_count", phi3_rotary_dims(config));
    else if (lists(RefKv::rope_dimension_count))  // llama: "invalid n_rot"
        kv.expect_u32(arch + ".rope.dimension_count", config.head_dim);
    if (lists(RefKv::vocab_size)) kv.expect_u32(arch + ".vocab_size", config.vocab_size);
    if (lists(RefKv::sliding_window_or_zero))  // phi3 writes 0 for "none"
        kv.expect_u32(arch + ".attention.sliding_window", config.sliding_window.value_or(0));
    if (lists(RefKv::rope_scaling_original_context_length)) {
        const auto original =
            config.rope_scaling && config.rope_scaling->original_max_position_embeddings
                ? config.rope_scaling->original_max_position_embeddings
                : config.original_max_position_embeddings;
        kv.expect_u32(arch + ".rope.scaling.original_context_length", original.value_or(0));
    }
    const std::string attn_factor_key = arch + ".rope.scaling.attn_factor";
    kv.handled(attn_factor_key);
    const GgufValue* attn_factor = gguf.find(attn_factor_key);
    const auto long_rope = expected_phi3_long_rope(config);
    if (long_rope && lists(RefKv::rope_scaling_original_context_length)) {
        if (attn_factor == nullptr || attn_factor->type != GgufType::FLOAT32 ||
            static_cast<float>(std::get<double>(attn_factor->scalar)) != long_rope->attn_factor)
            kv.problem(attn_factor_key, "missing or different",
                       "FLOAT32 " + std::to_string(long_rope->attn_factor) +
                           " (sqrt(1 + ln(context/original) / ln(original)))");
    } else if (attn_factor != nullptr) {
        kv.problem(attn_factor_key, "present", "absent: config.json has no long rope");
    }
    // Mixture of experts: the counts and widths llama.cpp's loader sizes the expert tensors by.
    if (config.num_experts > 0) {
        kv.expect_u32(arch + ".expert_count", config.num_experts);
        kv.expect_u32(arch + ".expert_used_count", config.num_experts_per_tok);
        if (config.moe_intermediate_size)
            kv.expect_u32(arch + ".expert_feed_forward_length", *config.moe_intermediate_size);
        else if (lists(RefKv::expert_feed_forward_length_ffn))  // gpt-oss
            kv.expect_u32(arch + ".expert_feed_forward_length", config.intermediate_size);
        if (config.shared_expert_intermediate_size)
            kv.expect_u32(arch + ".expert_shared_feed_forward_length",
                          *config.shared_expert_intermediate_size);
    }
    if (architecture)
        for (const RefKv key : architecture->kvs) {
            switch (key) {
                // gemma2/gemma3: written when config.json has them (docs/architectures.md).
                case RefKv::attn_logit_softcapping:
                    if (config.attn_logit_softcapping)
                        kv.expect_f32(arch + ".attn_logit_softcapping",
                                      *config.attn_logit_softcapping);
                    else
                        kv.expect_absent(arch + ".attn_logit_softcapping", "not in config.json");
                    break;
                case RefKv::final_logit_softcapping:
                    if (config.final_logit_softcapping)
                        kv.expect_f32(arch + ".final_logit_softcapping",
                                      *config.final_logit_softcapping);
                    else
                        kv.expect_absent(arch + ".final_logit_softcapping", "not in config.json");
                    break;
                case RefKv::sliding_window:
                    if (config.sliding_window && config.sliding_window_pattern != 1u)
                        kv.expect_u32(arch + ".attention.sliding_window", *config.sliding_window);
                    else
                        kv.expect_absent(arch + ".attention.sliding_window",
                                         "no sliding window (or sliding_window_pattern 1)");
                    break;
                case RefKv::rope_freq_base_swa:
                    if (config.rope_local_theta)
                        kv.expect_f32(arch + ".rope.freq_base_swa", *config.rope_local_theta);
                    break;
                // EmbeddingGemma.set_gguf_parameters: config.json's sliding_window as written.
                case RefKv::sliding_window_required:
                    if (config.sliding_window)
                        kv.expect_u32(arch + ".attention.sliding_window", *config.sliding_window);
                    else
                        kv.problem(arch + ".attention.sliding_window", "not checkable",
                                   "config.json sliding_window (the converter requires it)");
                    break;
                case RefKv::dense_2_feat_in:
                    check_dense_kvs(kv, arch, "dense_2", config.dense_2, config.hidden_size);
                    break;
                case RefKv::dense_3_feat_in:
                    check_dense_kvs(kv, arch, "dense_3", config.dense_3, config.hidden_size);
                    break;
                // modernbert: the layer pattern and the activation when config.json has them.
                case RefKv::sliding_window_pattern:
                    kv.expect_optional(arch + ".attention.sliding_window_pattern",
                                       config.sliding_window_pattern,
                                       "no global_attn_every_n_layers in config.json");
                    break;
                // olmo2: TextModel writes them only from config.json's head_dim.
                case RefKv::head_dim_lengths_given:
                    for (const char* key : {".attention.key_length", ".attention.value_length"})
                        if (config.head_dim_given)
                            kv.expect_u32(arch + key, config.head_dim);
                        else
                            kv.expect_absent(arch + key, "no head_dim in config.json");
                    break;
                case RefKv::sliding_window_layers:
                    if (config.sliding_window)
                        kv.expect_bools(arch + ".attention.sliding_window_pattern",
                                        config.sliding_layers);
                    else
                        kv.expect_absent(arch + ".attention.sliding_window_pattern",
                                         "no sliding_window in config.json");
                    break;
                case RefKv::hidden_activation:
                    kv.expect_optional(arch + ".hidden_activation", config.hidden_activation,
                                       "no hidden_activation in config.json");
                    break;
                default:
                    break;
            }
        }
    // What the architecture's converter class adds, checked by its own record (verify/arch/).
    if (architecture != nullptr && architecture->check_kvs != nullptr)
        architecture->check_kvs(kv, arch, config);

    // Linear rope scaling (config.json "linear" with a factor): llama.cpp's converter writes the
    // type and the factor; any other type leaves no scaling KVs here.
    kv.handled(arch + ".rope.scaling.type");
    kv.handled(arch + ".rope.scaling.factor");
    const GgufValue* scaling_type = gguf.find(arch + ".rope.scaling.type");
    if (lists(RefKv::rope_scaling_type_none)) {  // ModernBertModel: always "none"
        kv.expect_string(arch + ".rope.scaling.type", "none");
    } else if (config.rope_scaling && config.rope_scaling->type == "linear" &&
               config.rope_scaling->factor) {
        kv.expect_string(arch + ".rope.scaling.type", "linear");
        const GgufValue* factor = gguf.find(arch + ".rope.scaling.factor");
        const float want = static_cast<float>(*config.rope_scaling->factor);
        if (factor == nullptr || factor->type != GgufType::FLOAT32 ||
            static_cast<float>(std::get<double>(factor->scalar)) != want)
            kv.problem(arch + ".rope.scaling.factor", "missing or different",
                       "FLOAT32 " + std::to_string(want) + " (config.json rope_scaling.factor)");
    } else if (config.rope_scaling && config.rope_scaling->type == "yarn" &&
               config.rope_scaling->factor && lists(RefKv::rope_scaling_yarn)) {
        check_yarn(kv, arch, *config.rope_scaling);
    } else if (scaling_type != nullptr) {
        kv.problem(arch + ".rope.scaling.type", "present",
                   "absent: config.json asks for no linear rope scaling");
    }

    for (const RefLayerScalarKv& array : options.layer_scalars) check_layer_scalars(kv, array);
    if (encoder) check_encoder_kvs(kv, arch, config, architecture->encoder_bpe, options.reranker);
    const std::string pooling_key = arch + ".pooling_type";
    kv.handled(pooling_key);
    if (encoder && options.reranker) {
        kv.expect_u32(pooling_key, static_cast<uint32_t>(PoolingType::RANK));
    } else if (const auto pooling = read_pooling(model_dir)) {
        kv.expect_u32(pooling_key, static_cast<uint32_t>(*pooling));
    } else if (gguf.find(pooling_key) != nullptr) {
        kv.problem(pooling_key, "present", "absent: the source has no pooling module");
    }
    check_tokenizer(kv, config, architecture, model_dir, options, unchecked);
    sort_out_the_rest(kv, arch, unchecked);
}

void check_layout(const GgufFile& gguf, std::vector<std::string>& problems) {
    const std::string& file = gguf.display_name();
    const uint64_t alignment = gguf.alignment();
    if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
        problems.push_back(
            error_message(file, "general.alignment", std::to_string(alignment), "a power of two"));
        return;
    }
    const uint64_t data_offset = gguf_pad(gguf.meta_end(), alignment);
    if (gguf.data_offset() != data_offset)
        problems.push_back(
            error_message(file, "data section", "starts at " + std::to_string(gguf.data_offset()),
                          std::to_string(data_offset) + " = PAD(end of tensor infos)"));
    uint64_t next_offset = 0;
    for (const GgufTensorInfo& tensor : gguf.tensors()) {
        const auto nbytes = ggml_nbytes(tensor.type, tensor.ne);
        if (!nbytes || *nbytes != tensor.nbytes)
            problems.push_back(
                error_message(file, tensor.name, "byte size does not follow from type and shape"));
        if (tensor.offset != next_offset)
            problems.push_back(error_message(file, tensor.name,
                                             "offset " + std::to_string(tensor.offset),
                                             std::to_string(next_offset) + " (canonical layout)"));
        next_offset = tensor.offset + gguf_pad(tensor.nbytes, alignment);
    }
    const uint64_t expected_size = gguf.data_offset() + next_offset;
    if (gguf.file_size() != expected_size)
        problems.push_back(error_message(
            file, "file size", std::to_string(gguf.file_size()) + " bytes",
            std::to_string(expected_size) + " = data offset + last offset + PAD(last nbytes)"));
}

}  // namespace rebox::verify_ref
