// make_quantize_job: the GGUF input's KVs and tensors handed to choose_quantized_output, then the
// output paths checked against the input set.
#include "quantize_file/quantize_job.hpp"

namespace rebox {

QuantizeJob make_quantize_job(const std::filesystem::path& input,
                              const std::filesystem::path& output, const QuantizeOptions& options) {
    QuantizeJob job{{}, GgufSet::open(input), {}, {}, {}, {}, {}, false};
    std::vector<QuantizeInputTensor> tensors;
    for (const GgufSet::Tensor& t : job.input.tensors())
        tensors.push_back(
            {t.info->name, t.info->ne, t.info->type, t.shard, t.info->offset, std::nullopt});
    QuantizeChoices choices = choose_quantized_output(
        job.input.kvs(), tensors, job.input.shard(0).alignment(), options, input.string());
    job.ftype = choices.ftype;
    job.imatrix = std::move(choices.imatrix);
    for (const QuantizeTensorChoice& c : choices.tensors) {
        // The imatrix pointers point into the entries, which were moved, not copied: look each
        // one up again in the job's own map.
        const std::vector<float>* entry = nullptr;
        if (c.imatrix) entry = &job.imatrix.entries.at(tensors[c.input_index].name);
        job.tensors.push_back(
            {&job.input.tensors()[c.input_index], c.name, c.target, c.choice, entry});
    }
    job.layout = std::move(choices.layout);
    job.notes = std::move(choices.notes);
    job.needs_imatrix = choices.needs_imatrix;
    const bool split = options.split.max_bytes > 0 || options.split.max_tensors > 0 ||
                       options.split.no_tensor_first_split;
    job.outputs = options.keep_split ? keep_split_paths(output, job.layout.shards.size())
                                     : output_paths(output, job.layout.shards.size(), split);
    for (const auto& path : job.outputs)
        refuse_overwriting_input(job.input, path, "another output path");
    return job;
}

}  // namespace rebox
