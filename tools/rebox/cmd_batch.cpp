// rebox batch: one model of a TSV manifest per array task (Kubernetes Indexed Job, Slurm array),
// with convert's exit code as the verdict and a report beside every output; or the summary of a
// whole run. Retries of a finished index are no-ops, so a pod may be restarted at any point.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <system_error>

#include "commands.hpp"
#include "convert_options.hpp"
#include "fleet/batch_index.hpp"
#include "fleet/batch_outputs.hpp"
#include "fleet/manifest.hpp"
#include "rebox/error.hpp"
#include "report_json.hpp"

namespace rebox::cli {
namespace {

namespace fs = std::filesystem;
using fleet::ManifestEntry;

const char* environment(const char* name) { return std::getenv(name); }

// Parses the options column of `entry` with convert's own option definitions into `args`.
// Returns the problem, empty when the column parsed.
std::string parse_options_column(const fleet::Manifest& manifest, const ManifestEntry& entry,
                                 ConvertArgs& args) {
    CLI::App options_app{"options column of " + manifest.path.string()};
    options_app.set_help_flag();  // --help in a manifest is an unknown option, not a request
    bool no_verify = false;
    add_model_convert_options(options_app, args, no_verify);
    std::vector<std::string> words(entry.options.rbegin(), entry.options.rend());  // CLI11 order
    try {
        options_app.parse(words);
    } catch (const CLI::ParseError& e) {
        return manifest.path.string() + ": line " + std::to_string(entry.line_number) +
               ": options column: " + e.what() +
               " (expected convert's per-model options: --outtype, --no-verify, -t, "
               "--tokenizer-pre, --name, --metadata, --split-max-size, --allow-lossless-fallback; "
               "batch sets "
               "-o, --json and --force itself)";
    }
    args.verify = !no_verify;
    return {};
}

int record_failure(const fleet::Manifest& manifest, uint64_t index, const ManifestEntry& entry,
                   const fs::path& out_dir, int exit_code, const std::string& message,
                   double seconds) {
    std::fprintf(stderr, "rebox: %s\n", message.c_str());
    write_json_file(fleet::report_path(out_dir, entry).string(),
                    fleet::failure_record(manifest, index, entry, exit_code, message, seconds));
    std::fprintf(stderr, "rebox batch: index %llu (%s, line %zu): exit %d, report %s\n",
                 static_cast<unsigned long long>(index), entry.name.c_str(), entry.line_number,
                 exit_code, fleet::report_path(out_dir, entry).c_str());
    return exit_code;
}

int convert_one(const BatchArgs& batch) {
    const fleet::BatchIndex index = fleet::resolve_batch_index(batch.index, environment);
    const fleet::Manifest manifest = fleet::read_manifest(batch.manifest);
    if (index.value >= manifest.entries.size()) {
        std::fprintf(stderr,
                     "rebox: %s: index %llu (from %s) is past the last model line (%zu lines: "
                     "indexes 0..%zu); nothing written (size the job's completions / the array "
                     "to the manifest)\n",
                     batch.manifest.c_str(), static_cast<unsigned long long>(index.value),
                     index.source.c_str(), manifest.entries.size(),
                     manifest.entries.empty() ? 0 : manifest.entries.size() - 1);
        return fleet::kExitNoSuchLine;
    }
    const ManifestEntry& entry = manifest.entries[index.value];
    const fs::path out_dir = *batch.out_dir;
    std::error_code ec;
    fs::create_directories(out_dir, ec);
    if (ec || !fs::is_directory(out_dir))
        throw Error(ExitClass::input, out_dir.string(), "",
                    "cannot create the output folder" + (ec ? ": " + ec.message() : ""),
                    "a writable folder (a PVC or a shared file system)");

    if (const fleet::IndexState done = fleet::index_state(out_dir, entry);
        done.verdict == fleet::Verdict::ok) {
        std::printf("rebox batch: index %llu (%s): already converted (%llu bytes), nothing to do\n",
                    static_cast<unsigned long long>(index.value), entry.name.c_str(),
                    static_cast<unsigned long long>(done.bytes));
        return 0;
    }
    // From here the report is absent until this run ends: a GGUF without a report is unfinished.
    // The old GGUF goes too, so a failure never leaves an earlier run's file beside its record.
    fs::remove(fleet::report_path(out_dir, entry), ec);
    fs::remove(fleet::gguf_path(out_dir, entry), ec);
    fs::remove(fleet::mmproj_path(out_dir, entry), ec);  // a projector an interrupted run left

    const auto start = std::chrono::steady_clock::now();
    const auto elapsed = [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    ConvertArgs args;
    if (const std::string problem = parse_options_column(manifest, entry, args); !problem.empty())
        return record_failure(manifest, index.value, entry, out_dir,
                              static_cast<int>(ExitClass::input), problem, elapsed());
    args.model_dir = entry.source_dir.string();
    args.output = fleet::gguf_path(out_dir, entry).string();
    args.json_report = fleet::report_path(out_dir, entry).string();
    args.force = true;  // an unreported GGUF of an interrupted run is replaced
    args.quiet = true;  // no progress line in a job log

    ConvertOutcome outcome;
    int exit_code = 0;
    std::string message;
    try {
        exit_code = run_convert(args, &outcome);
        message = outcome.failure_message;
    } catch (const Error& e) {
        exit_code = e.exit_code();
        message = e.what();
    } catch (const std::exception& e) {  // as main() maps it, but recorded
        exit_code = static_cast<int>(ExitClass::input);
        message = std::string("internal error: ") + e.what();
    }
    if (exit_code != 0)
        return record_failure(manifest, index.value, entry, out_dir, exit_code,
                              message.empty() ? "convert failed" : message, elapsed());
    std::printf("rebox batch: index %llu (%s): ok, %llu bytes in %.2f s, %s\n",
                static_cast<unsigned long long>(index.value), entry.name.c_str(),
                outcome.output_bytes, outcome.seconds, args.output.c_str());
    return 0;
}

int summarize(const BatchArgs& batch) {
    const fleet::Manifest manifest = fleet::read_manifest(batch.manifest);
    const fs::path out_dir = *batch.summary_dir;
    size_t ok = 0, failed = 0, missing = 0;
    for (size_t i = 0; i < manifest.entries.size(); ++i) {
        const ManifestEntry& entry = manifest.entries[i];
        const fleet::IndexState state = fleet::index_state(out_dir, entry);
        std::string verdict = fleet::verdict_name(state.verdict);
        if (state.verdict == fleet::Verdict::failed)
            verdict += " (exit " + std::to_string(state.exit_code) + ")";
        std::string detail = state.detail.substr(0, state.detail.find('\n'));
        std::printf("%zu\t%s\t%s\t%llu bytes\t%.2f s%s%s\n", i, entry.name.c_str(), verdict.c_str(),
                    static_cast<unsigned long long>(state.bytes), state.seconds,
                    detail.empty() ? "" : "\t", detail.c_str());
        if (state.verdict == fleet::Verdict::ok)
            ++ok;
        else if (state.verdict == fleet::Verdict::failed)
            ++failed;
        else
            ++missing;
    }
    std::printf("%zu of %zu ok, %zu failed, %zu missing or incomplete\n", ok,
                manifest.entries.size(), failed, missing);
    return ok == manifest.entries.size() ? 0 : 1;
}

}  // namespace

int run_batch(const BatchArgs& args) {
    if (!args.out_dir && !args.summary_dir)
        throw Error(ExitClass::input, args.manifest, "",
                    "batch needs --out DIR (convert one line) or --summary DIR (report on all)");
    return args.summary_dir ? summarize(args) : convert_one(args);
}

}  // namespace rebox::cli
