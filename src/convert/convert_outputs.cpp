// open_outputs / finish_outputs: what the exact and the quantized conversion share around the
// writing of the tensors.
#include "convert_outputs.hpp"

#include "format/atomic_output_set.hpp"
#include "verify/mmproj/mmproj_verify.hpp"

namespace rebox::convert_detail {

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

ConvertOutputs open_outputs(const ConvertOptions& options, const SourceModel& source,
                            const ShardedLayout& layout,
                            const std::vector<std::filesystem::path>& paths, unsigned threads) {
    ConvertOutputs outputs;
    std::vector<std::filesystem::path> temp_paths;
    for (const auto& path : paths) {
        outputs.files.push_back(std::make_unique<AtomicOutput>(path, options.force));
        temp_paths.push_back(outputs.files.back()->temp_path());
    }
    outputs.write_start = std::chrono::steady_clock::now();
    for (size_t s = 0; s < outputs.files.size(); ++s) {
        outputs.files[s]->resize(layout.shards[s].file_size());
        outputs.files[s]->pwrite(layout.shards[s].serialize_metadata(), 0);
    }
    // Verification runs alongside the writing: it opens the temporary files through the reader
    // (the headers are final now) and checks each region once its bytes are written.
    if (options.verify) {
        VerifyOptions verify_options;
        verify_options.threads = threads;
        verify_options.tokenizer_pre = options.plan.tokenizer_pre;
        verify_options.no_mtp = options.plan.no_mtp;
        // convert --quantize --imatrix: the lossy tensors are re-quantized with the same matrix.
        if (options.quantize && options.quantize->imatrix)
            verify_options.imatrix = *options.quantize->imatrix;
        outputs.verify = std::make_unique<VerifySession>(
            *source.model_dir, GgufSet::open_files(temp_paths), verify_options);
    }
    return outputs;
}

void finish_outputs(ConvertOutputs& outputs, ConvertReport& result) {
    result.seconds_write = seconds_since(outputs.write_start);
    if (outputs.verify) {
        const auto verify_start = std::chrono::steady_clock::now();
        result.verify = outputs.verify->finish();
        outputs.verify.reset();  // unmaps the temporary files
        if (outputs.also_verified) fold_report(*result.verify, *outputs.also_verified);
        result.seconds_verify = seconds_since(verify_start);
        if (!result.verify->ok()) {
            for (auto& out : outputs.files)
                out->discard();  // the target is never created from a file that does not verify
            return;
        }
    }
    // commit_all() fsyncs each file once, then renames them into place, shard 1 last (all or
    // nothing: a failure between two renames puts the previous files back).
    commit_all(outputs.files);
    result.written = true;
}

}  // namespace rebox::convert_detail
