// libFuzzer harness: a fuzzed config.json, tokenizer_config.json and tokenizer.json (the input is
// the three files joined by NUL bytes; a missing or empty part keeps the checkpoint's own file)
// beside a fixed small checkpoint, through the whole plan stage and then verify against the
// checkpoint's fixed conversion. The checkpoint comes from $REBOX_FUZZ_CHECKPOINT_DIR
// (model.safetensors, modules.json, 1_Pooling/ and the three JSON files) and the GGUF from
// $REBOX_FUZZ_GGUF; fuzz/run.sh points them at the one-layer seed fixture and its conversion.
// Hostile counts must end in a rebox::Error quickly and small (-rss_limit_mb and -timeout catch the
// rest).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "fuzz_dir.hpp"
#include "plan/plan.hpp"
#include "rebox/error.hpp"
#include "rebox/rebox.hpp"
#include "source/read_source.hpp"

namespace {

namespace fs = std::filesystem;

constexpr const char* kParts[] = {"config.json", "tokenizer_config.json", "tokenizer.json"};

const fs::path& checkpoint() {
    static const fs::path dir = [] {
        const char* env = std::getenv("REBOX_FUZZ_CHECKPOINT_DIR");
        if (env == nullptr) {
            std::fprintf(stderr,
                         "fuzz_config_plan: set REBOX_FUZZ_CHECKPOINT_DIR (fuzz/run.sh does)\n");
            std::abort();
        }
        return fs::path(env);
    }();
    return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const auto& dir = rebox::fuzz::scratch_dir();
    static bool once = [&] {
        // The tensors and the pooling files stay the checkpoint's own.
        fs::create_symlink(checkpoint() / "model.safetensors", dir / "model.safetensors");
        if (fs::exists(checkpoint() / "modules.json"))
            fs::copy_file(checkpoint() / "modules.json", dir / "modules.json");
        if (fs::exists(checkpoint() / "1_Pooling"))
            fs::copy(checkpoint() / "1_Pooling", dir / "1_Pooling", fs::copy_options::recursive);
        return true;
    }();
    (void)once;
    std::string_view rest(reinterpret_cast<const char*>(data), size);
    for (const char* part : kParts) {
        const size_t end = rest.find('\0');
        const std::string_view bytes = rest.substr(0, end);
        rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
        if (bytes.empty())
            fs::copy_file(checkpoint() / part, dir / part, fs::copy_options::overwrite_existing);
        else
            rebox::fuzz::write_file(dir / part, bytes);
    }
    try {
        const rebox::SourceModel source = rebox::read_source_model(dir);
        (void)rebox::make_plan(source, rebox::PlanOptions{});
    } catch (const rebox::Error&) {
    }
    if (const char* gguf = std::getenv("REBOX_FUZZ_GGUF")) {
        try {
            rebox::VerifyOptions options;
            options.threads = 1;
            (void)rebox::verify_gguf(dir, gguf, options);
        } catch (const rebox::Error&) {
        }
    }
    return 0;
}
