// Output paths, failure records and the done-or-not check of a batch index (see batch_outputs.hpp).
#include "fleet/batch_outputs.hpp"

#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <system_error>

namespace rebox::fleet {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path gguf_path(const fs::path& out_dir, const ManifestEntry& entry) {
    return out_dir / (entry.name + ".gguf");
}

fs::path report_path(const fs::path& out_dir, const ManifestEntry& entry) {
    return out_dir / (entry.name + ".json");
}

fs::path mmproj_path(const fs::path& out_dir, const ManifestEntry& entry) {
    return out_dir / ("mmproj-" + entry.name + ".gguf");
}

json failure_record(const Manifest& manifest, uint64_t index, const ManifestEntry& entry,
                    int exit_code, const std::string& message, double seconds) {
    return {{"batch",
             {{"manifest", manifest.path.string()},
              {"index", index},
              {"manifest_line", entry.line_number}}},
            {"model_dir", entry.source_dir.string()},
            {"name", entry.name},
            {"exit_code", exit_code},
            {"message", message},
            {"seconds", seconds}};
}

const char* verdict_name(Verdict verdict) {
    switch (verdict) {
        case Verdict::ok:
            return "ok";
        case Verdict::failed:
            return "FAILED";
        case Verdict::missing:
            return "MISSING";
        case Verdict::incomplete:
            return "INCOMPLETE";
    }
    return "?";
}

namespace {

// A success report is convert's: no exit_code, written, verification ok or skipped.
bool is_success_report(const json& report) {
    if (!report.is_object() || report.contains("exit_code")) return false;
    const auto written = report.find("written");
    const auto verification = report.find("verification");
    if (written == report.end() || !written->is_boolean() || !written->get<bool>()) return false;
    if (verification == report.end() || !verification->is_object()) return false;
    const auto ok = verification->find("ok");
    const auto skipped = verification->find("skipped");
    return (ok != verification->end() && ok->is_boolean() && ok->get<bool>()) ||
           (skipped != verification->end() && skipped->is_boolean() && skipped->get<bool>());
}

double total_seconds(const json& report) {
    const auto seconds = report.find("seconds");
    if (seconds == report.end()) return 0;
    if (seconds->is_number()) return seconds->get<double>();
    if (seconds->is_object() && seconds->contains("total") && (*seconds)["total"].is_number())
        return (*seconds)["total"].get<double>();
    return 0;
}

// The size of an output the report names, found by its file name inside DIR (the folder may be
// mounted elsewhere than where it was written); nullopt when the name is no string or the file
// is not there.
std::optional<uint64_t> size_in_dir(const fs::path& out_dir, const json& name) {
    if (!name.is_string()) return std::nullopt;
    std::error_code ec;
    const uint64_t size = fs::file_size(out_dir / fs::path(name.get<std::string>()).filename(), ec);
    if (ec) return std::nullopt;
    return size;
}

}  // namespace

IndexState index_state(const fs::path& out_dir, const ManifestEntry& entry) {
    IndexState state;
    std::ifstream in(report_path(out_dir, entry), std::ios::binary);
    if (!in) {
        state.detail = "no report";
        if (std::error_code ec; fs::exists(gguf_path(out_dir, entry), ec))
            state.detail = "a GGUF without its report (interrupted: the next run converts again)";
        return state;
    }
    std::ostringstream text;
    text << in.rdbuf();
    const json report = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
    state.seconds = report.is_object() ? total_seconds(report) : 0;
    if (report.is_object() && report.contains("exit_code") &&
        report["exit_code"].is_number_integer()) {
        state.verdict = Verdict::failed;
        state.exit_code = report["exit_code"].get<int>();
        state.detail = report.value("message", std::string());
        return state;
    }
    state.verdict = Verdict::incomplete;
    if (!is_success_report(report)) {
        state.detail = "report is neither convert's success report nor a failure record";
        return state;
    }
    const auto files = report.find("files");
    const auto bytes = report.find("output_bytes");
    if (files == report.end() || !files->is_array() || files->empty() || bytes == report.end() ||
        !bytes->is_number_unsigned()) {
        state.detail = "report lists no output files";
        return state;
    }
    uint64_t on_disk = 0;
    for (const json& file : *files) {
        const std::optional<uint64_t> size = size_in_dir(out_dir, file);
        if (!size) {
            state.detail =
                "output " + (file.is_string() ? file.get<std::string>() : "?") + " is missing";
            return state;
        }
        on_disk += *size;
    }
    if (on_disk != bytes->get<uint64_t>()) {
        state.detail = "outputs hold " + std::to_string(on_disk) + " bytes, the report says " +
                       std::to_string(bytes->get<uint64_t>());
        return state;
    }
    // The projector the report names (a multimodal checkpoint): there, at its reported size.
    const auto mmproj = report.find("mmproj");
    if (mmproj != report.end() && !mmproj->is_null()) {
        const auto mmproj_bytes = report.find("mmproj_bytes");
        const std::optional<uint64_t> size = size_in_dir(out_dir, *mmproj);
        if (!size || mmproj_bytes == report.end() || !mmproj_bytes->is_number_unsigned() ||
            *size != mmproj_bytes->get<uint64_t>()) {
            state.detail = "the mmproj file the report names is missing or not its size";
            return state;
        }
        on_disk += *size;
    }
    state.verdict = Verdict::ok;
    state.bytes = on_disk;
    return state;
}

}  // namespace rebox::fleet
