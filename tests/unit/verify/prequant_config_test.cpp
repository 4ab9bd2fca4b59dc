// verify's own parse of quantization_config for GPTQ, AWQ and compressed-tensors (docs/formats.md
// §5.1-5.3): the fields it reads, the defaults and every refusal naming its field.
#include "verify/sources/prequant_config.hpp"

#include <gtest/gtest.h>

namespace rebox::verify_ref {
namespace {

using nlohmann::json;

PrequantConfig parse(const json& quantization) {
    return parse_prequant_config({{"model_type", "qwen3"}, {"quantization_config", quantization}});
}

TEST(VerifyPrequantConfig, GptqV1IsTheDefaultAndV2StoresZ) {
    PrequantConfig c = parse({{"quant_method", "gptq"}, {"bits", 3}, {"group_size", 128}});
    EXPECT_EQ(c.method, PrequantMethod::gptq);
    EXPECT_EQ(c.problem, "");
    EXPECT_EQ(c.bits, 3);
    EXPECT_EQ(c.group, 128);
    EXPECT_TRUE(c.gptq_stores_zero_minus_one);
    c = parse({{"quant_method", "gptq"},
               {"bits", 4},
               {"group_size", -1},
               {"checkpoint_format", "gptq_v2"}});
    EXPECT_FALSE(c.gptq_stores_zero_minus_one);
    EXPECT_EQ(c.group, 0);  // one group per row
    c = parse({{"quant_method", "gptq"}, {"bits", 4}, {"group_size", 32}, {"format", "gptq_v2"}});
    EXPECT_FALSE(c.gptq_stores_zero_minus_one);
}

TEST(VerifyPrequantConfig, AwqGemmIsTheDefaultAndGemvIsRead) {
    PrequantConfig c = parse({{"quant_method", "awq"}, {"bits", 4}, {"group_size", 128}});
    EXPECT_EQ(c.problem, "");
    EXPECT_FALSE(c.awq_gemv);
    c = parse({{"quant_method", "awq"}, {"bits", 4}, {"group_size", 64}, {"version", "GEMV"}});
    EXPECT_EQ(c.problem, "");
    EXPECT_TRUE(c.awq_gemv);
    c = parse({{"quant_method", "awq"}, {"bits", 4}, {"group_size", 64}, {"zero_point", false}});
    EXPECT_NE(c.problem.find("zero_point false"), std::string::npos);
}

TEST(VerifyPrequantConfig, RefusalsNameTheField) {
    EXPECT_EQ(parse({{"quant_method", "gptq"}, {"bits", 5}, {"group_size", 32}}).problem,
              "quantization_config.bits 5: GPTQ stores 2, 3, 4 or 8 bits");
    EXPECT_NE(parse({{"quant_method", "gptq"},
                     {"bits", 4},
                     {"group_size", 32},
                     {"checkpoint_format", "marlin"}})
                  .problem.find("checkpoint_format 'marlin'"),
              std::string::npos);
    EXPECT_NE(
        parse({{"quant_method", "awq"}, {"bits", 4}, {"group_size", 32}, {"version", "gemv_fast"}})
            .problem.find("version 'gemv_fast'"),
        std::string::npos);
    EXPECT_NE(
        parse({{"quant_method", "awq"}, {"bits", 8}, {"group_size", 32}}).problem.find("bits 8"),
        std::string::npos);
    EXPECT_NE(parse({{"quant_method", "gptq"}, {"bits", 4}, {"group_size", 0}})
                  .problem.find("group_size 0"),
              std::string::npos);
}

TEST(VerifyPrequantConfig, CompressedTensorsGroupsMustAgree) {
    const json weights = {{"num_bits", 4},
                          {"type", "int"},
                          {"symmetric", true},
                          {"strategy", "group"},
                          {"group_size", 128}};
    PrequantConfig c = parse({{"quant_method", "compressed-tensors"},
                              {"format", "pack-quantized"},
                              {"config_groups", {{"group_0", {{"weights", weights}}}}}});
    EXPECT_EQ(c.method, PrequantMethod::compressed_tensors);
    EXPECT_EQ(c.problem, "");
    EXPECT_EQ(c.ct_bits, 4);
    EXPECT_EQ(c.ct_group, 128);
    EXPECT_TRUE(c.ct_formats.count("pack-quantized"));
    json other = weights;
    other["num_bits"] = 8;
    c = parse({{"quant_method", "compressed-tensors"},
               {"config_groups",
                {{"group_0", {{"weights", weights}}}, {"group_1", {{"weights", other}}}}}});
    EXPECT_NE(c.problem.find("config_groups.group_1.weights: differs"), std::string::npos);
    other = weights;
    other["type"] = "float";
    c = parse({{"quant_method", "compressed-tensors"},
               {"config_groups", {{"group_0", {{"weights", other}}}}}});
    EXPECT_NE(c.problem.find("type \"int\""), std::string::npos);
    c = parse({{"quant_method", "compressed-tensors"},
               {"format", "marlin-24"},
               {"config_groups", {{"group_0", {{"weights", weights}}}}}});
    EXPECT_NE(c.problem.find("format 'marlin-24'"), std::string::npos);
}

TEST(VerifyPrequantConfig, OtherMethodsAreRefusedAndMlxBlocksAreNotPrequant) {
    const PrequantConfig hqq = parse({{"quant_method", "hqq"}, {"bits", 4}});
    EXPECT_EQ(hqq.method, PrequantMethod::unknown);
    EXPECT_NE(hqq.problem.find("quant_method 'hqq'"), std::string::npos);
    EXPECT_EQ(parse_prequant_config({{"quantization", {{"bits", 4}, {"group_size", 64}}}}).method,
              PrequantMethod::none);
    // Under text_config too.
    EXPECT_EQ(
        parse_prequant_config({{"text_config",
                                {{"quantization_config",
                                  {{"quant_method", "awq"}, {"bits", 4}, {"group_size", 64}}}}}})
            .field,
        "text_config.quantization_config");
}

}  // namespace
}  // namespace rebox::verify_ref
