// rebox-mkfixture: writes deterministic mcq-v1 model directories (valid, or with one named
// defect), MLX-layout ones (--format mlx, with a quantization recipe) or plain float ones
// (--format float, --dtype), that serve as independent ground truth for rebox's tests. It uses none
// of rebox's encode/ or source/ code: safetensors writing, bit packing and fp16/bf16 rounding are
// its own.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "deepseek2_files.hpp"
#include "encoder_fixture.hpp"
#include "extra_tensors.hpp"
#include "float_files.hpp"
#include "fp8_files.hpp"
#include "gemma4_files.hpp"
#include "glm4moe_files.hpp"
#include "gpt_oss_files.hpp"
#include "hf_files.hpp"
#include "mistral3_vision_files.hpp"
#include "mlx_files.hpp"
#include "mlx_recipe.hpp"
#include "mlx_vlm_layout.hpp"
#include "model_plan.hpp"
#include "modernbert_files.hpp"
#include "nemotron_h_files.hpp"
#include "nvidia_fp4_files.hpp"
#include "prequant_files.hpp"
#include "qwen35_files.hpp"
#include "tokenizer_files.hpp"

namespace fs = std::filesystem;

namespace {

// Files and folders a fixture consists of; --force removes only these.
void remove_previous_fixture(const fs::path& out_dir) {
    for (const auto& entry : fs::directory_iterator(out_dir)) {
        const std::string name = entry.path().filename().string();
        const bool ours =
            name == "config.json" || name == "tokenizer.json" || name == "tokenizer_config.json" ||
            name == "modules.json" || name == "1_Pooling" || name == "sentencepiece.bpe.model" ||
            name == "special_tokens_map.json" || name == "model.safetensors.index.json" ||
            (name.rfind("model", 0) == 0 && entry.path().extension() == ".safetensors");
        if (ours) fs::remove_all(entry.path());
    }
}

// OUT_DIR made ready for a new fixture: created, or (with --force only) emptied of a previous
// fixture's files, or of everything when `whole`. Returns whether it existed before.
bool prepare_output_dir(const std::string& out_dir, bool force, bool whole) {
    const fs::path out(out_dir);
    const bool existed = fs::exists(out);
    if (existed && !fs::is_empty(out)) {
        if (!force) throw std::runtime_error(out_dir + ": exists and is not empty (use --force)");
        if (whole)
            fs::remove_all(out);
        else
            remove_previous_fixture(out);
    }
    fs::create_directories(out);
    return existed;
}

// The decoder fixture options a family with a writer of its own (--arch qwen35, glm4moe,
// modernbert, gemma4) takes none of: one refusal naming the first given, "OPTION does not apply to
// WHAT". --format is refused only with with_format; --recipe is left to the family with_recipe.
void refuse_decoder_options(const CLI::App& app, const std::string& what, bool with_format,
                            bool with_recipe = false, bool with_hidden = false) {
    for (const char* option : {"--tokenizer", "--tokenizer-json", "--defect", "--shards",
                               "--recipe", "--bits", "--hidden", "--scale-dtype", "--corners",
                               "--untied", "--tied", "--prefix-model", "--dtype", "--format"})
        if (app.count(option) && (with_format || std::string_view(option) != "--format") &&
            (!with_recipe || std::string_view(option) != "--recipe") &&
            (!with_hidden || std::string_view(option) != "--hidden"))
            throw std::runtime_error(std::string(option) + " does not apply to " + what);
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"rebox-mkfixture: deterministic mcq-v1 / MLX test checkpoints"};
    std::string out_dir, preset, tokenizer, qwen3_tokenizer, defect;
    bool embedding_eos = false, prefix_model = false, corners = false, no_pooling = false;
    bool untied = false, tied_flag = false, attention_bias = false, force = false;
    std::string rope_scaling;  // llama/mistral: "none" | "llama3"; empty: the arch's default
    int shards = 1;
    uint64_t seed = 1;
    std::string format = "mcq", recipe = "uniform4", arch = "qwen3";
    mkfixture::MlxOptions mlx;
    app.add_option("OUT_DIR", out_dir, "output directory")->required();
    app.add_option("--preset", preset,
                   "tiny | qwen3-0.6b | qwen3-8b | qwen3-30b-a3b-2layers (--arch qwen3_moe: "
                   "Qwen3-30B-A3B's first two layers, 128 experts of 768, 8 used)")
        ->required()
        ->check(CLI::IsMember({"tiny", "qwen3-0.6b", "qwen3-8b", "qwen3-30b-a3b-2layers"}));
    app.add_option(
           "--arch", arch,
           "qwen3 (default) | qwen2 (tiny only: Qwen2ForCausalLM, q/k/v biases, no q/k norms) | "
           "llama (tiny only: LlamaForCausalLM, GQA 4/2 heads, untied unless --tied) | mistral "
           "(tiny only: MistralForCausalLM, head_dim 32 != hidden/heads, untied unless --tied) | "
           "qwen3_moe | qwen2_moe (shared expert) | mixtral (mixture of experts; tiny, or "
           "qwen3_moe with --preset qwen3-30b-a3b-2layers) | phi3 "
           "(tiny only: Phi3ForCausalLM, fused qkv_proj / gate_up_proj, untied unless --tied) | "
           "gemma | gemma2 | gemma3 (tiny only, tied: norms stored as HF stores them, gemma3 with "
           "32 embedding rows past vocab_size) | gpt_oss (tiny only: openai's layout, experts in "
           "OCP MXFP4 blocks/scales, BF16 elsewhere; needs --tokenizer-json, the real gpt-oss "
           "tokenizer.json) | bert | xlm-roberta | nomic-bert (tiny encoders: BertModel, "
           "XLMRobertaModel, "
           "nomic-embed-text v1.5's NomicBertModel; 2 layers of width 64; --format mcq (tables, "
           "heads and layer 0 4-bit / 64, later layers 3-bit / 32), mlx (mlx-embeddings: every "
           "2-D weight 4-bit / 64, f16 scales and biases, no quantization_config) or float; "
           "needs --tokenizer-json, a real WordPiece (bert, nomic-bert) or XLM-R Unigram "
           "tokenizer.json) | modernbert (tiny: a ModernBertModel embedder, 3 layers with a "
           "sliding window, the generated BPE tokenizer in ModernBERT's shape, MEAN pooling; "
           "--format float (float32, the default), mcq (the table, head and layer 0 4-bit / "
           "64, later layers 3-bit / 32, the fused Wqkv / Wi single tensors) or mlx) | seed_oss "
           "(tiny only: SeedOssForCausalLM, q/k/v biases, head_dim 32 != hidden/heads, untied) | "
           "olmo2 | "
           "olmo3 (tiny only: Olmo2ForCausalLM / Olmo3ForCausalLM, no pre-norms, q/k norms over "
           "the whole projection, post-attention and post-feed-forward norms, untied; olmo3 with "
           "sliding_window 4 and layer_types sliding, full) | smollm3 (tiny only: "
           "SmolLM3ForCausalLM, 4 layers, no_rope_layers 1, 1, 1, 0, tied) | mistral3 (tiny "
           "only: Mistral3ForConditionalGeneration with a ministral3 text model, yarn "
           "rope_parameters, head_dim 32, a vision tower stand-in, untied) | apertus (tiny only: "
           "ApertusForCausalLM, q/k norms, up / down with the xIELU parameters, llama3 rope, "
           "untied) | qwen35 (tiny only: Qwen3_5ForCausalLM in BF16, 4 layers with full attention "
           "every 2nd, 2 key / 4 value heads in the linear-attention layers, 1 MTP layer, "
           "Qwen3.5's split regex) | qwen2_vl / qwen2_5_vl (tiny only: "
           "Qwen2VLForConditionalGeneration / Qwen2_5_VLForConditionalGeneration, qwen2's text "
           "model with an M-RoPE rope_scaling, a float vision tower of 2 blocks and the merger, "
           "preprocessor_config.json; --vl-split) | qwen3_vl (tiny only: "
           "Qwen3VLForConditionalGeneration, qwen3's text model under model.language_model. with "
           "an interleaved M-RoPE rope_scaling, a float vision tower of 4 blocks, its merger and 2 "
           "deepstack mergers, preprocessor_config.json) | qwen35moe (tiny only: qwen35 with "
           "Qwen3_5MoeForCausalLM's "
           "experts in every layer: 4 of width 32, fused gate_up_proj in the main layers, per "
           "expert in the MTP layer, and a shared expert; both --format float, mcq, mlx, gptq, "
           "awq, "
           "compressed-tensors, modelopt-nvfp4 or ct-nvfp4; qwen35moe's gptq / awq / "
           "compressed-tensors quantize what Qwen's GPTQ-Int4, GPTQModel's AWQ and "
           "llm-compressor's W4A16 uploads quantize) | qwen3next (tiny only: "
           "Qwen3NextForCausalLM: qwen35moe's shapes with in_proj_qkvz / in_proj_ba, experts per "
           "expert, no mtp_num_hidden_layers; --format float, mcq, mlx, gptq, awq, "
           "compressed-tensors or modelopt-nvfp4) | glm4moe (tiny only: "
           "Glm4MoeForCausalLM, layer 0 dense, "
           "layer 1 MoE with 4 experts and a shared expert, 1 MTP layer; --format float (bf16), "
           "mcq, mlx, gptq, awq (every projection 4-bit / 32, the router, embedding and head "
           "float) or modelopt-nvfp4 (every Linear but lm_head NVFP4, the MTP layer BF16; "
           "--fp4-ffn-scale-one)) | deepseek2 (tiny only: DeepseekV3ForCausalLM with MLA, "
           "layer 0 dense, "
           "layers 1-2 MoE with 4 experts and a shared expert, an MTP stand-in; --format float "
           "(bf16), mcq, mlx, compressed-tensors (Kimi-K2-Thinking's layout: the routed "
           "experts 4-bit / 32 symmetric, the rest BF16), gptq or awq (every projection "
           "4-bit / 32, kv_b_proj included), modelopt-nvfp4 (as nvidia/DeepSeek-R1-0528-FP4-v2: "
           "the MLPs and o_proj NVFP4, kv_lora_rank 64 and feed-forward widths 128 / 64; "
           "--fp4-ffn-scale-one, --nvfp4-kv-b); --no-q-lora) | glm4_moe_lite (tiny only: "
           "GLM-4.7-Flash, "
           "deepseek2's sizes with GLM's tokenizer and a whole MTP layer; --format float, "
           "mcq, gptq or awq (the MTP layer kept), mlx or modelopt-nvfp4 (trunk only, as "
           "mlx-lm and ModelOpt write it; --fp4-ffn-scale-one)) | "
           "gemma4 (tiny only: Gemma4ForConditionalGeneration; --format float (bf16, the "
           "default), mcq, mlx (with --recipe), gptq or awq (GPTQModel's layout: the decoder "
           "layers' projections 4-bit in groups of 32, the rest F16), compressed-tensors "
           "(llm-compressor W4A16: the same projections, groups of 32, the rest BF16), "
           "modelopt-nvfp4 (as nvidia/Gemma-4-31B-IT-NVFP4: the MLP NVFP4) or ct-nvfp4 "
           "(attention and MLP NVFP4); "
           "3 sliding-window layers then a full-attention one with global_head_dim 32, 1 kv head "
           "and no v_proj, a layer_scalar per layer, tied, a vision tower stand-in) | "
           "nemotron_h (tiny only: NemotronHForCausalLM in BF16, 6 layers 'M-M*-M': Mamba2, "
           "relu² MLP and attention mixers under backbone.*, untied; --format float or mcq) | "
           "nemotron_h_moe (tiny only: the same with 'MEM*EM': 4 relu² experts of 64 with a "
           "router, its score-correction bias and a shared expert)")
        ->check(CLI::IsMember(
            {"qwen3",    "qwen2",       "llama",          "mistral",    "qwen3_moe", "qwen2_moe",
             "mixtral",  "phi3",        "gemma",          "gemma2",     "gemma3",    "gpt_oss",
             "bert",     "xlm-roberta", "nomic-bert",     "modernbert", "seed_oss",  "olmo2",
             "olmo3",    "smollm3",     "mistral3",       "apertus",    "qwen35",    "glm4moe",
             "gemma4",   "deepseek2",   "glm4_moe_lite",  "qwen35moe",  "qwen2_vl",  "qwen2_5_vl",
             "qwen3_vl", "nemotron_h",  "nemotron_h_moe", "qwen3next"}));
    std::string nemotron_h_defect;
    app.add_option("--nemotron-h-defect", nemotron_h_defect,
                   "--arch nemotron_h / nemotron_h_moe, a checkpoint that must be refused: "
                   "pattern-length (hybrid_override_pattern one layer short) | latent-missing "
                   "(nemotron_h_moe: the --nemotron-h-latent checkpoint without layer 1's "
                   "fc2_latent_proj) | mtp-partial (nemotron_h_moe: the --nemotron-h-mtp "
                   "checkpoint without mtp.layers.1.final_layernorm) | mtp-no-count "
                   "(its mtp.* tensors, config.json without num_nextn_predict_layers) | "
                   "mlx-missing-scales (nemotron_h_moe --format mlx: layer 1's switch_mlp.fc1 "
                   "without its .scales) | gptq-actorder (--format gptq with a true act-order "
                   "g_idx)");
    bool nemotron_h_mtp = false;
    app.add_flag("--nemotron-h-mtp", nemotron_h_mtp,
                 "--arch nemotron_h_moe: Nemotron 3 Super's MTP layers (num_nextn_predict_layers "
                 "1: mtp.layers.0 attention with the NextN input fusion, mtp.layers.1 MoE with "
                 "final_layernorm)");
    bool nemotron_h_latent = false;
    app.add_flag("--nemotron-h-latent", nemotron_h_latent,
                 "--arch nemotron_h_moe: Nemotron 3 Super's LatentMoE (moe_latent_size 32, "
                 "fc1_latent_proj / fc2_latent_proj on each 'E' layer, latent-wide experts)");
    bool deepseek2_no_q_lora = false;
    app.add_flag("--no-q-lora", deepseek2_no_q_lora,
                 "--arch deepseek2: q_lora_rank null (q_proj instead of q_a_proj / q_b_proj)");
    bool deepseek2_nvfp4_kv_b = false;
    app.add_flag("--nvfp4-kv-b", deepseek2_nvfp4_kv_b,
                 "--arch deepseek2 --format modelopt-nvfp4: kv_b_proj NVFP4 too (factor 1)");
    std::string glm4moe_defect;
    app.add_option("--glm4moe-defect", glm4moe_defect,
                   "--arch glm4moe, a checkpoint that must be refused: expert-missing (layer 1's "
                   "last expert without up_proj) | no-shared-count (config.json without "
                   "n_shared_experts) | mtp-partial (the MTP layer without hnorm)");
    bool glm4moe_trunk_only = false;
    app.add_flag("--trunk-only", glm4moe_trunk_only,
                 "--arch glm4moe: no MTP weights (config.json still names the MTP layer)");
    std::string qwen35_defect;
    bool qwen35_vision = false;
    app.add_flag(
        "--qwen35-vision", qwen35_vision,
        "--arch qwen35 / qwen35moe, --format float: Qwen3_5(Moe)ForConditionalGeneration "
        "with the text model under model.language_model. and a float Qwen3.5 vision tower "
        "of 4 blocks under model.visual. (no deepstack mergers), preprocessor_config.json");
    app.add_option(
        "--qwen35-defect", qwen35_defect,
        "--arch qwen35, a checkpoint that must be refused: layer-types (layer 0 full "
        "attention against full_attention_interval) | no-a-log (layer 0 without "
        "A_log) | heads (3 value heads under 2 key heads) | expert-missing (--arch qwen35moe: "
        "the MTP layer's last expert without up_proj) | narrow-heads (--format mcq: value "
        "heads of 16, half a Q4_1 block) | gdn-nvfp4 (--arch qwen3next --format "
        "modelopt-nvfp4: in_proj_qkvz, in_proj_ba and out_proj NVFP4 too, whose .scale the "
        "qwen3next graph does not apply) | gdn-nvfp4-one (the same with factors of exactly 1: "
        "converts)");
    std::string gemma4_defect;
    app.add_option("--gemma4-defect", gemma4_defect,
                   "--arch gemma4, a checkpoint that must be refused: layer-types (3 entries for "
                   "4 layers) | no-router-scale (--gemma4-moe: layer 0 without router.scale) "
                   "| no-per-layer-embeddings (--gemma4-e2b: no embed_tokens_per_layer) | "
                   "projector-width (embed_vision's projection takes twice the vision width) "
                   "| no-expert-up (--gemma4-moe --format mlx: layer 0 without "
                   "experts.switch_glu.up_proj) | expert-up-8bit (the same with layer 0's up_proj "
                   "at 8 bits, its gate at 4) | per-layer-nvfp4 (--gemma4-e2b --format "
                   "modelopt-nvfp4|ct-nvfp4: layer 0's per_layer_input_gate NVFP4, "
                   "whose .scale the gemma4 graph does not apply)");
    bool gemma4_e2b = false;
    app.add_flag("--gemma4-e2b", gemma4_e2b,
                 "--arch gemma4: the E2B / E4B layout, 6 layers whose last 3 share the keys and "
                 "values of earlier ones (double-wide MLP), per-layer input embeddings of 64");
    bool gemma4_moe = false;
    app.add_flag("--gemma4-moe", gemma4_moe,
                 "--arch gemma4 (--format float, mcq, mlx, gptq, awq, compressed-tensors or "
                 "modelopt-nvfp4; gptq / awq / compressed-tensors: the fused experts and router "
                 "float, as those tools leave them): the 26B-A4B "
                 "layout, a MoE block of 2 experts of 32 (MLX: 64, split into switch_glu gate / "
                 "up / down; ModelOpt NVFP4: 64, per-expert gate_proj / up_proj / down_proj "
                 "modules; both used) beside each layer's MLP");
    bool gemma4_mlx_unquantized = false;
    app.add_flag("--gemma4-mlx-unquantized", gemma4_mlx_unquantized,
                 "--arch gemma4 --format mlx: mlx-lm's conversion without -q (its names and "
                 "sanitize, every tensor BF16, no quantization block)");
    std::string encoder_pooling;
    app.add_option("--pooling", encoder_pooling,
                   "bert / xlm-roberta / nomic-bert: sentence-transformers pooling cls | mean | "
                   "none (no modules.json; default cls, nomic-bert mean)")
        ->check(CLI::IsMember({"cls", "mean", "none"}));
    bool encoder_reranker = false;
    app.add_flag("--reranker", encoder_reranker,
                 "bert / xlm-roberta / modernbert: the *ForSequenceClassification layout (names "
                 "under bert. / roberta. / model., pooler + classifier, classifier.dense + "
                 "out_proj, or head.dense + head.norm + classifier with classifier_pooling "
                 "mean; one label, no pooling files)");
    std::string gpt_oss_defect;
    app.add_option("--gpt-oss-defect", gpt_oss_defect,
                   "--arch gpt_oss, a checkpoint that must be refused: scale-nan (an E8M0 byte "
                   "0xFF) | scale-shape (_scales one row short) | swiglu (swiglu_limit 6) | "
                   "layer-types (full attention first)");
    mkfixture::PlanOptions moe_options;
    app.add_option("--experts", moe_options.experts, "MoE: experts per layer (default 4)");
    app.add_option("--hidden", moe_options.hidden,
                   "tiny: hidden_size (a multiple of 32, default 64; e.g. 96 with --arch mistral: "
                   "layer 0's groups of 64 cross its rows of 96 values; --arch qwen35 / qwen35moe "
                   "/ qwen3next, float: 64 or a multiple of 256, every matrix row then a multiple "
                   "of 256 values)");
    app.add_option("--experts-used", moe_options.experts_used,
                   "MoE: experts used per token (default 2)");
    app.add_option("--moe-ffn", moe_options.moe_ffn,
                   "MoE: one expert's width, moe_intermediate_size (default 64, a multiple of 64)");
    app.add_option("--moe-defect", moe_options.moe_defect,
                   "MoE fixture that must be refused: expert-missing (mcq/float) | expert-bits "
                   "(mcq) | experts-count (any format: config.json num_experts one too few)")
        ->check(CLI::IsMember(mkfixture::moe_defect_names()));
    bool multimodal = false;
    bool vl_split = false;
    int64_t vl_temporal = 2, vl_merger_width = 0;
    app.add_flag("--vl-split", vl_split,
                 "--arch qwen2_vl / qwen2_5_vl: transformers >= 4.52's layout "
                 "(model.language_model.*, model.visual.*, text_config); --arch mistral3 "
                 "--multimodal: model.language_model.*, model.vision_tower.*, "
                 "model.multi_modal_projector.*, lm_head");
    app.add_option(
        "--vl-temporal", vl_temporal,
        "--arch qwen2_vl / qwen2_5_vl / qwen3_vl: the patch embedding's temporal size (default 2; "
        "3 makes a checkpoint that must be refused)");
    app.add_option(
        "--vl-merger-width", vl_merger_width,
        "--arch qwen2_vl / qwen2_5_vl / qwen3_vl: the mergers' output width (default: the text "
        "model's hidden_size; another width makes a checkpoint that must be refused); "
        "--arch mistral3 --multimodal: the projector's input width (default: the tower's 32)");
    bool mlx_vlm = false;
    app.add_flag("--mlx-vlm", mlx_vlm,
                 "--arch qwen2_vl / qwen2_5_vl / qwen3_vl --format mlx: mlx_vlm.convert's layout "
                 "(its sanitize's names language_model.model.*, language_model.lm_head, "
                 "vision_tower.*, and the Conv3D patch embedding stored channel-last)");
    bool mlx_vlm_quantized_tower = false;
    app.add_flag("--mlx-vlm-quantized-tower", mlx_vlm_quantized_tower,
                 "with --mlx-vlm: legacy mlx-vlm's quantized tower (every 2-D Linear weight under "
                 "vision_tower.* affine 4-bit, groups of 32, a per-module override)");
    app.add_flag("--multimodal", multimodal,
                 "gemma3: Gemma3ForConditionalGeneration layout (text model under "
                 "language_model.model., text_config, a tiny float SigLIP tower and projector, "
                 "preprocessor_config.json); mistral3: Mistral-Small-3.1-24B-Instruct-2503's "
                 "layout (text model under language_model.model., a tiny float Pixtral tower "
                 "and projector, preprocessor / processor configs, [IMG_BREAK] in the "
                 "tokenizer)");
    app.add_option("--tokenizer", tokenizer,
                   "small | qwen3 | llama3 | llama2 | gemma3 | none (default: small for tiny, "
                   "qwen3 for the qwen3 presets)")
        ->check(CLI::IsMember({"small", "qwen3", "llama3", "llama2", "gemma3", "none"}));
    app.add_option("--qwen3-tokenizer", qwen3_tokenizer,
                   "the real Qwen3 tokenizer.json (default: $REBOX_QWEN3_TOKENIZER)");
    std::string tokenizer_json;
    app.add_option(
        "--tokenizer-json", tokenizer_json,
        "the real tokenizer.json for --tokenizer llama3|llama2|gemma3 and --arch gpt_oss / "
        "bert / xlm-roberta / nomic-bert (tokenizer_config.json, and for xlm-roberta "
        "sentencepiece.bpe.model, are read from beside it)");
    app.add_flag("--embedding-eos", embedding_eos,
                 "post-processor appends <|endoftext|> (Qwen3-Embedding)");
    app.add_option("--shards", shards, "number of safetensors shards")->check(CLI::PositiveNumber);
    app.add_flag("--prefix-model", prefix_model, "name tensors model.* (lm_head stays unprefixed)");
    app.add_option("--seed", seed, "PRNG seed");
    std::string defect_help = "write a fixture that must be refused:";
    std::vector<std::string> all_defects = mkfixture::defect_names();
    for (const std::string& d : all_defects) defect_help += " " + d;
    defect_help += "; --format float:";
    for (const std::string& d : mkfixture::float_defect_names()) {
        defect_help += " " + d;
        all_defects.push_back(d);
    }
    defect_help += "; --format gptq|awq|compressed-tensors:";
    for (const std::string& d : mkfixture::prequant_defect_names()) {
        defect_help += " " + d;
        all_defects.push_back(d);
    }
    app.add_option("--defect", defect, defect_help)->check(CLI::IsMember(all_defects));
    app.add_flag("--corners", corners, "fp16 corner cases in the first layer's groups");
    app.add_flag("--no-pooling", no_pooling, "no modules.json / 1_Pooling");
    app.add_flag("--untied", untied, "tie_word_embeddings false and an lm_head.weight");
    app.add_flag("--tied", tied_flag,
                 "llama/mistral/phi3: tie_word_embeddings true and no lm_head.weight");
    app.add_flag("--attention-bias", attention_bias,
                 "llama/mistral: q/k/v projection biases (attention_bias true)");
    app.add_option("--rope-scaling", rope_scaling,
                   "llama/mistral: none | llama3 (default: llama3 for llama, none for mistral); "
                   "phi3: none (default) | longrope; olmo3: none (default) | yarn (Olmo-3-7B's "
                   "rope_scaling)")
        ->check(CLI::IsMember({"none", "llama3", "longrope", "yarn"}));
    double partial_rotary_factor = 0.0;
    app.add_option("--partial-rotary-factor", partial_rotary_factor,
                   "phi3: config.json partial_rotary_factor (Phi-4-mini: 0.75); the longrope lists "
                   "then have int(f * hidden) // heads / 2 entries")
        ->check(CLI::Range(0.0, 1.0));
    app.add_flag("--force", force, "replace an existing fixture in OUT_DIR");
    std::vector<std::string> extra_tensors;
    app.add_option("--extra-tensor", extra_tensors,
                   "NAME:I64 or NAME:F32, repeatable: a [1, 16] tensor holding 0..15 appended to "
                   "model.safetensors (a non-parameter buffer older transformers saved, e.g. "
                   "embeddings.position_ids:I64, or any stray tensor)")
        ->allow_extra_args(false);
    app.add_option("--format", format,
                   "mcq (default) | mlx (mlx-lm affine layout) | float (no quantization) | gptq | "
                   "awq | compressed-tensors (integer zero point, docs/formats.md §5) | mxfp4 | "
                   "nvfp4 (mlx-lm's FP4 modes, docs/formats.md §2.1) | modelopt-nvfp4 | ct-nvfp4 | "
                   "ct-mxfp4 (ModelOpt / compressed-tensors FP4, docs/formats.md §2.2) | fp8 (E4M3 "
                   "with block scales, docs/formats.md §6)")
        ->check(CLI::IsMember({"mcq", "mlx", "float", "gptq", "awq", "compressed-tensors", "mxfp4",
                               "nvfp4", "modelopt-nvfp4", "ct-nvfp4", "ct-mxfp4", "fp8"}));
    mkfixture::PrequantOptions pq;
    app.add_option("--bits", pq.bits,
                   "gptq: 2|3|4|8, awq: 4, compressed-tensors: 2..8 (default 4)");
    app.add_option("--group", pq.group,
                   "gptq/awq/compressed-tensors group size, -1 = per channel "
                   "(default 32)");
    bool sym_flag = false, asym_flag = false;
    app.add_flag("--sym", sym_flag,
                 "symmetric: z = 2^(bits-1) (default for gptq, compressed-tensors)");
    app.add_flag("--asym", asym_flag, "asymmetric zero points (awq always)");
    app.add_option("--checkpoint-format", pq.checkpoint_format,
                   "gptq: gptq (v1, stores z-1; default) | gptq_v2 (stores z)")
        ->check(CLI::IsMember({"gptq", "gptq_v2"}));
    app.add_option(
           "--desc-act", pq.desc_act,
           "gptq: none (default, desc_act false) | trivial (desc_act true, g_idx k/group) | "
           "blocks (g_idx constant per 32-block, groups out of order: exact) | actorder "
           "(g_idx splits every 32-block: must be refused)")
        ->check(CLI::IsMember({"none", "trivial", "blocks", "actorder"}));
    app.add_option(
           "--awq-version", pq.awq_version,
           "awq: gemm (default; [in, out/8], nibble order 0 2 4 6 1 3 5 7) | gemv ([out, in/8])")
        ->check(CLI::IsMember({"gemm", "gemv"}));
    app.add_option("--ct-format", pq.ct_format,
                   "compressed-tensors: pack-quantized (default) | int-quantized (int8 weight)")
        ->check(CLI::IsMember({"pack-quantized", "int-quantized"}));
    mkfixture::FloatOptions float_options;
    app.add_option("--dtype", float_options.dtype, "float: bf16 (default) | f16 | f32")
        ->check(CLI::IsMember({"bf16", "f16", "f32"}));
    app.add_option(
           "--recipe", recipe,
           "mlx: uniform4 | mixed_3_4 | mixed_4_5 | mixed_4_6 | dynamic_4_5 | uniform4_float_down0")
        ->check(CLI::IsMember(mkfixture::mlx_recipe_names()));
    app.add_option("--scale-dtype", mlx.scale_dtype,
                   "mlx: bf16 (default) | f16 | f32; compressed-tensors: bf16 (default) | f16; "
                   "gptq/awq: f16")
        ->check(CLI::IsMember({"bf16", "f16", "f32"}));
    app.add_option("--negative-scales", mlx.negative_scales,
                   "mlx: which groups get a negative scale: half (default, as MLX) | none | all")
        ->check(CLI::IsMember({"half", "none", "all"}));
    app.add_flag("--inexact-scales", mlx.inexact_scales,
                 "mlx: group 0 of model.layers.0.self_attn.q_proj gets a scale fp16 cannot hold");
    app.add_option("--fp4-bad-scale", mlx.fp4_bad_scale,
                   "FP4 formats: scale byte 0 of model.layers.0.self_attn.q_proj is refused: nan "
                   "(E8M0 0xff, E4M3 0x7f) | negative (E4M3 0xb8, NVFP4 only)")
        ->check(CLI::IsMember({"nan", "negative"}));
    mkfixture::NvidiaFp4Options nv;
    app.add_flag("--fp4-bad-shape", nv.bad_shape,
                 "modelopt-nvfp4/ct-*: model.layers.0.self_attn.q_proj's weight_scale has one "
                 "group column too few");
    app.add_flag("--fp4-ffn-scale-one", nv.ffn_scale_one,
                 "modelopt-nvfp4/ct-nvfp4: every mlp.* module's per-tensor factor is exactly 1");
    mkfixture::Fp8Options fp8;
    app.add_option(
           "--fp8-scales", fp8.scales,
           "--format fp8: bf16 (default, as Qwen's -FP8) | f16 | pow2 (F32 powers of two) | "
           "f32-short (F32, every product exact in F32) | f32 (F32 as DeepSeek-V3: "
           "products F32 cannot hold)")
        ->check(CLI::IsMember({"bf16", "f16", "pow2", "f32-short", "f32"}));
    std::vector<int64_t> fp8_block;
    app.add_option("--fp8-block", fp8_block, "--format fp8: weight_block_size ROWS COLS (128 128)")
        ->expected(2);
    app.add_option("--fp8-layout", fp8.layout,
                   "--format fp8: fp8 (default: weight_scale_inv, quant_method fp8) | ct-channel | "
                   "ct-block (compressed-tensors float-quantized: weight_scale per output row or "
                   "per --fp8-block block) | modelopt (hf_quant_config.json FP8, one scale per "
                   "weight)")
        ->check(CLI::IsMember({"fp8", "ct-channel", "ct-block", "modelopt"}));
    app.add_option("--fp8-defect", fp8.defect,
                   "--format fp8, model.layers.0.self_attn.q_proj refused: nan (a code 0x7F) | "
                   "scale-shape (one block row too many) | no-scale (no weight_scale_inv)")
        ->check(CLI::IsMember({"nan", "scale-shape", "no-scale"}));
    CLI11_PARSE(app, argc, argv);

    try {
        mkfixture::check_extra_tensor_specs(extra_tensors);
        if (mkfixture::is_encoder_arch(arch)) {
            if (preset != "tiny")
                throw std::runtime_error("--arch " + arch + ": --preset tiny only");
            for (const char* option :
                 {"--tokenizer", "--defect", "--shards", "--recipe", "--bits", "--hidden",
                  "--scale-dtype", "--corners", "--untied", "--tied", "--prefix-model"})
                if (app.count(option))
                    throw std::runtime_error(std::string(option) + " does not apply to --arch " +
                                             arch);
            if (app.count("--dtype") && format != "float")
                throw std::runtime_error("--dtype needs --format float");
            const fs::path out(out_dir);
            const bool existed = prepare_output_dir(out_dir, force, false);
            mkfixture::EncoderOptions encoder{.arch = arch,
                                              .format = format,
                                              .dtype = float_options.dtype,
                                              .pooling = encoder_pooling,
                                              .reranker = encoder_reranker,
                                              .tokenizer_json = tokenizer_json,
                                              .seed = seed};
            try {
                const std::string summary = mkfixture::write_encoder_fixture(out, encoder);
                mkfixture::append_extra_tensors(out, extra_tensors);
                std::cout << "rebox-mkfixture: wrote " << out_dir << " (tiny, " << summary << ")\n";
            } catch (...) {
                remove_previous_fixture(out);  // no half-written fixture left behind
                if (!existed && fs::is_empty(out)) fs::remove(out);
                throw;
            }
            return 0;
        }
        if (!encoder_pooling.empty())
            throw std::runtime_error("--pooling needs --arch bert|xlm-roberta|nomic-bert");
        if (encoder_reranker && arch != "modernbert")
            throw std::runtime_error("--reranker needs --arch bert|xlm-roberta|modernbert");
        if (arch == "gpt_oss" || !gpt_oss_defect.empty()) {
            // openai's own checkpoint layout; none of the other formats' options apply.
            if (arch != "gpt_oss")
                throw std::runtime_error("--gpt-oss-defect needs --arch gpt_oss");
            if (preset != "tiny") throw std::runtime_error("--arch gpt_oss: --preset tiny only");
            if (app.count("--format") && format != "mxfp4")
                throw std::runtime_error(
                    "--arch gpt_oss writes openai's MXFP4 checkpoint (--format "
                    "mxfp4 or none), not --format " +
                    format);
            for (const char* option : {"--tokenizer", "--defect", "--shards", "--recipe", "--bits"})
                if (app.count(option))
                    throw std::runtime_error(std::string(option) +
                                             " does not apply to --arch gpt_oss");
            const fs::path out(out_dir);
            prepare_output_dir(out_dir, force, true);
            const int count =
                mkfixture::write_gpt_oss_fixture(out, {tokenizer_json, gpt_oss_defect, seed});
            mkfixture::append_extra_tensors(out, extra_tensors);
            std::cout << "rebox-mkfixture: wrote " << out_dir << " (tiny, gpt_oss, vocab 201088, "
                      << count << " stored tensors)\n";
            return 0;
        }
        if ((gemma4_moe || gemma4_e2b) && arch != "gemma4")
            throw std::runtime_error(std::string(gemma4_moe ? "--gemma4-moe" : "--gemma4-e2b") +
                                     " needs --arch gemma4");
        if (qwen35_vision && arch != "qwen35" && arch != "qwen35moe")
            throw std::runtime_error("--qwen35-vision needs --arch qwen35 or qwen35moe");
        if (arch == "qwen35" || arch == "qwen35moe" || arch == "qwen3next" ||
            !qwen35_defect.empty() || arch == "gemma4" ||
            !gemma4_defect.empty()) {  // the fixtures with writers of their own
            for (const auto& [defect, owner] :
                 {std::pair{&qwen35_defect, "qwen35"}, std::pair{&gemma4_defect, "gemma4"}})
                if (!defect->empty() && arch != owner &&
                    !((arch == "qwen35moe" || arch == "qwen3next") && defect == &qwen35_defect))
                    throw std::runtime_error(std::string("--") + owner + "-defect needs --arch " +
                                             owner);
            if (preset != "tiny")
                throw std::runtime_error("--arch " + arch + ": --preset tiny only");
            if (arch == "qwen35" || arch == "qwen35moe" || arch == "qwen3next") {
                refuse_decoder_options(app, "--arch " + arch, false, false, true);
            } else {  // gemma4: float (BF16), mcq, mlx (with --recipe), gptq or awq
                refuse_decoder_options(app, "--arch gemma4", false, true);
                if (app.count("--recipe") && format != "mlx")
                    throw std::runtime_error("--recipe needs --format mlx");
            }
            const fs::path out(out_dir);
            prepare_output_dir(out_dir, force, true);
            const mkfixture::Gemma4Options gemma4{
                .defect = gemma4_defect,
                .moe = gemma4_moe,
                .e2b = gemma4_e2b,
                .format = app.count("--format") ? format : "float",
                .recipe = recipe,
                .mlx_unquantized = gemma4_mlx_unquantized,
                .seed = seed};
            const std::string summary =
                arch != "gemma4"
                    ? mkfixture::write_qwen35_fixture(
                          out, {qwen35_defect, seed, arch == "qwen35moe" || arch == "qwen3next",
                                arch == "qwen3next", app.count("--format") ? format : "float",
                                qwen35_vision, moe_options.hidden ? moe_options.hidden : 64})
                    : mkfixture::write_gemma4_fixture(out, gemma4);
            mkfixture::append_extra_tensors(out, extra_tensors);
            std::cout << "rebox-mkfixture: wrote " << out_dir << " (tiny, " << summary << ")\n";
            return 0;
        }
        if (arch == "nemotron_h" || arch == "nemotron_h_moe" || !nemotron_h_defect.empty() ||
            nemotron_h_latent || nemotron_h_mtp) {
            if (arch != "nemotron_h" && arch != "nemotron_h_moe")
                throw std::runtime_error("--nemotron-h-defect needs --arch nemotron_h");
            if (preset != "tiny")
                throw std::runtime_error("--arch " + arch + ": --preset tiny only");
            refuse_decoder_options(app, "--arch " + arch, false);
            const fs::path out(out_dir);
            prepare_output_dir(out_dir, force, true);
            const std::string summary = mkfixture::write_nemotron_h_fixture(
                out, {nemotron_h_defect, seed, app.count("--format") ? format : "float",
                      arch == "nemotron_h_moe", nemotron_h_latent, nemotron_h_mtp});
            mkfixture::append_extra_tensors(out, extra_tensors);
            std::cout << "rebox-mkfixture: wrote " << out_dir << " (tiny, " << summary << ")\n";
            return 0;
        }
        if (arch == "glm4moe" || !glm4moe_defect.empty() || glm4moe_trunk_only) {
            if (arch != "glm4moe")
                throw std::runtime_error("--glm4moe-defect / --trunk-only need --arch glm4moe");
            if (preset != "tiny") throw std::runtime_error("--arch glm4moe: --preset tiny only");
            refuse_decoder_options(app, "--arch glm4moe", false);
            const mkfixture::Glm4MoeOptions options{
                .format = app.count("--format") ? format : "float",
                .trunk_only = glm4moe_trunk_only,
                .defect = glm4moe_defect,
                .ffn_scale_one = nv.ffn_scale_one,
                .seed = seed};
            const fs::path out(out_dir);
            prepare_output_dir(out_dir, force, true);
            const std::string summary = mkfixture::write_glm4moe_fixture(out, options);
            mkfixture::append_extra_tensors(out, extra_tensors);
            std::cout << "rebox-mkfixture: wrote " << out_dir << " (tiny, " << summary << ")\n";
            return 0;
        }
        if (arch == "deepseek2" || arch == "glm4_moe_lite" || deepseek2_no_q_lora ||
            deepseek2_nvfp4_kv_b) {
            if (deepseek2_nvfp4_kv_b && arch != "deepseek2")
                throw std::runtime_error("--nvfp4-kv-b needs --arch deepseek2");
            if (deepseek2_no_q_lora && arch != "deepseek2")
                throw std::runtime_error("--no-q-lora needs --arch deepseek2");
            if (preset != "tiny")
                throw std::runtime_error("--arch " + arch + ": --preset tiny only");
            refuse_decoder_options(app, "--arch " + arch, false);
            const mkfixture::Deepseek2Options options{
                .format = app.count("--format") ? format : "float",
                .no_q_lora = deepseek2_no_q_lora,
                .glm_lite = arch == "glm4_moe_lite",
                .ffn_scale_one = nv.ffn_scale_one,
                .nvfp4_kv_b = deepseek2_nvfp4_kv_b,
                .seed = seed};
            const fs::path out(out_dir);
            prepare_output_dir(out_dir, force, true);
            const std::string summary = mkfixture::write_deepseek2_fixture(out, options);
            mkfixture::append_extra_tensors(out, extra_tensors);
            std::cout << "rebox-mkfixture: wrote " << out_dir << " (tiny, " << summary << ")\n";
            return 0;
        }
        if (arch == "modernbert") {
            // An encoder in float32 (the default), mcq-v1 or MLX; the decoder options do not
            // apply.
            if (preset != "tiny") throw std::runtime_error("--arch modernbert: --preset tiny only");
            refuse_decoder_options(app, "--arch modernbert", false);
            const mkfixture::ModernBertOptions options{
                .format = app.count("--format") ? format : "float",
                .reranker = encoder_reranker,
                .seed = seed};
            if (options.format != "float" && options.format != "mcq" && options.format != "mlx")
                throw std::runtime_error("--arch modernbert: --format float, mcq or mlx, not " +
                                         options.format);
            const fs::path out(out_dir);
            prepare_output_dir(out_dir, force, true);
            const std::string summary = mkfixture::write_modernbert_fixture(out, options);
            mkfixture::append_extra_tensors(out, extra_tensors);
            std::cout << "rebox-mkfixture: wrote " << out_dir << " (tiny, " << summary << ")\n";
            return 0;
        }
        const bool is_fp8 = format == "fp8";
        if (!is_fp8 && (app.count("--fp8-scales") || app.count("--fp8-block") ||
                        app.count("--fp8-defect") || app.count("--fp8-layout")))
            throw std::runtime_error(
                "--fp8-scales/--fp8-block/--fp8-defect/--fp8-layout need --format fp8");
        if (fp8_block.size() == 2) fp8.block_rows = fp8_block[0], fp8.block_cols = fp8_block[1];
        if (fp8.block_rows < 1 || fp8.block_cols < 1)
            throw std::runtime_error("--fp8-block: two positive sizes");
        const bool is_nv =
            format == "modelopt-nvfp4" || format == "ct-nvfp4" || format == "ct-mxfp4";
        if (is_nv) {
            if (app.count("--recipe") || app.count("--scale-dtype") ||
                app.count("--negative-scales") || mlx.inexact_scales)
                throw std::runtime_error("--format " + format + ": no MLX options");
            if (mlx.fp4_bad_scale == "negative" && format == "ct-mxfp4")
                throw std::runtime_error("--fp4-bad-scale negative: E8M0 has no sign (nvfp4)");
            nv.format = format;
            nv.bad_scale = mlx.fp4_bad_scale;
            mlx.fp4_bad_scale.clear();
        } else if (nv.bad_shape || nv.ffn_scale_one) {
            throw std::runtime_error(
                "--fp4-bad-shape/--fp4-ffn-scale-one need --format "
                "modelopt-nvfp4|ct-nvfp4|ct-mxfp4");
        }
        const bool is_fp4 = format == "mxfp4" || format == "nvfp4";
        if (is_fp4) {
            if (app.count("--recipe") && recipe != "uniform4")
                throw std::runtime_error("--format " + format + ": only --recipe uniform4");
            if (mlx.fp4_bad_scale == "negative" && format == "mxfp4")
                throw std::runtime_error("--fp4-bad-scale negative: E8M0 has no sign (nvfp4)");
            mlx.fp4_mode = format;
        } else if (!mlx.fp4_bad_scale.empty()) {
            throw std::runtime_error("--fp4-bad-scale needs an FP4 --format");
        }
        const bool is_mlx = format == "mlx" || is_fp4;
        const bool is_pq = format == "gptq" || format == "awq" || format == "compressed-tensors";
        const bool pq_defect = std::find(mkfixture::prequant_defect_names().begin(),
                                         mkfixture::prequant_defect_names().end(),
                                         defect) != mkfixture::prequant_defect_names().end();
        if (!is_pq && (app.count("--bits") || app.count("--group") || sym_flag || asym_flag ||
                       app.count("--checkpoint-format") || app.count("--desc-act") ||
                       app.count("--ct-format") || app.count("--awq-version") || pq_defect))
            throw std::runtime_error(
                "--bits/--group/--sym/--asym/--checkpoint-format/--desc-act/--ct-format and "
                "--defect " +
                (pq_defect ? defect : std::string("(these)")) +
                " need --format gptq|awq|compressed-tensors");
        if (is_pq) {
            if (sym_flag && asym_flag)
                throw std::runtime_error("--sym and --asym exclude each other");
            if (corners || (!defect.empty() && !pq_defect))
                throw std::runtime_error("--format " + format +
                                         ": --corners and the mcq/float "
                                         "defects do not apply");
            pq.format = format;
            pq.sym = asym_flag ? false : sym_flag ? true : format != "awq";
            pq.scale_dtype = app.count("--scale-dtype")       ? mlx.scale_dtype
                             : format == "compressed-tensors" ? "bf16"
                                                              : "f16";
            if (pq.scale_dtype == "f32")
                throw std::runtime_error("--scale-dtype f32: " + format +
                                         " stores f16 or bf16 scales");
            pq.defect = defect;
            if (defect == "bits-not-allowed") {
                if (format == "gptq") pq.bits = 5;  // a consistent 5-bit layout GPTQ never writes
                if (format == "compressed-tensors") pq.bits = 16;  // over pack_to_int32's 8
            }
            defect.clear();                                  // not a defect of the mcq layout
            mkfixture::check_prequant_options(pq, nullptr);  // before anything is written
        }
        if (!is_mlx && !is_pq &&
            (app.count("--recipe") || app.count("--scale-dtype") ||
             app.count("--negative-scales") || mlx.inexact_scales))
            throw std::runtime_error(
                "--recipe/--scale-dtype/--negative-scales/--inexact-scales "
                "need --format mlx");
        if ((is_mlx || is_nv || is_fp8) && (!defect.empty() || corners))
            throw std::runtime_error("--defect and --corners apply to --format mcq only");
        if (mlx.inexact_scales && mlx.scale_dtype == "f16")
            throw std::runtime_error(
                "--inexact-scales needs --scale-dtype bf16 or f32 (every f16 "
                "scale is fp16-exact)");
        const bool is_float = format == "float";
        const bool float_defect = std::find(mkfixture::float_defect_names().begin(),
                                            mkfixture::float_defect_names().end(),
                                            defect) != mkfixture::float_defect_names().end();
        if (is_float ? (corners || (!defect.empty() && !float_defect)) : float_defect)
            throw std::runtime_error("--defect " + defect +
                                     (is_float ? " and --corners apply to --format mcq only"
                                               : " applies to --format float only"));
        if (!is_float && app.count("--dtype"))
            throw std::runtime_error("--dtype needs --format float");
        if (is_float) {
            float_options.defect = defect;
            defect.clear();  // not a defect of the quantized layout
        }
        if (is_mlx || is_float || is_pq || is_nv)
            prefix_model = true;  // HF checkpoints use the names model.*
        const bool llama_family =
            arch == "llama" || arch == "mistral" || arch == "mixtral" || arch == "phi3";
        const bool moe = arch == "qwen3_moe" || arch == "qwen2_moe" || arch == "mixtral";
        if (!moe && (app.count("--experts") || app.count("--experts-used") ||
                     app.count("--moe-ffn") || app.count("--moe-defect")))
            throw std::runtime_error(
                "--experts/--experts-used/--moe-ffn/--moe-defect need an MoE --arch");
        if (is_float && moe_options.moe_defect == "expert-bits")
            throw std::runtime_error("--moe-defect expert-bits needs --format mcq");
        if ((!llama_family && tied_flag) ||
            (!llama_family && arch != "olmo3" && !rope_scaling.empty()))
            throw std::runtime_error(
                "--tied and --rope-scaling apply to --arch llama/mistral/phi3 (--rope-scaling "
                "yarn: olmo3)");
        if (!rope_scaling.empty() && rope_scaling != "none" &&
            ((rope_scaling == "longrope") != (arch == "phi3") ||
             (rope_scaling == "yarn") != (arch == "olmo3")))
            throw std::runtime_error("--rope-scaling " + rope_scaling +
                                     " does not apply to --arch " + arch +
                                     " (llama3: llama/mistral, longrope: phi3)");
        if (partial_rotary_factor > 0 && arch != "phi3")
            throw std::runtime_error("--partial-rotary-factor applies to --arch phi3");
        if (llama_family && untied)
            throw std::runtime_error("--arch " + arch + " is untied by default (--tied ties it)");
        if (llama_family) untied = !tied_flag;
        if (arch == "qwen2_moe") untied = true;  // llama.cpp's qwen2moe loader needs output.weight
        // As Seed-OSS-36B, Mistral Small 3 and Apertus-8B (whose loader needs output.weight).
        if (arch == "seed_oss" || arch == "mistral3" || arch == "apertus") untied = true;
        if (arch == "olmo2" || arch == "olmo3") untied = true;  // the olmo2 loader never ties
        if ((arch == "gemma" || arch == "gemma2") && untied)
            throw std::runtime_error("--arch " + arch +
                                     " is always tied (llama.cpp has no output "
                                     "tensor for it)");
        if (rope_scaling.empty()) rope_scaling = arch == "llama" ? "llama3" : "none";
        if (tokenizer.empty()) tokenizer = preset == "tiny" ? "small" : "qwen3";

        if (qwen3_tokenizer.empty())
            if (const char* env = std::getenv("REBOX_QWEN3_TOKENIZER")) qwen3_tokenizer = env;
        const fs::path out(out_dir);
        prepare_output_dir(out_dir, force, false);

        mkfixture::TokenizerOptions tok{tokenizer,
                                        tokenizer == "qwen3" ? qwen3_tokenizer : tokenizer_json,
                                        embedding_eos, defect == "no-merges"};
        int64_t token_count = mkfixture::write_tokenizer_files(out, tok);
        // Pixtral's mmproj takes the [IMG_BREAK] row of the text embedding.
        if (arch == "mistral3" && multimodal && token_count > 0)
            token_count = mkfixture::add_img_break_token(out, token_count);

        mkfixture::PlanOptions options;
        options.preset = preset;
        options.arch = arch;
        options.vocab = token_count > 0 ? token_count : 512;
        options.prefix_model = prefix_model;
        options.untied = untied;
        options.attention_bias = attention_bias;
        options.corners = corners;
        options.defect = defect;
        options.experts = moe_options.experts;
        options.hidden = moe_options.hidden;
        options.experts_used = moe_options.experts_used;
        options.moe_ffn = moe_options.moe_ffn;
        options.moe_defect = moe_options.moe_defect;
        options.stacked_experts = is_mlx;  // mlx-lm stores experts as switch_mlp [E, out, in]
        options.multimodal = multimodal;
        options.vl_split = vl_split;
        options.vl_temporal = vl_temporal;
        options.vl_merger_width = vl_merger_width;
        mkfixture::ModelPlan plan = mkfixture::make_plan(options);
        if (is_mlx) mlx.overrides = mkfixture::apply_mlx_recipe(plan, recipe);
        if (mlx_vlm_quantized_tower && !mlx_vlm)
            throw std::runtime_error("--mlx-vlm-quantized-tower needs --mlx-vlm");
        if (mlx_vlm) {
            if (!is_mlx || (arch != "qwen2_vl" && arch != "qwen2_5_vl" && arch != "qwen3_vl"))
                throw std::runtime_error(
                    "--mlx-vlm needs --format mlx and --arch qwen2_vl, qwen2_5_vl or qwen3_vl");
            mkfixture::apply_mlx_vlm_layout(plan, mlx.overrides, mlx_vlm_quantized_tower);
        }
        if (is_fp4) {  // every quantized module in the mode, embeddings and routers included
            mlx.overrides.clear();
            for (mkfixture::PlanUnit& unit : plan.units)
                if (unit.quantized && !unit.quant.mlx_float) {
                    unit.quant.bits = unit.quant.meta_bits = 4;
                    unit.quant.group = unit.quant.meta_group = mkfixture::fp4_mode_group(format);
                }
        }
        if (is_pq) mkfixture::check_prequant_options(pq, &plan);

        int64_t bos_id = -1, eos_id = -1;
        if (token_count > 0) {
            bos_id = mkfixture::added_token_id_in_file(out / "tokenizer.json", "<|endoftext|>");
            eos_id = mkfixture::added_token_id_in_file(out / "tokenizer.json", "<|im_end|>");
        }
        mkfixture::write_config_json(out, plan.dims, !untied, bos_id, eos_id, arch, rope_scaling,
                                     attention_bias, partial_rotary_factor, multimodal, vl_split,
                                     vl_temporal, vl_merger_width);
        if (moe_options.moe_defect == "experts-count")
            mkfixture::set_config_number(out,
                                         arch == "mixtral" ? "num_local_experts" : "num_experts",
                                         plan.dims.experts - 1);
        if (is_mlx) mkfixture::add_mlx_quantization(out, mlx);
        if (is_pq) mkfixture::add_prequant_quantization(out, pq);
        if (is_nv) mkfixture::add_nvidia_fp4_quantization(out, nv);
        if (is_fp8) mkfixture::add_fp8_quantization(out, fp8);
        if (!no_pooling) mkfixture::write_pooling_files(out, plan.dims.hidden);
        if (is_float) mkfixture::set_float_torch_dtype(out, float_options.dtype);
        if (is_nv)
            mkfixture::write_nvidia_fp4_model_files(out, plan, shards, seed, nv);
        else if (is_fp8)
            mkfixture::write_fp8_model_files(out, plan, shards, seed, fp8);
        else if (is_mlx)
            mkfixture::write_mlx_model_files(out, plan, shards, seed, mlx);
        else if (is_pq)
            mkfixture::write_prequant_model_files(out, plan, shards, seed, pq);
        else if (is_float)
            mkfixture::write_float_model_files(out, plan, shards, seed, float_options);
        else
            mkfixture::write_model_files(out, plan, shards, seed);
        mkfixture::append_extra_tensors(out, extra_tensors);
        std::cout << "rebox-mkfixture: wrote " << out_dir << " (" << preset << ", vocab "
                  << plan.dims.vocab << ", "
                  << (is_nv || is_fp8 ? format + ", "
                      : is_fp4        ? "mlx " + format + ", "
                      : is_mlx        ? "mlx " + recipe + ", "
                      : is_float      ? "float " + float_options.dtype + ", "
                      : is_pq         ? format + " " + std::to_string(pq.bits) + "-bit, "
                                      : std::string())
                  << plan.units.size() << " stored weights)\n";
    } catch (const std::exception& e) {
        std::cerr << "rebox-mkfixture: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
