// rebox check's driver: opens the file (and the shards split.count names), runs the rule groups
// of check_context.hpp in order and collects their findings.
#include "gguf_tools/gguf_check.hpp"

#include "gguf_tools/check_context.hpp"

namespace rebox {
namespace check_detail {

std::string CheckContext::arch() const {
    const GgufValue* value = find("general.architecture");
    const std::string* name = value != nullptr ? value->as_string() : nullptr;
    return name != nullptr ? *name : std::string();
}

const CheckContext::Tensor* CheckContext::find_tensor(std::string_view name) const {
    for (const Tensor& tensor : tensors)
        if (tensor.info->name == name) return &tensor;
    return nullptr;
}

void CheckContext::finding(const std::string& subject, const std::string& message, size_t shard) {
    report.findings.push_back(
        {CheckSeverity::finding, shards.at(shard)->display_name(), subject, message});
}

void CheckContext::warning(const std::string& subject, const std::string& message, size_t shard) {
    report.findings.push_back(
        {CheckSeverity::warning, shards.at(shard)->display_name(), subject, message});
}

}  // namespace check_detail

size_t CheckReport::count(CheckSeverity severity) const {
    size_t n = 0;
    for (const CheckFinding& f : findings) n += f.severity == severity ? 1 : 0;
    return n;
}

namespace {

// One file's rules: an mmproj (general.architecture clip) gets mtmd's, any other llama.cpp's.
void check_one(check_detail::CheckContext& ctx, const std::filesystem::path& file,
               CheckTarget target) {
    ctx.target = target;
    check_detail::check_split(ctx, file);
    check_detail::check_key_types(ctx);
    if (ctx.arch() == "clip") {
        check_detail::check_mmproj(ctx);
    } else {
        check_detail::check_required_keys(ctx);
        check_detail::check_tensor_set(ctx);
        check_detail::check_tokenizer(ctx);
        if (target == CheckTarget::ollama) check_detail::check_ollama(ctx, file);
    }
    for (const auto& shard : ctx.shards) ctx.report.files.emplace_back(shard->display_name());
    ctx.report.tensor_count = ctx.tensors.size();
}

}  // namespace

CheckReport check_gguf(const std::filesystem::path& file, CheckTarget target,
                       const std::filesystem::path& mmproj) {
    check_detail::CheckContext ctx;
    check_one(ctx, file, target);
    if (mmproj.empty()) return std::move(ctx.report);
    check_detail::CheckContext projector;
    check_one(projector, mmproj, target);
    check_detail::check_pair_width(ctx, projector);
    CheckReport& report = ctx.report;
    for (auto& f : projector.report.findings) report.findings.push_back(std::move(f));
    for (auto& f : projector.report.files) report.files.push_back(std::move(f));
    report.tensor_count += projector.report.tensor_count;
    return std::move(report);
}

}  // namespace rebox
