// llama-quantize's options --override-kv, --prune-layers, --include-weights / --exclude-weights
// and --keep-split as rebox reads and applies them. Expected values are worked out by hand from
// llama.cpp v0.4.0 (common/common.cpp string_parse_kv_override, src/llama-quant.cpp remap_layer,
// the KV calls of llama_model_quantize_impl and its keep_split sorting and split keys,
// tools/quantize/quantize.cpp prepare_imatrix and its ".gguf" cut, src/llama.cpp
// llama_split_path), not from rebox's code; the refusals must be one Error of the input class
// naming the option.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "quantize_file/keep_split.hpp"
#include "quantize_file/kv_override.hpp"
#include "quantize_file/layer_prune.hpp"
#include "quantize_file/quantize_choices.hpp"
#include "rebox/error.hpp"

namespace rebox {
namespace {

void expect_option_refused(const std::function<void()>& call, const std::string& needle) {
    try {
        call();
        ADD_FAILURE() << "accepted (expected a refusal mentioning '" << needle << "')";
    } catch (const Error& e) {
        EXPECT_EQ(e.exit_class(), ExitClass::input) << e.what();
        EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
        EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
}

TEST(OverrideKv, TypesAsLlamaQuantizeWritesThem) {
    // int -> UINT32, float -> F32 (atof then a float cast), bool, str.
    EXPECT_EQ(parse_kv_override("llama.context_length=int:4096"),
              (GgufKV{"llama.context_length", GgufValue::u32(4096)}));
    EXPECT_EQ(parse_kv_override("a.b=int:4294967295"), (GgufKV{"a.b", GgufValue::u32(UINT32_MAX)}));
    EXPECT_EQ(parse_kv_override("llama.rope.freq_base=float:0.1"),
              (GgufKV{"llama.rope.freq_base", GgufValue::f32(0.1f)}));
    EXPECT_EQ(parse_kv_override("x=float:-2.5e3"), (GgufKV{"x", GgufValue::f32(-2500.0f)}));
    EXPECT_EQ(parse_kv_override("tokenizer.ggml.add_bos_token=bool:false"),
              (GgufKV{"tokenizer.ggml.add_bos_token", GgufValue::boolean(false)}));
    EXPECT_EQ(parse_kv_override("general.name=str:my model=v2"),
              (GgufKV{"general.name", GgufValue::str("my model=v2")}));
    EXPECT_EQ(parse_kv_override("general.name=str:"), (GgufKV{"general.name", GgufValue::str("")}));
    EXPECT_EQ(parse_kv_override(std::string(127, 'k') + "=str:" + std::string(127, 'v')),
              (GgufKV{std::string(127, 'k'), GgufValue::str(std::string(127, 'v'))}));
}

TEST(OverrideKv, RefusesWhatLlamaQuantizeRefusesOrMisreads) {
    // llama-quantize refuses these too.
    expect_option_refused([] { parse_kv_override("general.name"); }, "no '='");
    expect_option_refused([] { parse_kv_override(std::string(128, 'k') + "=int:1"); },
                          "1 to 127 bytes");
    expect_option_refused([] { parse_kv_override("a=u32:1"); }, "int, float, bool or str");
    expect_option_refused([] { parse_kv_override("a=bool:yes"); }, "true or false");
    expect_option_refused([] { parse_kv_override("a=str:" + std::string(128, 'v')); },
                          "at most 127 bytes");
    // llama-quantize writes 0 (atol/atof), |v| or a truncated value for these: rebox refuses.
    expect_option_refused([] { parse_kv_override("a=int:abc"); }, "non-negative decimal");
    expect_option_refused([] { parse_kv_override("a=int:-3"); }, "non-negative decimal");
    expect_option_refused([] { parse_kv_override("a=int:12x"); }, "non-negative decimal");
    expect_option_refused([] { parse_kv_override("a=int:4294967296"); }, "below 2^32");
    expect_option_refused([] { parse_kv_override("a=float:1.5x"); }, "finite number");
    expect_option_refused([] { parse_kv_override("a=float:1e39"); }, "finite number");
    expect_option_refused([] { parse_kv_override("a=float:nan"); }, "finite number");
    expect_option_refused([] { parse_kv_override("=int:1"); }, "1 to 127 bytes");
    expect_option_refused([] { parse_kv_override("general.alignment=int:64"); }, "pads to 32");
}

TEST(PruneLayers, ParsesSortsAndRefuses) {
    EXPECT_EQ(parse_prune_layers("5,1,3,1", 8), (std::vector<int>{1, 3, 5}));
    EXPECT_EQ(parse_prune_layers("0", 2), (std::vector<int>{0}));
    expect_option_refused([] { parse_prune_layers("", 8); }, "'' is not a layer number");
    expect_option_refused([] { parse_prune_layers("1,,2", 8); }, "'' is not a layer number");
    expect_option_refused([] { parse_prune_layers("1,-2", 8); }, "'-2' is not a layer number");
    expect_option_refused([] { parse_prune_layers("3x", 8); }, "'3x' is not a layer number");
    expect_option_refused([] { parse_prune_layers("8", 8); }, "layer 8 does not exist");
    expect_option_refused([] { parse_prune_layers("0,1,1", 2); }, "every layer");
}

TEST(PruneLayers, RenumbersAsRemapLayer) {
    // Layers 0..5 with 1 and 3 pruned: 0 stays, 2 -> 1, 4 -> 2, 5 -> 3; block_count 4.
    LayerPruner pruner({1, 3});
    EXPECT_EQ(pruner.rename("token_embd.weight"), "token_embd.weight");
    EXPECT_EQ(pruner.rename("blk.0.attn_q.weight"), "blk.0.attn_q.weight");
    EXPECT_EQ(pruner.rename("blk.1.attn_q.weight"), std::nullopt);
    EXPECT_EQ(pruner.rename("blk.2.attn_q.weight"), "blk.1.attn_q.weight");
    EXPECT_EQ(pruner.rename("blk.2.ffn_up.weight"), "blk.1.ffn_up.weight");
    EXPECT_EQ(pruner.rename("blk.3.attn_q.weight"), std::nullopt);
    EXPECT_EQ(pruner.rename("blk.4.attn_q.weight"), "blk.2.attn_q.weight");
    EXPECT_EQ(pruner.rename("blk.5.ffn_down_exps.weight"), "blk.3.ffn_down_exps.weight");
    EXPECT_EQ(pruner.block_count(), 4);
    // Pruning layer 0 only: every later layer moves down by one.
    LayerPruner first({0});
    EXPECT_EQ(first.rename("blk.0.attn_q.weight"), std::nullopt);
    EXPECT_EQ(first.rename("blk.1.attn_q.weight"), "blk.0.attn_q.weight");
    EXPECT_EQ(first.rename("blk.10.attn_q.weight"), "blk.1.attn_q.weight");
    EXPECT_EQ(first.block_count(), 2);
}

// A 4-layer llama as llama-quantize's recipe sees it.
std::vector<GgufKV> tiny_llama_kvs() {
    return {{"general.architecture", GgufValue::str("llama")},
            {"general.name", GgufValue::str("tiny")},
            {"llama.block_count", GgufValue::u32(4)},
            {"llama.attention.head_count", GgufValue::u32(4)},
            {"llama.attention.head_count_kv", GgufValue::u32(4)},
            {"llama.context_length", GgufValue::u32(256)},
            {"general.file_type", GgufValue::u32(1)}};
}

std::vector<QuantizeInputTensor> tiny_llama_tensors() {
    std::vector<QuantizeInputTensor> list{{"token_embd.weight", {256, 64}, GgmlType::F16, 0, 0, {}},
                                          {"output.weight", {256, 64}, GgmlType::F16, 0, 0, {}}};
    for (int l = 0; l < 4; ++l)
        for (const char* role : {"attn_norm", "attn_v", "ffn_down"})
            list.push_back({"blk." + std::to_string(l) + "." + role + ".weight",
                            std::string(role) == "attn_norm" ? std::vector<int64_t>{256}
                                                             : std::vector<int64_t>{256, 256},
                            std::string(role) == "attn_norm" ? GgmlType::F32 : GgmlType::F16,
                            0,
                            0,
                            {}});
    return list;
}

std::vector<std::string> key_order(const QuantizeChoices& choices) {
    std::vector<std::string> keys;
    for (const GgufKV& kv : choices.layout.shards.at(0).kvs()) keys.push_back(kv.key);
    return keys;
}

TEST(QuantizeOptionsOutput, OverridesAfterFileTypeAndPrunedBlockCountLast) {
    QuantizeOptions options;
    options.type = "Q8_0";
    options.override_kvs = {"general.name=str:renamed", "custom.flag=bool:true"};
    options.prune_layers = "2";
    const QuantizeChoices choices =
        choose_quantized_output(tiny_llama_kvs(), tiny_llama_tensors(), 32, options, "tiny.gguf");
    // gguf_set_val removes and appends: qv, file_type, the overrides in order, then block_count.
    EXPECT_EQ(key_order(choices),
              (std::vector<std::string>{"general.architecture", "llama.attention.head_count",
                                        "llama.attention.head_count_kv", "llama.context_length",
                                        "general.quantization_version", "general.file_type",
                                        "general.name", "custom.flag", "llama.block_count"}));
    const auto& kvs = choices.layout.shards.at(0).kvs();
    EXPECT_EQ(kvs[6].value, GgufValue::str("renamed"));
    EXPECT_EQ(kvs[8].value, GgufValue::u32(3));
    std::vector<std::string> names;
    for (const QuantizeTensorChoice& t : choices.tensors) names.push_back(t.name);
    EXPECT_EQ(names, (std::vector<std::string>{
                         "output.weight", "token_embd.weight", "blk.0.attn_norm.weight",
                         "blk.0.attn_v.weight", "blk.0.ffn_down.weight", "blk.1.attn_norm.weight",
                         "blk.1.attn_v.weight", "blk.1.ffn_down.weight", "blk.2.attn_norm.weight",
                         "blk.2.attn_v.weight", "blk.2.ffn_down.weight"}));
    // The renamed blk.2 holds input layer 3's tensors.
    EXPECT_EQ(tiny_llama_tensors()[choices.tensors.back().input_index].name,
              "blk.3.ffn_down.weight");
}

TEST(QuantizeOptionsOutput, RefusesOverridesOfWhatTheRecipeReads) {
    QuantizeOptions options;
    options.type = "Q4_K_M";
    for (const char* text : {"llama.block_count=int:2", "llama.attention.head_count_kv=int:1",
                             "general.architecture=str:qwen3", "llama.expert_count=int:8",
                             "llama.block_count=str:4"}) {
        options.override_kvs = {text};
        expect_option_refused(
            [&] {
                choose_quantized_output(tiny_llama_kvs(), tiny_llama_tensors(), 32, options,
                                        "tiny.gguf");
            },
            "type choice reads");
    }
    // The same value as the input's is no change.
    options.override_kvs = {"llama.block_count=int:4"};
    EXPECT_NO_THROW(
        choose_quantized_output(tiny_llama_kvs(), tiny_llama_tensors(), 32, options, "tiny.gguf"));
}

// A legacy imatrix.dat (int32 count; per entry: name length, name, ncall, value count, values).
std::filesystem::path write_legacy_imatrix(const std::vector<std::string>& names, float bad) {
    const auto path = std::filesystem::temp_directory_path() /
                      ("rebox_quantize_options_" + std::to_string(::getpid()) + ".dat");
    std::ofstream out(path, std::ios::binary);
    auto put = [&](const void* p, size_t n) { out.write(static_cast<const char*>(p), n); };
    const int32_t count = static_cast<int32_t>(names.size());
    put(&count, 4);
    for (const std::string& name : names) {
        const int32_t len = static_cast<int32_t>(name.size()), ncall = 1, nval = 256;
        put(&len, 4);
        put(name.data(), name.size());
        put(&ncall, 4);
        put(&nval, 4);
        std::vector<float> values(256, name.find("ffn_down") != std::string::npos ? bad : 1.0f);
        put(values.data(), values.size() * 4);
    }
    return path;
}

TEST(QuantizeOptionsOutput, IncludeAndExcludeWeightsFilterEntriesBySubstring) {
    const std::vector<std::string> names{"blk.0.attn_v.weight", "blk.1.attn_v.weight",
                                         "blk.0.ffn_down.weight", "blk.99.attn_v.weight"};
    const auto path = write_legacy_imatrix(names, std::numeric_limits<float>::infinity());
    QuantizeOptions options;
    options.type = "Q4_K_M";
    options.imatrix = path.string();
    // The ffn_down entry holds Inf: refused unless it is filtered out (llama-quantize checks only
    // the entries it keeps).
    expect_option_refused(
        [&] { choose_quantized_output(tiny_llama_kvs(), tiny_llama_tensors(), 32, options, "t"); },
        "not finite");
    options.exclude_weights = {"ffn_down"};
    QuantizeChoices choices =
        choose_quantized_output(tiny_llama_kvs(), tiny_llama_tensors(), 32, options, "t");
    EXPECT_EQ(choices.imatrix.entries.size(), 3u);
    EXPECT_EQ(choices.layout.shards.at(0).kvs().back().value, GgufValue::u32(3));  // entries_count
    options.exclude_weights.clear();
    options.include_weights = {"blk.1.", "blk.99"};
    choices = choose_quantized_output(tiny_llama_kvs(), tiny_llama_tensors(), 32, options, "t");
    ASSERT_EQ(choices.imatrix.entries.size(), 2u);
    EXPECT_TRUE(choices.imatrix.entries.contains("blk.1.attn_v.weight"));
    EXPECT_TRUE(choices.imatrix.entries.contains("blk.99.attn_v.weight"));
    // Nothing left: quantized as without an imatrix, and no quantize.imatrix.* keys.
    options.include_weights = {"token_embd"};
    choices = choose_quantized_output(tiny_llama_kvs(), tiny_llama_tensors(), 32, options, "t");
    EXPECT_TRUE(choices.imatrix.entries.empty());
    EXPECT_EQ(choices.layout.shards.at(0).kvs().back().key, "general.file_type");
    // Both at once (llama-quantize prints its usage and exits 1), or without an imatrix.
    options.exclude_weights = {"ffn_down"};
    expect_option_refused(
        [&] { choose_quantized_output(tiny_llama_kvs(), tiny_llama_tensors(), 32, options, "t"); },
        "cannot be used together");
    options.include_weights.clear();
    options.imatrix.reset();
    expect_option_refused(
        [&] { choose_quantized_output(tiny_llama_kvs(), tiny_llama_tensors(), 32, options, "t"); },
        "there is no --imatrix");
    std::filesystem::remove(path);
}

TEST(KeepSplit, NamesAsLlamaSplitPath) {
    const auto three = keep_split_paths("dir.v2/model-q4.gguf", 3);
    ASSERT_EQ(three.size(), 3u);
    EXPECT_EQ(three[0].string(), "dir.v2/model-q4-00001-of-00003.gguf");
    EXPECT_EQ(three[2].string(), "dir.v2/model-q4-00003-of-00003.gguf");
    // A single-file input still gets the shard name; an OUT without .gguf keeps its name.
    EXPECT_EQ(keep_split_paths("out.bin", 1)[0].string(), "out.bin-00001-of-00001.gguf");
    expect_option_refused([] { keep_split_paths("a.gguf.out", 2); }, "does not end in it");
}

TEST(KeepSplit, RefusesSplitLimits) {
    QuantizeOptions options;
    options.keep_split = true;
    check_keep_split_options(options);  // alone: accepted
    options.split.max_bytes = 1000;
    expect_option_refused([&] { check_keep_split_options(options); }, "--split-max-size");
}

TEST(KeepSplit, InputOrderAndOneOutputPerInputShard) {
    // Inputs as a split set holds them; llama's order (order) is by name, the input's by
    // (shard, offset).
    const std::vector<QuantizeInputTensor> inputs = {
        {"blk.0.b.weight", {32, 2}, GgmlType::F32, 1, 128, {}},
        {"blk.0.a.weight", {32, 2}, GgmlType::F32, 1, 0, {}},
        {"token_embd.weight", {32, 4}, GgmlType::F32, 0, 0, {}},
    };
    std::vector<size_t> order = {0, 1, 2};  // shard 1 at offset 128, shard 1 at 0, shard 0
    std::vector<RecipeTensor> renamed = {{"blk.0.b.weight", {32, 2}, GgmlType::F32},
                                         {"blk.0.a.weight", {32, 2}, GgmlType::F32},
                                         {"token_embd.weight", {32, 4}, GgmlType::F32}};
    sort_by_input_place(order, renamed, inputs);
    EXPECT_EQ(order, (std::vector<size_t>{2, 1, 0}));
    ASSERT_EQ(renamed.size(), 3u);
    EXPECT_EQ(renamed[0].name, "token_embd.weight");
    EXPECT_EQ(renamed[1].name, "blk.0.a.weight");
    EXPECT_EQ(renamed[2].name, "blk.0.b.weight");

    const std::vector<GgufKV> kvs = {{"general.architecture", GgufValue::str("llama")},
                                     {"general.file_type", GgufValue::u32(7)}};
    std::vector<GgufTensorInfo> infos;
    for (const RecipeTensor& t : renamed) infos.push_back({t.name, t.ne, GgmlType::Q8_0, 0, 0});
    const ShardedLayout layout = keep_split_layout(kvs, infos, order, inputs, 32, "in.gguf");
    ASSERT_EQ(layout.shards.size(), 2u);
    const std::vector<GgufKV> first = {{"general.architecture", GgufValue::str("llama")},
                                       {"general.file_type", GgufValue::u32(7)},
                                       {"split.no", GgufValue::u16(0)},
                                       {"split.count", GgufValue::u16(2)},
                                       {"split.tensors.count", GgufValue::i32(3)}};
    EXPECT_EQ(layout.shards[0].kvs(), first);
    const std::vector<GgufKV> second = {{"split.no", GgufValue::u16(1)},
                                        {"split.count", GgufValue::u16(2)},
                                        {"split.tensors.count", GgufValue::i32(3)}};
    EXPECT_EQ(layout.shards[1].kvs(), second);
    ASSERT_EQ(layout.shards[1].tensors().size(), 2u);
    EXPECT_EQ(layout.shards[1].tensors()[0].name, "blk.0.a.weight");
    ASSERT_EQ(layout.places.size(), 3u);
    EXPECT_EQ(layout.places[2].shard, 1u);
    EXPECT_EQ(layout.places[2].index, 1u);

    // One input shard: one output without split keys.
    const std::vector<size_t> only_first = {2};
    const ShardedLayout single =
        keep_split_layout(kvs, {infos[0]}, only_first, inputs, 32, "in.gguf");
    ASSERT_EQ(single.shards.size(), 1u);
    EXPECT_EQ(single.shards[0].kvs(), kvs);

    // Shard 0 left without tensors (all pruned): refused, as llama-quantize would crash.
    const std::vector<size_t> only_second = {1, 0};
    expect_option_refused(
        [&] {
            keep_split_layout(kvs, {infos[1], infos[2]}, only_second, inputs, 32, "in.gguf");
        },
        "without tensors");
}

}  // namespace
}  // namespace rebox
