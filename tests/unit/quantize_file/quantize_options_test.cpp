// llama-quantize's options --override-kv and --prune-layers as rebox reads
// them. Expected values are worked out by hand from llama.cpp v0.4.0
// (common/common.cpp string_parse_kv_override, src/llama-quant.cpp
// remap_layer), not from rebox's code; the refusals must be one Error of the
// input class naming the option.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "quantize_file/kv_override.hpp"
#include "quantize_file/layer_prune.hpp"
#include "rebox/error.hpp"

namespace rebox {
namespace {

void expect_option_refused(const std::function<void()> &call,
                           const std::string &needle) {
  try {
    call();
    ADD_FAILURE() << "accepted (expected a refusal mentioning '" << needle
                  << "')";
  } catch (const Error &e) {
    EXPECT_EQ(e.exit_class(), ExitClass::input) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
        << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
  }
}

TEST(OverrideKv, TypesAsLlamaQuantizeWritesThem) {
  // int -> UINT32, float -> F32 (atof then a float cast), bool, str.
  EXPECT_EQ(parse_kv_override("llama.context_length=int:4096"),
            (GgufKV{"llama.context_length", GgufValue::u32(4096)}));
  EXPECT_EQ(parse_kv_override("a.b=int:4294967295"),
            (GgufKV{"a.b", GgufValue::u32(UINT32_MAX)}));
  EXPECT_EQ(parse_kv_override("llama.rope.freq_base=float:0.1"),
            (GgufKV{"llama.rope.freq_base", GgufValue::f32(0.1f)}));
  EXPECT_EQ(parse_kv_override("x=float:-2.5e3"),
            (GgufKV{"x", GgufValue::f32(-2500.0f)}));
  EXPECT_EQ(
      parse_kv_override("tokenizer.ggml.add_bos_token=bool:false"),
      (GgufKV{"tokenizer.ggml.add_bos_token", GgufValue::boolean(false)}));
  EXPECT_EQ(parse_kv_override("general.name=str:my model=v2"),
            (GgufKV{"general.name", GgufValue::str("my model=v2")}));
  EXPECT_EQ(parse_kv_override("general.name=str:"),
            (GgufKV{"general.name", GgufValue::str("")}));
  EXPECT_EQ(
      parse_kv_override(std::string(127, 'k') +
                        "=str:" + std::string(127, 'v')),
      (GgufKV{std::string(127, 'k'), GgufValue::str(std::string(127, 'v'))}));
}

TEST(OverrideKv, RefusesWhatLlamaQuantizeRefusesOrMisreads) {
  // llama-quantize refuses these too.
  expect_option_refused([] { parse_kv_override("general.name"); }, "no '='");
  expect_option_refused(
      [] { parse_kv_override(std::string(128, 'k') + "=int:1"); },
      "1 to 127 bytes");
  expect_option_refused([] { parse_kv_override("a=u32:1"); },
                        "int, float, bool or str");
  expect_option_refused([] { parse_kv_override("a=bool:yes"); },
                        "true or false");
  expect_option_refused(
      [] { parse_kv_override("a=str:" + std::string(128, 'v')); },
      "at most 127 bytes");
  // llama-quantize writes 0 (atol/atof), |v| or a truncated value for these:
  // rebox refuses.
  expect_option_refused([] { parse_kv_override("a=int:abc"); },
                        "non-negative decimal");
  expect_option_refused([] { parse_kv_override("a=int:-3"); },
                        "non-negative decimal");
  expect_option_refused([] { parse_kv_override("a=int:12x"); },
                        "non-negative decimal");
  expect_option_refused([] { parse_kv_override("a=int:4294967296"); },
                        "below 2^32");
  expect_option_refused([] { parse_kv_override("a=float:1.5x"); },
                        "finite number");
  expect_option_refused([] { parse_kv_override("a=float:1e39"); },
                        "finite number");
  expect_option_refused([] { parse_kv_override("a=float:nan"); },
                        "finite number");
  expect_option_refused([] { parse_kv_override("=int:1"); }, "1 to 127 bytes");
  expect_option_refused([] { parse_kv_override("general.alignment=int:64"); },
                        "pads to 32");
}

TEST(PruneLayers, ParsesSortsAndRefuses) {
  EXPECT_EQ(parse_prune_layers("5,1,3,1", 8), (std::vector<int>{1, 3, 5}));
  EXPECT_EQ(parse_prune_layers("0", 2), (std::vector<int>{0}));
  expect_option_refused([] { parse_prune_layers("", 8); },
                        "'' is not a layer number");
  expect_option_refused([] { parse_prune_layers("1,,2", 8); },
                        "'' is not a layer number");
  expect_option_refused([] { parse_prune_layers("1,-2", 8); },
                        "'-2' is not a layer number");
  expect_option_refused([] { parse_prune_layers("3x", 8); },
                        "'3x' is not a layer number");
  expect_option_refused([] { parse_prune_layers("8", 8); },
                        "layer 8 does not exist");
  expect_option_refused([] { parse_prune_layers("0,1,1", 2); }, "every layer");
}

TEST(PruneLayers, RenumbersAsRemapLayer) {
  // Layers 0..5 with 1 and 3 pruned: 0 stays, 2 -> 1, 4 -> 2, 5 -> 3;
  // block_count 4.
  LayerPruner pruner({1, 3});
  EXPECT_EQ(pruner.rename("token_embd.weight"), "token_embd.weight");
  EXPECT_EQ(pruner.rename("blk.0.attn_q.weight"), "blk.0.attn_q.weight");
  EXPECT_EQ(pruner.rename("blk.1.attn_q.weight"), std::nullopt);
  EXPECT_EQ(pruner.rename("blk.2.attn_q.weight"), "blk.1.attn_q.weight");
  EXPECT_EQ(pruner.rename("blk.2.ffn_up.weight"), "blk.1.ffn_up.weight");
  EXPECT_EQ(pruner.rename("blk.3.attn_q.weight"), std::nullopt);
  EXPECT_EQ(pruner.rename("blk.4.attn_q.weight"), "blk.2.attn_q.weight");
  EXPECT_EQ(pruner.rename("blk.5.ffn_down_exps.weight"),
            "blk.3.ffn_down_exps.weight");
  EXPECT_EQ(pruner.block_count(), 4);
  // Pruning layer 0 only: every later layer moves down by one.
  LayerPruner first({0});
  EXPECT_EQ(first.rename("blk.0.attn_q.weight"), std::nullopt);
  EXPECT_EQ(first.rename("blk.1.attn_q.weight"), "blk.0.attn_q.weight");
  EXPECT_EQ(first.rename("blk.10.attn_q.weight"), "blk.1.attn_q.weight");
  EXPECT_EQ(first.block_count(), 2);
}

} // namespace
} // namespace rebox
