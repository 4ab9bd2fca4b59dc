// The small Gemma-4-shaped tokenizer of the gemma4 fixture (gemma4_tokenizer.hpp).
#include "gemma4_tokenizer.hpp"

#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace mkfixture {
namespace {

using g4json = nlohmann::ordered_json;

constexpr const char* kG4Escape = "\xE2\x96\x81";  // U+2581
constexpr int kG4Merges = 120;

// Gemma's leading tokens, then Gemma 4's own; `special` as in the tokenizer.json's added_tokens.
struct G4Special {
    const char* text;
    bool special;
};
constexpr G4Special kG4Specials[] = {
    {"<pad>", true},
    {"<eos>", true},
    {"<bos>", true},
    {"<unk>", true},
    {"<mask>", false},
    {"[multimodal]", false},
    {"<|turn>", true},
    {"<turn|>", true},
    {"<|channel>", true},
    {"<channel|>", true},
    {"<|tool_call>", true},
    {"<tool_call|>", true},
    {"<|tool_response>", true},
    {"<tool_response|>", true},
    {"<|\"|>", true},
    {"<|tool>", true},
    {"<tool|>", true},
    {"<|think|>", true},
    {"<|image>", true},
    {"<image|>", true},
    {"<|image|>", true},
    {"<|audio>", true},
    {"<audio|>", true},
    {"<|audio|>", true},
};

constexpr const char* kG4Corpus =
    "The quick brown fox jumps over the lazy dog. Hello world, hello there! "
    "Gemma reads the tokens and writes the answer; the model thinks, then it answers. "
    "Numbers like 1234 and 56.78 stay as digits. Tools are called with arguments. "
    "The weather in Paris is sunny today, and the river is calm.";

// The text's UTF-8 characters.
std::vector<std::string> g4_chars(const std::string& text) {
    std::vector<std::string> out;
    for (size_t i = 0; i < text.size();) {
        const unsigned char c = static_cast<unsigned char>(text[i]);
        const size_t n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
        out.push_back(text.substr(i, n));
        i += n;
    }
    return out;
}

g4json g4_added(int64_t id, const char* text, bool special) {
    return g4json{{"id", id},          {"content", text}, {"single_word", false},
                  {"lstrip", false},   {"rstrip", false}, {"normalized", false},
                  {"special", special}};
}

g4json g4_tokenizer_json() {
    g4json vocab = g4json::object(), added = g4json::array(), merges = g4json::array();
    int64_t next = 0;
    for (const G4Special& s : kG4Specials) {
        added.push_back(g4_added(next, s.text, s.special));
        vocab[s.text] = next++;
    }
    // Gemma's first merges build whitespace runs ("\n\n" from two "\n").
    for (const char* text : {"\n", "\n\n", "\t"}) vocab[text] = next++;
    merges.push_back(g4json::array({"\n", "\n"}));
    for (int byte = 0; byte < 256; ++byte) {
        char name[8];
        std::snprintf(name, sizeof name, "<0x%02X>", byte);
        vocab[name] = next++;
    }
    // Words as the normalizer leaves them: every space a U+2581 in front of the next word.
    std::string escaped;
    for (const char c : std::string(kG4Corpus)) escaped += c == ' ' ? kG4Escape : std::string(1, c);
    std::vector<std::vector<std::string>> words;
    std::vector<std::string> word;
    for (const std::string& ch : g4_chars(escaped)) {
        if (ch == kG4Escape && !word.empty()) words.push_back(std::move(word)), word.clear();
        word.push_back(ch);
        if (!vocab.contains(ch)) vocab[ch] = next++;
    }
    if (!word.empty()) words.push_back(word);
    for (int m = 0; m < kG4Merges; ++m) {
        std::map<std::pair<std::string, std::string>, int> pairs;
        for (const auto& w : words)
            for (size_t i = 0; i + 1 < w.size(); ++i) ++pairs[{w[i], w[i + 1]}];
        auto best = pairs.end();
        for (auto it = pairs.begin(); it != pairs.end(); ++it)
            if (!vocab.contains(it->first.first + it->first.second) &&
                (best == pairs.end() || it->second > best->second))
                best = it;
        if (best == pairs.end()) break;
        const auto [left, right] = best->first;
        vocab[left + right] = next++;
        merges.push_back(g4json::array({left, right}));
        for (auto& w : words) {
            std::vector<std::string> out;
            for (size_t i = 0; i < w.size(); ++i) {
                if (i + 1 < w.size() && w[i] == left && w[i + 1] == right) {
                    out.push_back(left + right);
                    ++i;
                } else {
                    out.push_back(w[i]);
                }
            }
            w = std::move(out);
        }
    }
    const g4json bos = {{"SpecialToken", {{"id", "<bos>"}, {"type_id", 0}}}};
    auto sequence = [](const char* id, int type) {
        return g4json{{"Sequence", {{"id", id}, {"type_id", type}}}};
    };
    g4json bos1 = bos;
    bos1["SpecialToken"]["type_id"] = 1;
    return g4json{
        {"version", "1.0"},
        {"truncation", nullptr},
        {"padding", nullptr},
        {"added_tokens", added},
        {"normalizer",
         {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", kG4Escape}}},
        {"pre_tokenizer",
         {{"type", "Split"},
          {"pattern", {{"String", " "}}},
          {"behavior", "MergedWithPrevious"},
          {"invert", false}}},
        {"post_processor",
         {{"type", "TemplateProcessing"},
          {"single", g4json::array({bos, sequence("A", 0)})},
          {"pair", g4json::array({bos, sequence("A", 0), bos1, sequence("B", 1)})},
          {"special_tokens",
           {{"<bos>",
             {{"id", "<bos>"},
              {"ids", g4json::array({2})},
              {"tokens", g4json::array({"<bos>"})}}}}}}},
        {"decoder",
         {{"type", "Sequence"},
          {"decoders",
           g4json::array(
               {{{"type", "Replace"}, {"pattern", {{"String", kG4Escape}}}, {"content", " "}},
                {{"type", "ByteFallback"}},
                {{"type", "Fuse"}}})}}},
        {"model",
         {{"type", "BPE"},
          {"dropout", nullptr},
          {"unk_token", "<unk>"},
          {"continuing_subword_prefix", nullptr},
          {"end_of_word_suffix", nullptr},
          {"fuse_unk", true},
          {"byte_fallback", true},
          {"ignore_merges", false},
          {"vocab", vocab},
          {"merges", merges}}}};
}

g4json g4_tokenizer_config(const g4json& tokenizer) {
    g4json decoder = g4json::object();
    for (const g4json& t : tokenizer["added_tokens"]) {
        g4json entry = t;
        entry.erase("id");
        decoder[std::to_string(t["id"].get<int64_t>())] = entry;
    }
    return g4json{
        {"add_bos_token", true},
        {"add_eos_token", false},
        {"added_tokens_decoder", decoder},
        {"bos_token", "<bos>"},
        {"chat_template",
         "{{ bos_token }}{% for m in messages %}<|turn>{{ m['role'] }}\n{{ m['content'] }}"
         "<turn|>\n{% endfor %}{% if add_generation_prompt %}<|turn>model\n{% endif %}"},
        {"clean_up_tokenization_spaces", false},
        {"eos_token", "<eos>"},
        {"extra_special_tokens",
         {{"image_token", "<|image|>"},
          {"boi_token", "<|image>"},
          {"eoi_token", "<image|>"},
          {"audio_token", "<|audio|>"},
          {"boa_token", "<|audio>"},
          {"eoa_token", "<audio|>"},
          {"sot_token", "<|turn>"},
          {"eot_token", "<turn|>"},
          {"soc_token", "<|channel>"},
          {"eoc_token", "<channel|>"},
          {"think_token", "<|think|>"},
          {"escape_token", "<|\"|>"},
          {"str_token", "<|tool_response>"},
          {"etr_token", "<tool_response|>"},
          {"stc_token", "<|tool_call>"},
          {"etc_token", "<tool_call|>"},
          {"std_token", "<|tool>"},
          {"etd_token", "<tool|>"}}},
        {"mask_token", "<mask>"},
        {"model_max_length", 1000000000000000019884624838656.0},
        {"pad_token", "<pad>"},
        {"padding_side", "left"},
        {"tokenizer_class", "GemmaTokenizer"},
        {"unk_token", "<unk>"}};
}

void g4_write(const std::filesystem::path& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out) throw std::runtime_error(path.string() + ": cannot write");
}

}  // namespace

int64_t write_gemma4_tokenizer(const std::filesystem::path& out_dir) {
    const g4json tokenizer = g4_tokenizer_json();
    g4_write(out_dir / "tokenizer.json", tokenizer.dump(2) + "\n");
    g4_write(out_dir / "tokenizer_config.json", g4_tokenizer_config(tokenizer).dump(2) + "\n");
    return static_cast<int64_t>(tokenizer["model"]["vocab"].size());
}

}  // namespace mkfixture
