// rebox meta: edit a GGUF's metadata (keys, chat template, tensor names) in place or into a new
// file; the tensor data is copied file to file, never through memory.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "gguf_tool_commands.hpp"
#include "gguf_tools/meta_edit.hpp"
#include "rebox/error.hpp"

namespace rebox::cli {
namespace {

struct MetaArgs {
    std::string file;
    std::optional<std::string> output;
    MetaEdits edits;
    std::optional<std::string> chat_template_file;
    bool force = false;
    bool quiet = false;
};

int run_meta(const MetaArgs& args) {
    MetaEdits edits = args.edits;
    if (args.chat_template_file) edits.chat_template_file = *args.chat_template_file;
    if (edits.empty())
        throw Error(ExitClass::input,
                    "meta: nothing to do (expected at least one of --set, --delete, "
                    "--chat-template-file, --rename-tensor; see rebox meta --help)");
    std::optional<std::filesystem::path> output;
    if (args.output) output = *args.output;
    const MetaEditResult result = edit_gguf_metadata(args.file, output, edits, args.force);
    if (!args.quiet) {
        for (const std::string& change : result.changes) std::printf("%s\n", change.c_str());
        for (const auto& path : result.written) std::printf("wrote %s\n", path.c_str());
    }
    return 0;
}

}  // namespace

ToolCommand add_meta_command(CLI::App& app) {
    auto args = std::make_shared<MetaArgs>();
    CLI::App* cmd = app.add_subcommand(
        "meta",
        "Edit GGUF metadata (keys, chat template, tensor names) in place or into a new file");
    cmd->footer(
        "Edit GGUF metadata: set/add/delete keys, chat template, tensor names.\n"
        "Writes OUT, or replaces FILE in place atomically (temporary file, fsync, rename); tensor "
        "data is copied file to file and the file's alignment is kept. A split set is edited "
        "through its first shard, in place.\n"
        "Refuses edits llama.cpp would reject (wrong type for a key it reads, a bad "
        "general.alignment, deleting a key it needs such as general.architecture).\n"
        "Exit codes: 0 written, 1 bad input or usage (nothing written).");
    cmd->add_option("FILE", args->file, "GGUF file (or first shard of a split set)")->required();
    cmd->add_option("-o,--output", args->output, "write here instead of replacing FILE");
    cmd->add_option("--set", args->edits.sets,
                    "KEY=VALUE for an existing key (its type is kept); KEY:TYPE=VALUE for a new "
                    "one (TYPE: UINT8, INT8, UINT16, INT16, UINT32, INT32, UINT64, INT64, FLOAT32, "
                    "FLOAT64, BOOL, STRING); KEY:ARRAY[TYPE]=@file.json for a new array")
        ->allow_extra_args(false);
    cmd->add_option("--delete", args->edits.deletes, "remove KEY (applied before --set)")
        ->allow_extra_args(false);
    cmd->add_option("--chat-template-file", args->chat_template_file,
                    "set tokenizer.chat_template to this file's text");
    cmd->add_option("--rename-tensor", args->edits.renames, "rename tensor OLD=NEW")
        ->allow_extra_args(false);
    cmd->add_flag("-f,--force", args->force, "replace an existing OUT");
    cmd->add_flag("-q,--quiet", args->quiet, "print nothing on success");
    return {cmd, [args] { return run_meta(*args); }};
}

}  // namespace rebox::cli
