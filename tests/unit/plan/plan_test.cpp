// make_plan on tiny qwen3 directories written by the test (hidden 64, 2 layers, heads 4 / kv 2,
// head_dim 16, ffn 128, vocab 128): the good model plans to 2 + 11*2 = 24 tensors with names,
// types, ne and byte sizes worked out by hand from docs/gguf.md §2.1/§3.2; each refusal is a
// Blocker whose reason the test names.
#include "plan/plan.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "rebox/error.hpp"
#include "rebox/ggml_type.hpp"
#include "rebox/rebox.hpp"
#include "source/mcq_reader.hpp"
#include "source/mcq_test_writer.hpp"
#include "test_files.hpp"

namespace rebox {
namespace {

using nlohmann::json;

constexpr const char* kQwen2Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

struct TinyQwen3 {
    test::McqFile file;
    json config = {{"model_type", "qwen3"},
                   {"architectures", {"Qwen3ForCausalLM"}},
                   {"hidden_size", 64},
                   {"num_hidden_layers", 2},
                   {"num_attention_heads", 4},
                   {"num_key_value_heads", 2},
                   {"head_dim", 16},
                   {"intermediate_size", 128},
                   {"max_position_embeddings", 512},
                   {"vocab_size", 128},
                   {"rope_theta", 1000000.0},
                   {"rms_norm_eps", 1e-6},
                   {"tie_word_embeddings", true}};
    json tokenizer = {
        {"model",
         {{"type", "BPE"}, {"vocab", {{"a", 0}, {"b", 1}, {"ab", 2}}}, {"merges", {"a b"}}}},
        {"added_tokens", {{{"id", 3}, {"content", "<|endoftext|>"}, {"special", true}}}},
        {"pre_tokenizer", {{"type", "Split"}, {"pattern", {{"Regex", kQwen2Regex}}}}}};
    bool write_tokenizer = true;

    TinyQwen3() {
        // Written out of output order on purpose: norm first, layer 1 before layer 0.
        file.plain("norm.weight", "F32", {64}, 4);
        for (int layer : {1, 0}) {
            const std::string p = "layers." + std::to_string(layer) + ".";
            const int bits = layer == 0 ? 4 : 3;
            const int group = layer == 0 ? 64 : 32;
            file.quant(p + "mlp.down_proj.weight", bits, group, 64, 128, 10 + layer);
            file.plain(p + "input_layernorm.weight", "F32", {64}, 4);
            file.quant(p + "self_attn.q_proj.weight", bits, group, 64, 64, 20 + layer);
            file.quant(p + "self_attn.k_proj.weight", bits, group, 32, 64, 30 + layer);
            file.quant(p + "self_attn.v_proj.weight", bits, group, 32, 64, 40 + layer);
            file.quant(p + "self_attn.o_proj.weight", bits, group, 64, 64, 50 + layer);
            file.plain(p + "self_attn.q_norm.weight", "F32", {16}, 4);
            file.plain(p + "self_attn.k_norm.weight", "BF16", {16}, 2);
            file.plain(p + "post_attention_layernorm.weight", "F32", {64}, 4);
            file.quant(p + "mlp.gate_proj.weight", bits, group, 128, 64, 60 + layer);
            file.quant(p + "mlp.up_proj.weight", bits, group, 128, 64, 70 + layer);
        }
        file.quant("embed_tokens.weight", 3, 64, 128, 64, 99);
    }

    void write(const std::filesystem::path& dir) const {
        file.write(dir / "model.safetensors");
        std::ofstream(dir / "config.json") << config.dump();
        if (write_tokenizer) std::ofstream(dir / "tokenizer.json") << tokenizer.dump();
    }
};

class PlanTest : public ::testing::Test {
  protected:
    test::ScratchDir dir{"plan"};
    SourceModel source;

    Plan plan(const TinyQwen3& model, PlanOptions options = {}) {
        model.write(dir.path());
        source = read_mcq_model(*ModelDir::open(dir.path()));
        return make_plan(source, options);
    }

    static std::string all_blockers(const Plan& p) {
        std::string s;
        for (const Blocker& b : p.blockers)
            s += "\n  " + b.tensor + " | " + b.reason + " | " + b.fix;
        return s;
    }

    static const Blocker* find_blocker(const Plan& p, const std::string& tensor,
                                       const std::string& reason) {
        for (const Blocker& b : p.blockers)
            if (b.tensor == tensor && b.reason.find(reason) != std::string::npos) return &b;
        return nullptr;
    }

    static void expect_blocker(const Plan& p, const std::string& tensor,
                               const std::string& reason) {
        EXPECT_NE(find_blocker(p, tensor, reason), nullptr)
            << "want '" << reason << "' for " << tensor << "; got:" << all_blockers(p);
        for (const TensorPlan& t : p.tensors)
            EXPECT_NE(t.gguf_name.empty(), true);  // every planned tensor is named
    }

    static const GgufValue* kv(const Plan& p, const std::string& key) {
        for (const GgufKV& item : p.kvs)
            if (item.key == key) return &item.value;
        return nullptr;
    }
};

constexpr GgmlType kQ4_1 = GgmlType::Q4_1;
constexpr GgmlType kF32 = GgmlType::F32;

TEST_F(PlanTest, GoodTinyQwen3PlansAllTensorsInOutputOrder) {
    const Plan p = plan(TinyQwen3{});
    EXPECT_TRUE(p.blockers.empty()) << all_blockers(p);
    EXPECT_EQ(p.arch, "qwen3");
    struct Expect {
        std::string name;
        GgmlType type;
        std::vector<int64_t> ne;
        uint64_t nbytes;  // Q4_1: elements / 32 * 20; F32: elements * 4
        Encoding encoding;
    };
    std::vector<Expect> expected = {
        {"token_embd.weight", kQ4_1, {64, 128}, 5120, Encoding::q4_1_repack}};
    for (int layer : {0, 1}) {
        const std::string b = "blk." + std::to_string(layer) + ".";
        expected.push_back({b + "attn_norm.weight", kF32, {64}, 256, Encoding::copy_f32});
        expected.push_back({b + "attn_q.weight", kQ4_1, {64, 64}, 2560, Encoding::q4_1_repack});
        expected.push_back({b + "attn_k.weight", kQ4_1, {64, 32}, 1280, Encoding::q4_1_repack});
        expected.push_back({b + "attn_v.weight", kQ4_1, {64, 32}, 1280, Encoding::q4_1_repack});
        expected.push_back(
            {b + "attn_output.weight", kQ4_1, {64, 64}, 2560, Encoding::q4_1_repack});
        expected.push_back({b + "attn_q_norm.weight", kF32, {16}, 64, Encoding::copy_f32});
        expected.push_back({b + "attn_k_norm.weight", kF32, {16}, 64, Encoding::widen_f32});
        expected.push_back({b + "ffn_norm.weight", kF32, {64}, 256, Encoding::copy_f32});
        expected.push_back({b + "ffn_gate.weight", kQ4_1, {64, 128}, 5120, Encoding::q4_1_repack});
        expected.push_back({b + "ffn_up.weight", kQ4_1, {64, 128}, 5120, Encoding::q4_1_repack});
        expected.push_back({b + "ffn_down.weight", kQ4_1, {128, 64}, 5120, Encoding::q4_1_repack});
    }
    expected.push_back({"output_norm.weight", kF32, {64}, 256, Encoding::copy_f32});
    ASSERT_EQ(expected.size(), 24u);
    ASSERT_EQ(p.tensors.size(), 24u);
    for (size_t i = 0; i < expected.size(); ++i) {
        const TensorPlan& t = p.tensors[i];
        EXPECT_EQ(t.gguf_name, expected[i].name) << i;
        EXPECT_EQ(t.type, expected[i].type) << expected[i].name;
        EXPECT_EQ(t.ne, expected[i].ne) << expected[i].name;
        EXPECT_EQ(t.nbytes, expected[i].nbytes) << expected[i].name;
        EXPECT_EQ(t.encoding, expected[i].encoding) << expected[i].name;
        ASSERT_LT(t.source_index, source.tensors.size());
    }
    // source_index points at the tensor the name came from.
    EXPECT_EQ(source.tensors[p.tensors[0].source_index].name, "embed_tokens.weight");
    EXPECT_EQ(source.tensors[p.tensors[23].source_index].name, "norm.weight");
    EXPECT_EQ(p.source_bytes, std::filesystem::file_size(dir.path() / "model.safetensors"));

    const GgufValue* arch = kv(p, "general.architecture");
    ASSERT_NE(arch, nullptr);
    EXPECT_EQ(*arch->as_string(), "qwen3");
    ASSERT_NE(kv(p, "general.file_type"), nullptr);
    EXPECT_EQ(kv(p, "general.file_type")->as_u32(), 3u);  // MOSTLY_Q4_1
    ASSERT_NE(kv(p, "rebox.version"), nullptr);
    EXPECT_EQ(*kv(p, "rebox.version")->as_string(), "0.1.0");
    EXPECT_EQ(*kv(p, "rebox.source.format")->as_string(), "mcq-v1");
    const GgufValue* names = kv(p, "rebox.quant.tensors");
    const GgufValue* bits = kv(p, "rebox.quant.bits");
    const GgufValue* groups = kv(p, "rebox.quant.group");
    ASSERT_TRUE(names && bits && groups);
    EXPECT_EQ(bits->elem_type, GgufType::UINT32);
    EXPECT_EQ(groups->elem_type, GgufType::UINT32);
    ASSERT_EQ(names->array.size(), 15u);  // token_embd + 7 per layer
    ASSERT_EQ(bits->array.size(), 15u);
    ASSERT_EQ(groups->array.size(), 15u);
    EXPECT_EQ(std::get<std::string>(names->array[0]), "token_embd.weight");
    EXPECT_EQ(std::get<uint64_t>(bits->array[0]), 3u);
    EXPECT_EQ(std::get<uint64_t>(groups->array[0]), 64u);
    EXPECT_EQ(std::get<std::string>(names->array[1]), "blk.0.attn_q.weight");
    EXPECT_EQ(std::get<uint64_t>(bits->array[1]), 4u);
    EXPECT_EQ(std::get<uint64_t>(groups->array[1]), 64u);
    EXPECT_EQ(std::get<std::string>(names->array[14]), "blk.1.ffn_down.weight");
    EXPECT_EQ(std::get<uint64_t>(bits->array[14]), 3u);
    EXPECT_EQ(std::get<uint64_t>(groups->array[14]), 32u);
}

TEST_F(PlanTest, NameFromOptionsThenConfigThenDirectory) {
    TinyQwen3 model;
    PlanOptions options;
    options.name = "custom";
    EXPECT_EQ(*kv(plan(model, options), "general.name")->as_string(), "custom");
    // The converter's name heuristics (docs/gguf.md §4.5): '-' becomes ' ', words with capitals
    // keep their case, the part before '/' is the organization.
    model.config["_name_or_path"] = "Qwen/Qwen3-Embedding-0.6B";
    EXPECT_EQ(*kv(plan(model), "general.name")->as_string(), "Qwen3 Embedding 0.6B");
    EXPECT_EQ(*kv(plan(model), "general.organization")->as_string(), "Qwen");
    model.config.erase("_name_or_path");
    // The scratch directory's name has capitals and no '-': unchanged.
    EXPECT_EQ(*kv(plan(model), "general.name")->as_string(), dir.path().filename().string());
}

TEST_F(PlanTest, OuttypeF32DequantizesEveryQuantizedTensor) {
    PlanOptions options;
    options.outtype = OutType::f32;
    const Plan p = plan(TinyQwen3{}, options);
    EXPECT_TRUE(p.blockers.empty()) << all_blockers(p);
    ASSERT_EQ(p.tensors.size(), 24u);
    EXPECT_EQ(p.tensors[0].type, kF32);
    EXPECT_EQ(p.tensors[0].encoding, Encoding::dequant_f32);
    EXPECT_EQ(p.tensors[0].nbytes, 64u * 128 * 4);
    for (const TensorPlan& t : p.tensors) EXPECT_EQ(t.type, kF32) << t.gguf_name;
    EXPECT_EQ(kv(p, "general.file_type")->as_u32(), 0u);  // ALL_F32
}

TEST_F(PlanTest, Group16IsABlocker) {
    TinyQwen3 model;
    model.file.remove("layers.0.self_attn.q_proj.weight.qcodes");
    model.file.remove("layers.0.self_attn.q_proj.weight.scales");
    model.file.remove("layers.0.self_attn.q_proj.weight.mins");
    model.file.quant("layers.0.self_attn.q_proj.weight", 4, 16, 64, 64);
    const Plan p = plan(model);
    expect_blocker(p, "layers.0.self_attn.q_proj.weight",
                   "group 16 is not a multiple of 32: a Q4_1/Q5_1 block would span two groups");
    const Blocker* b = find_blocker(p, "layers.0.self_attn.q_proj.weight", "group 16");
    ASSERT_NE(b, nullptr);
    EXPECT_TRUE(
        b->fix.starts_with("re-export with group a multiple of 32, or use "
                           "--allow-lossless-fallback (exact F16/F32 copy); the exact "
                           "fallback would store it as F"))
        << b->fix;
    // Packed: 4096 4-bit codes = 2048 bytes + 256 fp16 scales + 256 fp16 mins = 3072 bytes; the
    // fallback is 4096 values of 2 (F16) or 4 (F32) bytes.
    EXPECT_TRUE(b->fallback_growth_bytes == 8192u - 3072u ||
                b->fallback_growth_bytes == 16384u - 3072u)
        << b->fallback_growth_bytes;
    EXPECT_NE(b->fix.find("packed bytes (+" + std::to_string(b->fallback_growth_bytes) + " bytes)"),
              std::string::npos)
        << b->fix;
    for (const TensorPlan& t : p.tensors) EXPECT_NE(t.gguf_name, "blk.0.attn_q.weight");
    EXPECT_EQ(p.tensors.size(), 23u);
}

void replace_quant(TinyQwen3& model, const std::string& name, int bits, int64_t group, int64_t rows,
                   int64_t cols) {
    for (const char* part : {".qcodes", ".scales", ".mins"}) model.file.remove(name + part);
    model.file.quant(name, bits, group, rows, cols);
}

PlanOptions with_wider_types() {
    PlanOptions options;
    options.allow_lossless_fallback = true;
    return options;
}

TEST_F(PlanTest, FiveBitGoesToQ5_1) {
    TinyQwen3 model;
    replace_quant(model, "layers.1.mlp.up_proj.weight", 5, 32, 128, 64);
    PlanOptions q4_1_only;
    q4_1_only.outtype = OutType::q4_1;
    EXPECT_NE(find_blocker(plan(model, q4_1_only), "layers.1.mlp.up_proj.weight", "bits 5"),
              nullptr);
    EXPECT_TRUE(plan(model, with_wider_types()).blockers.empty());
    const Plan p = plan(model);  // --outtype auto: no flag needed
    EXPECT_TRUE(p.blockers.empty()) << all_blockers(p);
    bool seen = false;
    for (const TensorPlan& t : p.tensors)
        if (t.gguf_name == "blk.1.ffn_up.weight") {
            seen = true;
            EXPECT_EQ(t.type, GgmlType::Q5_1);
            EXPECT_EQ(t.encoding, Encoding::q5_1_repack);
            EXPECT_EQ(t.nbytes, 128u * 64 / 32 * 24);  // Q5_1: 24 bytes per 32 values
        }
    EXPECT_TRUE(seen);
    EXPECT_EQ(kv(p, "general.file_type")->as_u32(), 3u);  // Q4_1 still dominates
}

TEST_F(PlanTest, FileTypeIsTheMostFrequentBlockType) {
    // 8 of the 15 quantized tensors at 5 bits: Q5_1 dominates -> MOSTLY_Q5_1 = 9.
    TinyQwen3 model;
    replace_quant(model, "embed_tokens.weight", 5, 64, 128, 64);
    const std::string l0 = "layers.0.";
    replace_quant(model, l0 + "self_attn.q_proj.weight", 5, 64, 64, 64);
    replace_quant(model, l0 + "self_attn.k_proj.weight", 5, 64, 32, 64);
    replace_quant(model, l0 + "self_attn.v_proj.weight", 5, 64, 32, 64);
    replace_quant(model, l0 + "self_attn.o_proj.weight", 5, 64, 64, 64);
    replace_quant(model, l0 + "mlp.gate_proj.weight", 5, 64, 128, 64);
    replace_quant(model, l0 + "mlp.up_proj.weight", 5, 64, 128, 64);
    replace_quant(model, l0 + "mlp.down_proj.weight", 5, 64, 64, 128);
    const Plan p = plan(model, with_wider_types());
    EXPECT_TRUE(p.blockers.empty()) << all_blockers(p);
    EXPECT_EQ(kv(p, "general.file_type")->as_u32(), 9u);
}

TEST_F(PlanTest, SixBitFallbackOnlyWithTheFlag) {
    TinyQwen3 model;
    replace_quant(model, "layers.1.mlp.up_proj.weight", 6, 32, 128, 64);
    const Plan refused = plan(model);
    const Blocker* b = find_blocker(refused, "layers.1.mlp.up_proj.weight", "bits 6");
    ASSERT_NE(b, nullptr) << all_blockers(refused);
    EXPECT_NE(b->fix.find("--allow-lossless-fallback"), std::string::npos);
    PlanOptions options;
    options.allow_lossless_fallback = true;
    const Plan p = plan(model, options);
    EXPECT_TRUE(p.blockers.empty()) << all_blockers(p);
    EXPECT_EQ(p.tensors.size(), 24u);
    for (const TensorPlan& t : p.tensors)
        if (t.gguf_name == "blk.1.ffn_up.weight") {
            // Random fp16 scales in [2^-7, 2^-6) and mins: some value needs more than fp16 holds,
            // or all fit; either way an exact dequantized copy, never a block type.
            EXPECT_TRUE(t.encoding == Encoding::dequant_f16 || t.encoding == Encoding::dequant_f32);
            EXPECT_NE(t.note.find("bits 6"), std::string::npos) << t.note;
        }
}

// 6-bit v_proj with every scale 2^-10 (fp16 0x1400) and min 0.5 (0x3800): values 0.5 + c/1024
// (c <= 63) are multiples of fp16's 2^-11 step in [0.5, 1), so the fallback writes F16; 8-bit
// up_proj with scale 0x2e66 (1638 * 2^-14) and min 0.5 has values off that grid: F32. Converted
// and verified (the verifier dequantizes the GGUF itself) bit for bit.
TEST_F(PlanTest, FallbackConvertsToExactF16AndF32) {
    TinyQwen3 model;
    replace_quant(model, "layers.0.self_attn.v_proj.weight", 6, 64, 32, 64);
    replace_quant(model, "layers.0.mlp.up_proj.weight", 8, 64, 128, 64);
    auto fill = [&](const std::string& part, uint16_t value) {
        std::vector<uint8_t>& data = model.file.part(part).data;
        for (size_t i = 0; i + 1 < data.size(); i += 2) {
            data[i] = static_cast<uint8_t>(value);
            data[i + 1] = static_cast<uint8_t>(value >> 8);
        }
    };
    fill("layers.0.self_attn.v_proj.weight.scales", 0x1400);
    fill("layers.0.self_attn.v_proj.weight.mins", 0x3800);
    fill("layers.0.mlp.up_proj.weight.scales", 0x2e66);
    fill("layers.0.mlp.up_proj.weight.mins", 0x3800);
    PlanOptions options;
    options.allow_lossless_fallback = true;
    const Plan p = plan(model, options);
    ASSERT_TRUE(p.blockers.empty()) << all_blockers(p);
    int checked = 0;
    for (const TensorPlan& t : p.tensors) {
        if (t.gguf_name == "blk.0.attn_v.weight") {
            EXPECT_EQ(t.type, GgmlType::F16);
            EXPECT_EQ(t.encoding, Encoding::dequant_f16);
            EXPECT_EQ(t.nbytes, 32u * 64 * 2);
            ++checked;
        }
        if (t.gguf_name == "blk.0.ffn_up.weight") {
            EXPECT_EQ(t.type, kF32);
            EXPECT_EQ(t.encoding, Encoding::dequant_f32);
            EXPECT_NE(t.note.find("bits 8"), std::string::npos) << t.note;
            ++checked;
        }
    }
    EXPECT_EQ(checked, 2);

    ConvertOptions convert;
    convert.model_dir = dir.path();
    convert.output = dir.path() / "out.gguf";
    convert.plan = options;
    convert.threads = 2;
    const ConvertReport result = convert_model(convert);
    ASSERT_TRUE(result.verify.has_value());
    EXPECT_TRUE(result.verify->ok()) << result.verify->summary();
    EXPECT_TRUE(result.written);
    EXPECT_EQ(result.verify->re_encoded_identical, result.verify->re_encoded_total);
    EXPECT_EQ(std::filesystem::file_size(convert.output), plan_file_bytes(p));

    // Without the flag: both are BLOCKERs and nothing is written.
    convert.plan.allow_lossless_fallback = false;
    convert.output = dir.path() / "refused.gguf";
    EXPECT_THROW(convert_model(convert), Error);
    EXPECT_FALSE(std::filesystem::exists(convert.output));
}

TEST_F(PlanTest, SixBitDoesNotFitANibble) {
    TinyQwen3 model;
    replace_quant(model, "layers.1.mlp.up_proj.weight", 6, 32, 128, 64);
    expect_blocker(plan(model), "layers.1.mlp.up_proj.weight",
                   "bits 6: the codes do not fit a Q4_1 nibble");
}

TEST_F(PlanTest, ColsNotMultipleOf32) {
    TinyQwen3 model;
    replace_quant(model, "layers.0.mlp.up_proj.weight", 4, 64, 128, 48);
    expect_blocker(plan(model), "layers.0.mlp.up_proj.weight", "cols 48 is not a multiple of 32");
}

TEST_F(PlanTest, MetadataLieFromTheReaderReachesThePlan) {
    TinyQwen3 model;
    replace_quant(model, "layers.0.mlp.up_proj.weight", 2, 128, 128, 64);
    model.file.mcq["tensors"]["layers.0.mlp.up_proj.weight"]["bits"] = 4;
    model.file.mcq["tensors"]["layers.0.mlp.up_proj.weight"]["group"] = 64;
    const Plan p = plan(model);
    expect_blocker(p, "layers.0.mlp.up_proj.weight",
                   ".qcodes has 2048 bytes (expected ceil(N*bits/8) = 4096");
    // The reader's blocker names the tensor once; the plan does not report it missing again.
    EXPECT_EQ(find_blocker(p, "blk.0.ffn_up.weight", "requires"), nullptr) << all_blockers(p);
}

TEST_F(PlanTest, UnknownTensorNameIsABlockerNeverSkipped) {
    TinyQwen3 model;
    // Not one of the buffers llama.cpp's converter skips by name (".rotary_emb.inv_freq" is one:
    // BuffersConvert), so it is refused, not dropped.
    model.file.plain("layers.0.self_attn.rotary_emb.inv_freq_scale", "F32", {8}, 4);
    const Plan p = plan(model);
    expect_blocker(p, "layers.0.self_attn.rotary_emb.inv_freq_scale",
                   "no llama.cpp name for this tensor");
    EXPECT_EQ(p.tensors.size(), 24u);
}

TEST_F(PlanTest, MissingRequiredTensorIsNamed) {
    TinyQwen3 model;
    model.file.remove("layers.1.self_attn.k_norm.weight");
    const Plan p = plan(model);
    expect_blocker(p, "blk.1.attn_k_norm.weight",
                   "the qwen3 graph requires blk.1.attn_k_norm.weight");
    EXPECT_EQ(p.blockers.size(), 1u) << all_blockers(p);
}

TEST_F(PlanTest, UntiedEmbeddingsRequireOutput) {
    TinyQwen3 model;
    model.config["tie_word_embeddings"] = false;
    const Plan p = plan(model);
    expect_blocker(p, "output.weight", "requires output.weight");
    model.file.quant("lm_head.weight", 4, 64, 128, 64);
    const Plan with_head = plan(model);
    EXPECT_TRUE(with_head.blockers.empty()) << all_blockers(with_head);
    ASSERT_EQ(with_head.tensors.size(), 25u);
    EXPECT_EQ(with_head.tensors.back().gguf_name, "output.weight");
    EXPECT_EQ(with_head.tensors[23].gguf_name, "output_norm.weight");
}

TEST_F(PlanTest, ShapeDisagreeingWithConfig) {
    TinyQwen3 model;
    replace_quant(model, "layers.0.self_attn.k_proj.weight", 4, 64, 64, 64);
    expect_blocker(plan(model), "layers.0.self_attn.k_proj.weight",
                   "has ne [64, 64] but config.json implies [64, 32]");
}

TEST_F(PlanTest, EmbeddingRowsMustEqualVocabSize) {
    TinyQwen3 model;
    replace_quant(model, "embed_tokens.weight", 3, 64, 100, 64);
    expect_blocker(plan(model), "embed_tokens.weight",
                   "token_embd.weight has ne [64, 100] but config.json implies [64, 128]");
}

TEST_F(PlanTest, LayerBeyondConfig) {
    TinyQwen3 model;
    model.file.plain("layers.2.input_layernorm.weight", "F32", {64}, 4);
    expect_blocker(plan(model), "layers.2.input_layernorm.weight",
                   "beyond config.json num_hidden_layers = 2");
}

TEST_F(PlanTest, NoTokenizerJson) {
    TinyQwen3 model;
    model.write_tokenizer = false;
    expect_blocker(plan(model), "tokenizer.json",
                   "no tokenizer.json: the GGUF would not be runnable");
}

TEST_F(PlanTest, TokenizerBlockerBecomesABlocker) {
    TinyQwen3 model;
    model.tokenizer["pre_tokenizer"]["pattern"]["Regex"] = "\\s+";
    const Plan p = plan(model);
    expect_blocker(p, "tokenizer.json", "unknown Split regex");
    const Blocker* b = find_blocker(p, "tokenizer.json", "unknown Split regex");
    ASSERT_NE(b, nullptr);
    EXPECT_FALSE(b->reason.starts_with("tokenizer.json")) << b->reason;  // the file is named once
}

TEST_F(PlanTest, UnsupportedModelType) {
    TinyQwen3 model;
    model.config["model_type"] = "t5";
    const Plan p = plan(model);
    expect_blocker(p, "config.json: model_type", "model_type 't5' is not supported");
    EXPECT_TRUE(p.tensors.empty());
}

}  // namespace
}  // namespace rebox
