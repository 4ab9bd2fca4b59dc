// refuse_output_over_input(): every file convert reads, compared by inode with every output path.
#include "input_guard.hpp"

#include <string>
#include <system_error>

#include "gguf_tools/file_identity.hpp"
#include "rebox/error.hpp"

namespace rebox::convert_detail {
namespace {

// The files convert may read besides the safetensors it opened: everything in the model folder a
// reader or the tokenizer code opens (config and tokenizer JSON, tokenizer.model, chat templates,
// vocabulary text files, the pooling config).
bool is_read_input(const std::filesystem::path& file) {
    const std::string ext = file.extension().string();
    return ext == ".json" || ext == ".safetensors" || ext == ".model" || ext == ".jinja" ||
           ext == ".txt";
}

std::vector<std::filesystem::path> input_files(const ModelDir& model_dir) {
    std::vector<std::filesystem::path> inputs;
    for (const auto& file : model_dir.safetensors().files()) inputs.push_back(file->path());
    std::error_code ec;
    // One level down too: sentence-transformers' 1_Pooling/config.json decides the pooling.
    for (std::filesystem::recursive_directory_iterator it(model_dir.path(), ec), end;
         !ec && it != end; it.increment(ec)) {
        if (it.depth() >= 1) it.disable_recursion_pending();
        if (is_read_input(it->path())) inputs.push_back(it->path());
    }
    return inputs;
}

}  // namespace

void refuse_output_over_input(const ModelDir& model_dir,
                              const std::vector<std::filesystem::path>& outputs) {
    const std::vector<std::filesystem::path> inputs = input_files(model_dir);
    for (const auto& output : outputs)
        for (const auto& input : inputs)
            if (same_file(output, input))
                throw_input_error(output.string(), "output",
                                  "is the input file " + input.string() +
                                      ", so writing it would destroy the checkpoint (also with "
                                      "--force); nothing was written",
                                  "an output path that is none of the checkpoint's files");
}

}  // namespace rebox::convert_detail
