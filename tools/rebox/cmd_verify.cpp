// rebox verify: runs the independent read-back proof and prints one UNCHECKED line per KV verify
// does not derive (not a failure), the verdict (the summary line), one MISMATCH line per tensor
// whose values differ, one REQUANTIZED line per lossy tensor its re-quantizer checked (before the
// verdict) and one PROBLEM line per other finding; --json writes the full report. Exit 0
// when everything is identical, 3 otherwise (1 when a file cannot be read).
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "format/gguf_shards.hpp"
#include "rebox/error.hpp"
#include "report_json.hpp"
#include "verify/mmproj/mmproj_verify.hpp"
#include "verify/verify.hpp"

namespace rebox::cli {
namespace {

float float_of_bits(uint32_t bits) {
    float value;
    std::memcpy(&value, &bits, sizeof value);
    return value;
}

}  // namespace

int run_verify(const VerifyArgs& args) {
    VerifyOptions options;
    options.threads = args.threads;
    options.tokenizer_pre = args.tokenizer_pre;
    options.no_mtp = args.no_mtp;
    options.full = args.full;
    if (args.imatrix) options.imatrix = *args.imatrix;
    VerifyReport report = verify_gguf(args.model_dir, args.gguf, options);
    // The mmproj: --mmproj, else mmproj-NAME.gguf beside NAME.gguf when there is one.
    std::filesystem::path mmproj =
        args.mmproj ? std::filesystem::path(*args.mmproj) : mmproj_path_beside(args.gguf);
    if (args.mmproj || std::filesystem::exists(mmproj)) {
        fold_report(report, verify_mmproj(args.model_dir, mmproj));
        std::printf("mmproj %s checked too\n", mmproj.c_str());
    }
    if (args.json_report) write_json_file(*args.json_report, verify_report_to_json(report));

    // Unchecked KVs first: on success the verdict stays the last line.
    for (const std::string& kv : report.unchecked_kvs) std::printf("UNCHECKED %s\n", kv.c_str());
    // Lossy tensors: what the reference quantizer found, never "bit-identical".
    for (const TensorCheck& t : report.tensors)
        if (t.requantized && t.identical)
            std::printf(
                "REQUANTIZED %s %s: %llu/%llu %s identical to the reference quantizer, RMSE "
                "%.3g, max abs error %.3g\n",
                t.gguf_name.c_str(), t.gguf_type.c_str(),
                static_cast<unsigned long long>(t.blocks_identical),
                static_cast<unsigned long long>(t.blocks_checked),
                report.requantized_full ? "blocks" : "sampled blocks", t.rmse, t.max_abs_error);
    std::printf("%s\n", report.summary().c_str());
    for (const TensorCheck& t : report.tensors) {
        if (t.mismatches > 0)
            std::printf(
                "MISMATCH %s (%s): %llu values differ, first at index %llu: expected 0x%08x got "
                "0x%08x (%.9g vs %.9g)\n",
                t.gguf_name.c_str(), t.source_name.c_str(),
                static_cast<unsigned long long>(t.mismatches),
                static_cast<unsigned long long>(t.first_diff), t.expected_bits, t.got_bits,
                static_cast<double>(float_of_bits(t.expected_bits)),
                static_cast<double>(float_of_bits(t.got_bits)));
        if (!t.not_bit_identical.empty())
            std::printf("NOT BIT-IDENTICAL %s (%s): %s\n", t.gguf_name.c_str(),
                        t.source_name.c_str(), t.not_bit_identical.c_str());
        if (!t.problem.empty())
            std::printf("PROBLEM %s (%s): %s\n", t.gguf_name.c_str(),
                        t.source_name.empty() ? "no source" : t.source_name.c_str(),
                        t.problem.c_str());
    }
    for (const std::string& problem : report.problems) std::printf("PROBLEM %s\n", problem.c_str());
    std::fflush(stdout);
    return report.ok() ? 0 : static_cast<int>(ExitClass::verification);
}

}  // namespace rebox::cli
