// libFuzzer harness: the same bytes as tokenizer.json, config.json, modules.json, tiktoken.model
// and tokenization_kimi.py in turn, read by the writer's parsers and by verify's own (ref_config,
// ref_tokenizer with its vocabulary, ref_tiktoken).
#include <cstddef>
#include <cstdint>

#include "arch/read_config.hpp"
#include "fuzz_dir.hpp"
#include "model/model_config.hpp"
#include "model/pooling.hpp"
#include "model/tokenizer_tiktoken.hpp"
#include "model/tokenizer_vocab.hpp"
#include "rebox/error.hpp"
#include "verify/sources/ref_config.hpp"
#include "verify/tokenizer/ref_tokenizer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const auto& dir = rebox::fuzz::scratch_dir();
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    rebox::fuzz::write_file(dir / "tokenizer.json", bytes);
    rebox::fuzz::write_file(dir / "config.json", bytes);
    rebox::fuzz::write_file(dir / "modules.json", bytes);
    rebox::fuzz::write_file(dir / "tiktoken.model", bytes);
    rebox::fuzz::write_file(dir / "tokenization_kimi.py", bytes);
    try {
        rebox::TokenizerOptions options;
        options.vocab_size = 4096;
        (void)rebox::read_tokenizer(dir, options);
    } catch (const rebox::Error&) {
    }
    try {
        (void)rebox::read_model_config(dir / "config.json");
    } catch (const rebox::Error&) {
    }
    try {
        (void)rebox::verify_ref::read_ref_config(dir / "config.json");
    } catch (const rebox::Error&) {
    }
    try {
        (void)rebox::verify_ref::read_ref_tokenizer(dir, 4096);
    } catch (const rebox::Error&) {
    }
    try {
        rebox::TokenizerOptions options;
        options.vocab_size = 4096;
        (void)rebox::read_tiktoken_tokenizer(dir, options);
    } catch (const rebox::Error&) {
    }
    try {
        (void)rebox::verify_ref::read_ref_tiktoken(dir, 4096);
    } catch (const rebox::Error&) {
    }
    try {
        (void)rebox::read_pooling(dir);
    } catch (const rebox::Error&) {
    }
    return 0;
}
