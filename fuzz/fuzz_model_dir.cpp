// libFuzzer harness: a fuzzed model.safetensors (mcq metadata, triples), parsed in memory, beside a
// fixed config and tokenizer in a directory, through read_mcq_files and the whole plan stage. The
// side files come from $REBOX_FUZZ_MODEL_DIR (fuzz/run.sh points it at the seed fixture, so seeds
// pass every check and mutations start deep in the plan) or, without it, from the tiny qwen3 files
// below.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>

#include "format/safetensors.hpp"
#include "fuzz_dir.hpp"
#include "plan/plan.hpp"
#include "rebox/error.hpp"
#include "source/mcq_reader.hpp"

namespace {

constexpr const char* kConfig =
    R"({"model_type":"qwen3","architectures":["Qwen3ForCausalLM"],"hidden_size":64,
"num_hidden_layers":1,"num_attention_heads":4,"num_key_value_heads":2,"head_dim":16,"intermediate_size":128,
"max_position_embeddings":512,"vocab_size":260,"rope_theta":1000000.0,"rms_norm_eps":1e-6,"tie_word_embeddings":true})";

constexpr const char* kTokenizer =
    R"({"model":{"type":"BPE","vocab":{"a":0,"b":1,"ab":2},"merges":["a b"]},
"added_tokens":[{"id":3,"content":"<|endoftext|>","special":true}],
"pre_tokenizer":{"type":"Split","pattern":{"Regex":"\\s+"},"behavior":"Isolated","invert":false}})";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const auto& dir = rebox::fuzz::scratch_dir();
    static bool once = [&] {
        namespace fs = std::filesystem;
        if (const char* model = std::getenv("REBOX_FUZZ_MODEL_DIR")) {
            for (const char* side : {"config.json", "tokenizer.json", "tokenizer_config.json"})
                if (fs::exists(fs::path(model) / side))
                    fs::copy_file(fs::path(model) / side, dir / side,
                                  fs::copy_options::overwrite_existing);
        } else {
            rebox::fuzz::write_file(dir / "config.json", kConfig);
            rebox::fuzz::write_file(dir / "tokenizer.json", kTokenizer);
        }
        return true;
    }();
    (void)once;
    try {
        const auto file = rebox::SafetensorsFile::parse({data, size}, "model.safetensors");
        const rebox::SourceModel source = rebox::read_mcq_files(dir, {file});
        rebox::PlanOptions options;
        options.tokenizer_pre = "qwen2";  // the embedded tokenizer's regex is not a known one
        const rebox::Plan plan = rebox::make_plan(source, options);
        (void)plan;
    } catch (const rebox::Error&) {
    }
    return 0;
}
