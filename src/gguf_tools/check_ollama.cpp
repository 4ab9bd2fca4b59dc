// rebox check --for ollama: Ollama's own GGUF reader (fs/ggml) on top of llama.cpp's rules. It
// reads keys with exact Go type assertions and silently takes a default on a mismatch, defaults
// tokenizer.ggml.add_bos_token to true when absent, sizes tensors from its own type table (ids 4,
// 5, 31-33, 36-38 and >= 42 fail as "size overflow"), imports split sets only since v0.30.0, and
// a FROM pointing at the directory also picks up every *.json beside the file (docs/check.md).
#include <filesystem>

#include "gguf_tools/check_context.hpp"
#include "gguf_tools/kv_text.hpp"
#include "rebox/ggml_type.hpp"

namespace rebox::check_detail {
namespace {

bool ollama_sizes_type(uint32_t id) {
    if (id == 4 || id == 5 || (id >= 31 && id <= 33) || (id >= 36 && id <= 38)) return false;
    return id < 42;
}

}  // namespace

void check_ollama(CheckContext& ctx, const std::filesystem::path& first) {
    if (ctx.find("tokenizer.ggml.add_bos_token") == nullptr)
        ctx.finding("tokenizer.ggml.add_bos_token",
                    "is missing; Ollama's reader then adds a BOS token (default true) where "
                    "llama.cpp's tokenizer may not (write it as a BOOL)");
    if (const GgufValue* scores = ctx.find("tokenizer.ggml.scores");
        scores != nullptr && gguf_type_spec_name(*scores) != "ARRAY[FLOAT32]")
        ctx.finding("tokenizer.ggml.scores", "has type " + gguf_type_spec_name(*scores) +
                                                 "; Ollama reads only ARRAY[FLOAT32] and "
                                                 "silently gets none (write FLOAT32 scores)");
    for (const CheckContext::Tensor& tensor : ctx.tensors) {
        const uint32_t id = ggml_type_id(tensor.info->type);
        if (!ollama_sizes_type(id))
            ctx.finding(tensor.info->name,
                        "has type " + ggml_type_name(tensor.info->type) + " (id " +
                            std::to_string(id) +
                            "), which Ollama's reader cannot size (\"size overflow\"); "
                            "re-quantize to a standard type",
                        tensor.shard);
    }
    if (ctx.shards.size() > 1)
        ctx.warning("split.count", "is " + std::to_string(ctx.shards.size()) +
                                       "; Ollama imports split sets only since v0.30.0 (and the "
                                       "Hugging Face registry refuses them): merge with "
                                       "rebox merge for older versions");
    std::error_code ec;
    const std::filesystem::path dir =
        first.has_parent_path() ? first.parent_path() : std::filesystem::path(".");
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
        if (entry.path().extension() != ".json") continue;
        ctx.warning(entry.path().filename().string(),
                    "lies beside the GGUF; `FROM " + dir.string() +
                        "` would send it too and Ollama fails (\"supplied file was not in GGUF "
                        "format\"): write FROM ./" +
                        first.filename().string() + " in the Modelfile");
        break;
    }
}

}  // namespace rebox::check_detail
