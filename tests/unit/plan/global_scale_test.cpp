// plan_global_scales on hand-built plans: an NVFP4 per-tensor factor becomes F32 <tensor>.scale
// where llama.cpp's graph applies it (qwen3 attention and FFN, llama experts as [n_expert],
// output), nothing when it is exactly 1, and a BLOCKER naming the source tensor where the graph
// ignores it (qwen2 FFN, token_embd), on a dense FFN with a bias, on an output.weight that is not
// NVFP4 (llama.cpp reads output.scale only then), or for a compressed-tensors
// fl32(1/g) without allow_inexact_global_scale (then a note saying "not bit-identical").
#include "plan/global_scale.hpp"

#include <gtest/gtest.h>

namespace rebox {
namespace {

struct Fp4Plan {
    std::vector<uint8_t> codes = std::vector<uint8_t>(32), scales = std::vector<uint8_t>(4, 0x38);
    SourceModel source;
    Plan plan;

    explicit Fp4Plan(std::string arch) { plan.arch = std::move(arch); }

    // A source tensor with factor `scale2` (none when 0) planned as `gguf_name`.
    size_t add(const std::string& hf, const std::string& gguf_name, float scale2,
               bool inexact = false) {
        SourceTensor t;
        t.name = hf;
        t.shape = {1, 64};
        Fp4View v;
        v.kind = Fp4Kind::nvfp4;
        v.group = 16;
        v.codes = codes;
        v.scales = scales;
        v.origin = inexact ? "compressed-tensors" : "ModelOpt";
        if (scale2 != 0) v.scale2 = scale2;
        v.scale2_inexact = inexact;
        v.scale2_error = inexact ? 3e-8 : 0;
        t.fp4 = v;
        source.tensors.push_back(t);
        TensorPlan tp;
        tp.source_index = source.tensors.size() - 1;
        tp.gguf_name = gguf_name;
        tp.type = GgmlType::NVFP4;
        plan.tensors.push_back(tp);
        return plan.tensors.size() - 1;
    }
    const TensorPlan* find(const std::string& name) const {
        for (const TensorPlan& t : plan.tensors)
            if (t.gguf_name == name) return &t;
        return nullptr;
    }
    void run(bool allow_inexact = false) {
        PlanOptions options;
        options.allow_inexact_global_scale = allow_inexact;
        plan_detail::plan_global_scales(source, options, plan);
    }
};

TEST(GlobalScale, AppliedTensorsGetAnF32ScaleVerbatim) {
    Fp4Plan p("qwen3");
    p.add("model.layers.0.self_attn.q_proj.weight", "blk.0.attn_q.weight", 3.0e-5f);
    p.add("model.layers.0.mlp.down_proj.weight", "blk.0.ffn_down.weight", 0.125f);
    p.add("lm_head.weight", "output.weight", 7.0f);
    p.run();
    EXPECT_TRUE(p.plan.blockers.empty()) << p.plan.blockers[0].reason;
    for (const auto& [name, value] :
         std::vector<std::pair<std::string, float>>{{"blk.0.attn_q.scale", 3.0e-5f},
                                                    {"blk.0.ffn_down.scale", 0.125f},
                                                    {"output.scale", 7.0f}}) {
        const TensorPlan* s = p.find(name);
        ASSERT_NE(s, nullptr) << name;
        EXPECT_TRUE(s->is_computed());
        EXPECT_EQ(s->type, GgmlType::F32);
        EXPECT_EQ(s->ne, std::vector<int64_t>{1});
        ASSERT_EQ(s->computed.size(), 1u);
        EXPECT_EQ(s->computed[0], value);
    }
}

TEST(GlobalScale, AFactorOfOneIsLeftOut) {
    Fp4Plan p("qwen2");
    p.add("model.layers.0.mlp.up_proj.weight", "blk.0.ffn_up.weight", 1.0f);
    p.add("model.layers.0.mlp.gate_proj.weight", "blk.0.ffn_gate.weight", 0.0f);  // none (MLX)
    p.run();
    EXPECT_TRUE(p.plan.blockers.empty());
    EXPECT_EQ(p.plan.tensors.size(), 2u);
}

TEST(GlobalScale, IgnoredByTheGraphIsABlocker) {
    Fp4Plan qwen2("qwen2");
    qwen2.add("model.layers.0.self_attn.o_proj.weight", "blk.0.attn_output.weight", 0.5f);
    qwen2.add("model.layers.0.mlp.up_proj.weight", "blk.0.ffn_up.weight", 0.5f);
    qwen2.run();
    ASSERT_EQ(qwen2.plan.blockers.size(), 1u);
    EXPECT_EQ(qwen2.plan.blockers[0].tensor, "model.layers.0.mlp.up_proj.weight");
    EXPECT_NE(qwen2.plan.blockers[0].reason.find("qwen2 graph ignores blk.0.ffn_up.scale"),
              std::string::npos)
        << qwen2.plan.blockers[0].reason;
    EXPECT_NE(qwen2.find("blk.0.attn_output.scale"), nullptr);
    EXPECT_EQ(qwen2.find("blk.0.ffn_up.scale"), nullptr);
    Fp4Plan embd("llama");
    embd.add("model.embed_tokens.weight", "token_embd.weight", 2.0f);
    embd.run();
    ASSERT_EQ(embd.plan.blockers.size(), 1u);
    EXPECT_NE(embd.plan.blockers[0].reason.find("ignores token_embd.scale"), std::string::npos);
    Fp4Plan moe("qwen3moe");  // qwen3moe applies experts but has no dense FFN
    moe.add("model.layers.0.mlp.shared.weight", "blk.0.ffn_up.weight", 2.0f);
    moe.run();
    EXPECT_EQ(moe.plan.blockers.size(), 1u);
}

TEST(GlobalScale, OutputScaleOnlyBesideAnNvfp4Output) {
    Fp4Plan p("llama");
    const size_t out = p.add("lm_head.weight", "output.weight", 2.0f);
    p.plan.tensors[out].type = GgmlType::F32;  // --outtype f32 or the lossless fallback
    p.run();
    ASSERT_EQ(p.plan.blockers.size(), 1u);
    EXPECT_NE(p.plan.blockers[0].reason.find("only beside an NVFP4 output.weight"),
              std::string::npos)
        << p.plan.blockers[0].reason;
    EXPECT_EQ(p.find("output.scale"), nullptr);
}

TEST(GlobalScale, DenseFfnWithABiasIsABlocker) {
    Fp4Plan p("llama");
    p.add("model.layers.0.mlp.up_proj.weight", "blk.0.ffn_up.weight", 0.5f);
    TensorPlan bias;
    bias.gguf_name = "blk.0.ffn_up.bias";
    bias.source_index = TensorPlan::kComputed;
    p.plan.tensors.push_back(bias);
    p.run();
    ASSERT_EQ(p.plan.blockers.size(), 1u);
    EXPECT_NE(p.plan.blockers[0].reason.find("dense FFN with a bias"), std::string::npos);
}

TEST(GlobalScale, StackedExpertsGetOneFactorEach) {
    Fp4Plan p("llama");
    const size_t at =
        p.add("model.layers.0.mlp.experts.0.up_proj.weight", "blk.0.ffn_up_exps.weight", 0.5f);
    p.add("model.layers.0.mlp.experts.1.up_proj.weight", "unused", 1.0f);
    p.add("model.layers.0.mlp.experts.2.up_proj.weight", "unused", 0.25f);
    p.plan.tensors.resize(at + 1);
    p.plan.tensors[at].expert_sources = {0, 1, 2};
    p.run();
    EXPECT_TRUE(p.plan.blockers.empty()) << p.plan.blockers[0].reason;
    const TensorPlan* s = p.find("blk.0.ffn_up_exps.scale");
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->ne, std::vector<int64_t>{3});
    EXPECT_EQ(s->computed, (std::vector<float>{0.5f, 1.0f, 0.25f}));
}

TEST(GlobalScale, InexactReciprocalNeedsTheFlag) {
    Fp4Plan strict("qwen3");
    strict.add("model.layers.0.self_attn.q_proj.weight", "blk.0.attn_q.weight", 1.0f / 3.0f, true);
    strict.run();
    ASSERT_EQ(strict.plan.blockers.size(), 1u);
    EXPECT_NE(strict.plan.blockers[0].reason.find("fl32(1/global_scale)"), std::string::npos);
    EXPECT_NE(strict.plan.blockers[0].reason.find("off by 3e-08"), std::string::npos)
        << strict.plan.blockers[0].reason;
    EXPECT_NE(strict.plan.blockers[0].fix.find("--allow-inexact-global-scale"), std::string::npos);
    EXPECT_EQ(strict.find("blk.0.attn_q.scale"), nullptr);
    Fp4Plan allowed("qwen3");
    allowed.add("model.layers.0.self_attn.q_proj.weight", "blk.0.attn_q.weight", 1.0f / 3.0f, true);
    allowed.run(true);
    EXPECT_TRUE(allowed.plan.blockers.empty());
    ASSERT_NE(allowed.find("blk.0.attn_q.scale"), nullptr);
    ASSERT_EQ(allowed.plan.notes.size(), 1u);
    EXPECT_NE(allowed.plan.notes[0].find("not bit-identical"), std::string::npos);
}

}  // namespace
}  // namespace rebox
