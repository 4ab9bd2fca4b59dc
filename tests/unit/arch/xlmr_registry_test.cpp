// xlm-roberta in the registry: GGUF arch bert, the "roberta." head prefix, the RoBERTa
// classification head as cls / cls.output, the pooler and masked-LM head left out, and the
// position table as a row slice past pad_token_id + 1 (config.json parsing sets the offset; the
// expected ne and context_length are the shortened table's).
#include <gtest/gtest.h>

#include "arch/architecture.hpp"
#include "arch/gguf_metadata.hpp"
#include "arch/read_config.hpp"
#include "model/model_config.hpp"
#include "rebox/error.hpp"

namespace rebox::arch {
namespace {

ModelConfig xlmr_config(const std::string& extra = "") {
    return parse_model_config(nlohmann::json::parse(
        R"({"model_type": "xlm-roberta", "hidden_size": 64, "num_hidden_layers": 2,
            "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 250002,
            "max_position_embeddings": 514, "type_vocab_size": 1)" +
        extra + "}"));
}

TEST(XlmRobertaRegistry, NamesAndHead) {
    const Architecture& a = *find_architecture("xlm-roberta");
    EXPECT_EQ(a.gguf_arch, "bert");
    EXPECT_TRUE(a.encoder);
    EXPECT_NE(a.finish_config, nullptr);  // the position offset from pad_token_id
    EXPECT_EQ(find_architecture("bert")->model_types.front(), "bert");  // "bert" stays bert's
    const std::pair<const char*, const char*> names[] = {
        {"embeddings.word_embeddings.weight", "token_embd.weight"},
        {"roberta.embeddings.position_embeddings.weight", "position_embd.weight"},
        {"embeddings.token_type_embeddings.weight", "token_types.weight"},
        {"roberta.encoder.layer.1.attention.self.key.bias", "blk.1.attn_k.bias"},
        {"encoder.layer.0.output.LayerNorm.weight", "blk.0.layer_output_norm.weight"},
        {"classifier.dense.weight", "cls.weight"},
        {"classifier.out_proj.bias", "cls.output.bias"},
    };
    for (const auto& [hf, gguf] : names) {
        const auto ref = resolve_hf(a, hf);
        ASSERT_TRUE(ref.has_value()) << hf;
        EXPECT_EQ(ref->gguf_name, gguf) << hf;
    }
    EXPECT_EQ(resolve_hf(a, "classifier.dense.weight")->spec->role, SourceRole::reranker_pooler);
    EXPECT_EQ(resolve_hf(a, "classifier.out_proj.weight")->spec->role, SourceRole::classifier);
    EXPECT_EQ(resolve_gguf(a, "position_embd.weight")->spec->rows,
              RowTransform::skip_position_offset);
    EXPECT_TRUE(is_left_out(a, "pooler.dense.weight"));
    EXPECT_TRUE(is_converter_buffer(a, "roberta.embeddings.position_ids"));
    EXPECT_TRUE(is_left_out(a, "lm_head.dense.weight"));
}

// transformers' default pad_token_id 1: offset 2, 514 source rows -> 512 in the GGUF.
TEST(XlmRobertaRegistry, PositionOffsetFromPad) {
    const Architecture& a = *find_architecture("xlm-roberta");
    const ModelConfig c = xlmr_config();
    EXPECT_EQ(c.position_offset, 2u);
    EXPECT_EQ(c.max_position_embeddings, 514u);
    EXPECT_EQ(*expected_ne(a, c, "position_embd.weight"), (std::vector<int64_t>{64, 512}));
    EXPECT_EQ(xlmr_config(R"(, "pad_token_id": 0)").position_offset, 1u);
    ModelMetadataInput input;
    input.config = &c;
    bool found = false;
    for (const GgufKV& kv : build_model_metadata(input))
        if (kv.key == "bert.context_length") {
            EXPECT_EQ(kv.value.as_u32(), 512u);
            found = true;
        }
    EXPECT_TRUE(found);
    // A bert config keeps its whole table.
    const ModelConfig bert = parse_model_config(nlohmann::json::parse(
        R"({"model_type": "bert", "hidden_size": 64, "num_hidden_layers": 2,
            "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 250002,
            "max_position_embeddings": 512, "pad_token_id": 1})"));
    EXPECT_EQ(bert.position_offset, 0u);
    // No position left after the offset: an input error naming the field.
    try {
        xlmr_config(R"(, "pad_token_id": 600)");
        FAIL() << "accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("max_position_embeddings"), std::string::npos);
    }
}

}  // namespace
}  // namespace rebox::arch
