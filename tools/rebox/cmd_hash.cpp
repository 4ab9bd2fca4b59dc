// rebox hash FILE: a sha256sum-like manifest of a GGUF model (one line per tensor, one for the KV
// section); --check MANIFEST re-hashes and names every entry that differs, is missing or is new.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "gguf_tool_commands.hpp"
#include "gguf_tools/gguf_hash.hpp"
#include "rebox/error.hpp"

namespace rebox::cli {
namespace {

struct HashArgs {
    std::string file;
    std::optional<std::string> check;
    bool tensors_only = false;
};

int run_hash(const HashArgs& args) {
    try {
        const auto actual = hash_gguf(args.file, !args.tensors_only);
        if (!args.check) {
            for (const HashEntry& e : actual) std::fputs(manifest_line(e).c_str(), stdout);
            return 0;
        }
        const ManifestCheck check =
            check_manifest(actual, read_manifest(*args.check), args.tensors_only);
        for (const auto& name : check.differing) std::printf("%s: DIFFERS\n", name.c_str());
        for (const auto& name : check.missing)
            std::printf("%s: MISSING (in the manifest, not in %s)\n", name.c_str(),
                        args.file.c_str());
        for (const auto& name : check.unexpected)
            std::printf("%s: NEW (in %s, not in the manifest)\n", name.c_str(), args.file.c_str());
        const size_t bad = check.differing.size() + check.missing.size() + check.unexpected.size();
        if (bad == 0)
            std::printf("OK: %zu entries match\n", check.matching);
        else
            std::printf("FAILED: %zu differ, %zu missing, %zu new; %zu match\n",
                        check.differing.size(), check.missing.size(), check.unexpected.size(),
                        check.matching);
        return check.ok() ? 0 : 1;
    } catch (const Error& e) {
        std::fprintf(stderr, "rebox: %s\n", e.what());
        return 2;
    }
}

}  // namespace

ToolCommand add_hash_command(CLI::App& app) {
    auto args = std::make_shared<HashArgs>();
    CLI::App* cmd = app.add_subcommand(
        "hash", "Per-tensor xxh64 + sha256 manifest of a GGUF; --check compares against one");
    cmd->footer(
        "Hash a GGUF model per tensor (xxh64 and sha256 of its bytes) plus one entry for the KV "
        "section, printed as a manifest: '<xxh64> <sha256>  tensor:NAME' and '...  kv'. A split "
        "set (first shard given) and its merged file give the same entries; the kv entry "
        "leaves the split.* keys out.\n"
        "Exit codes: 0 printed / all entries match, 1 --check found entries that differ, are "
        "missing or are new, 2 unreadable model or manifest.");
    cmd->add_option("FILE", args->file, "GGUF file (or first shard of a split set)")->required();
    cmd->add_option("--check", args->check, "compare against this manifest instead of printing");
    cmd->add_flag("--tensors-only", args->tensors_only,
                  "leave the kv entry out (of the output, and of the --check comparison)");
    return {cmd, [args] { return run_hash(*args); }};
}

}  // namespace rebox::cli
