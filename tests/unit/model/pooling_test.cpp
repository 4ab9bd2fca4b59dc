// Sentence-transformers pooling -> llama.cpp pooling type, per the converter's rule (docs/gguf.md
// §4.3).
#include "model/pooling.hpp"

#include <gtest/gtest.h>

#include "rebox/error.hpp"
#include "test_files.hpp"

namespace rebox {
namespace {

constexpr const char* kModules = R"([
  {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
  {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
  {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}])";

std::optional<PoolingType> pooling_of(const std::string& pooling_config) {
    test::ScratchDir dir;
    dir.write("modules.json", kModules);
    dir.write("1_Pooling/config.json", pooling_config);
    return read_pooling(dir.path());
}

TEST(ModelPooling, LastTokenFromQwen3EmbeddingConfig) {
    // Qwen3-Embedding's 1_Pooling/config.json.
    EXPECT_EQ(pooling_of(R"({"word_embedding_dimension": 1024, "pooling_mode_cls_token": false,
        "pooling_mode_mean_tokens": false, "pooling_mode_max_tokens": false,
        "pooling_mode_mean_sqrt_len_tokens": false, "pooling_mode_weightedmean_tokens": false,
        "pooling_mode_lasttoken": true, "include_prompt": true})"),
              PoolingType::LAST);
}

TEST(ModelPooling, MeanClsAndModeString) {
    EXPECT_EQ(pooling_of(R"({"pooling_mode_mean_tokens": true, "pooling_mode_lasttoken": true})"),
              PoolingType::MEAN);
    EXPECT_EQ(pooling_of(R"({"pooling_mode_cls_token": true})"), PoolingType::CLS);
    EXPECT_EQ(pooling_of(R"({"pooling_mode": "lasttoken"})"), PoolingType::LAST);
    EXPECT_EQ(pooling_of(R"({"pooling_mode": "mean"})"), PoolingType::MEAN);
}

TEST(ModelPooling, NoModulesOrNoPoolingModuleMeansNone) {
    test::ScratchDir dir;
    EXPECT_FALSE(read_pooling(dir.path()).has_value());
    dir.write("modules.json",
              R"([{"idx": 0, "path": "", "type": "sentence_transformers.models.Transformer"}])");
    EXPECT_FALSE(read_pooling(dir.path()).has_value());
}

TEST(ModelPooling, UnsupportedModeAndMalformedFilesAreInputErrors) {
    for (const char* config : {R"({"pooling_mode_max_tokens": true})", R"({"pooling_mode": "max"})",
                               R"({"pooling_mode_lasttoken": "true"})", "{not json"}) {
        try {
            pooling_of(config);
            ADD_FAILURE() << config;
        } catch (const Error& e) {
            EXPECT_EQ(e.exit_class(), ExitClass::input) << config;
            EXPECT_NE(std::string(e.what()).find("1_Pooling/config.json"), std::string::npos)
                << e.what();
        }
    }
    test::ScratchDir dir;
    dir.write("modules.json", R"([{"path": "../../etc", "type": "Pooling"}])");
    EXPECT_THROW(read_pooling(dir.path()), Error);
    dir.write("modules.json", R"({"path": "1_Pooling"})");
    EXPECT_THROW(read_pooling(dir.path()), Error);
}

}  // namespace
}  // namespace rebox
