// rebox check FILE.gguf [--mmproj MMPROJ.gguf] [--for llama.cpp|ollama] [--json]: will this file
// load, without running a loader? One line per finding or warning naming the key or tensor; exit 0
// clean (warnings allowed), 1 findings, 2 unreadable (the format reader refuses it).
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "format/gguf_shards.hpp"
#include "gguf_tool_commands.hpp"
#include "gguf_tools/gguf_check.hpp"
#include "rebox/error.hpp"

namespace rebox::cli {
namespace {

struct CheckArgs {
    std::string file;
    std::optional<std::string> mmproj;
    std::string target = "llama.cpp";
    bool json = false;
};

const char* severity_name(CheckSeverity severity) {
    return severity == CheckSeverity::finding ? "FINDING" : "WARNING";
}

void print_json(const CheckArgs& args, const CheckReport* report, const std::string& unreadable) {
    nlohmann::json out = {{"file", args.file}, {"target", args.target}};
    if (report == nullptr) {
        out["status"] = "unreadable";
        out["error"] = unreadable;
    } else {
        out["status"] = report->count(CheckSeverity::finding) ? "findings" : "ok";
        out["files"] = nlohmann::json::array();
        for (const auto& f : report->files) out["files"].push_back(f.string());
        out["tensors"] = report->tensor_count;
        out["findings"] = nlohmann::json::array();
        for (const CheckFinding& f : report->findings)
            out["findings"].push_back(
                {{"severity", f.severity == CheckSeverity::finding ? "finding" : "warning"},
                 {"file", f.file},
                 {"subject", f.subject},
                 {"message", f.message}});
    }
    std::puts(out.dump(2).c_str());
}

int run_check(const CheckArgs& args) {
    const CheckTarget target =
        args.target == "ollama" ? CheckTarget::ollama : CheckTarget::llama_cpp;
    CheckReport report;
    try {
        // The pair: --mmproj, else mmproj-NAME.gguf beside NAME.gguf when there is one.
        std::filesystem::path mmproj =
            args.mmproj ? std::filesystem::path(*args.mmproj) : mmproj_path_beside(args.file);
        if (!args.mmproj && !std::filesystem::exists(mmproj)) mmproj.clear();
        report = check_gguf(args.file, target, mmproj);
    } catch (const Error& e) {
        if (args.json) print_json(args, nullptr, e.what());
        std::fprintf(stderr, "rebox: unreadable: %s\n", e.what());
        return 2;
    }
    const size_t findings = report.count(CheckSeverity::finding);
    const size_t warnings = report.count(CheckSeverity::warning);
    if (args.json) {
        print_json(args, &report, "");
        return findings ? 1 : 0;
    }
    for (const CheckFinding& f : report.findings)
        std::printf("%s: %s: %s %s\n", severity_name(f.severity), f.file.c_str(), f.subject.c_str(),
                    f.message.c_str());
    std::printf("%s: %zu file(s), %zu tensors, for %s: %zu finding(s), %zu warning(s)\n",
                findings ? "FAILED" : "OK", report.files.size(), report.tensor_count,
                args.target.c_str(), findings, warnings);
    return findings ? 1 : 0;
}

}  // namespace

ToolCommand add_check_command(CLI::App& app) {
    auto args = std::make_shared<CheckArgs>();
    CLI::App* cmd = app.add_subcommand(
        "check", "Tell whether a GGUF will load in llama.cpp (or Ollama) without running it");
    cmd->footer(
        "Applies the GGUF format rules, then llama.cpp's loader rules (key types, required "
        "keys, tensor set and shapes for the architectures rebox knows, tokenizer consistency, "
        "split sets read from the first shard); --for ollama adds Ollama's reader rules. "
        "FINDING lines are what the target refuses or misreads, WARNING lines what it only "
        "warns about (docs/check.md).\n"
        "Exit codes: 0 no findings (warnings allowed), 1 findings, 2 unreadable file.");
    cmd->add_option("FILE", args->file, "GGUF file (the first shard of a split set)")->required();
    cmd->add_option("--mmproj", args->mmproj,
                    "the projector file of this text model (default: mmproj-NAME.gguf beside "
                    "it); checked as mtmd checks the pair");
    cmd->add_option("--for", args->target, "llama.cpp (default) or ollama")
        ->check(CLI::IsMember({"llama.cpp", "ollama"}));
    cmd->add_flag("--json", args->json, "print one JSON object");
    return {cmd, [args] { return run_check(*args); }};
}

}  // namespace rebox::cli
