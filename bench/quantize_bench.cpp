// Google Benchmark of the quantization kernels in values per second on one core: rebox's lane
// kernels (each path this CPU has: quant::quantize_rows_simd) and the public rebox::quantize_rows
// (whatever path it picks, scalar fallback types included) against llama.cpp's own
// ggml_quantize_chunk, dlopen'ed from the same libggml-base.so the tests load, on the same data in
// the same run. After the runs it prints one line per type/mode/path: "Q4_K ref avx2: 5.1x ggml"
// (best repetition of each).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "ggml_oracle.hpp"
#include "quantize/kernel_path.hpp"
#include "quantize/simd/simd_kernels.hpp"
#include "quantize/simd_test_data.hpp"
#include "rebox/rebox.hpp"

namespace {

using rebox::GgmlType;
using rebox::quant::KernelPath;

constexpr int64_t kRows = 64, kWidth = 4096;  // 262,144 bf16-grid student-t values with outliers

struct Data {
    std::vector<float> values =
        rebox::test::checkpoint_rows(kRows, kWidth, true, rebox::test::ValueGrid::bf16, 42);
    std::vector<float> imatrix = rebox::test::importance_matrix(kWidth, 43);
};

const Data& data() {
    static const Data instance;
    return instance;
}

const rebox::test::GgmlOracle& oracle() { return rebox::test::GgmlOracle::instance(); }

size_t output_bytes(GgmlType type) {
    const auto traits = rebox::ggml_type_traits(type);
    return static_cast<size_t>(kRows * kWidth / traits->block_size) * traits->type_size;
}

// The lane path a contender names ("sse2", "avx2", "avx512"), scalar for "ggml" / "rebox".
KernelPath lane_path(const std::string& contender) {
    for (KernelPath path : {KernelPath::sse2, KernelPath::avx2, KernelPath::avx512})
        if (contender == rebox::quant::kernel_path_name(path)) return path;
    return KernelPath::scalar;
}

// contender: "ggml", "rebox" (rebox::quantize_rows) or a lane path name.
void run(benchmark::State& state, GgmlType type, bool with_imatrix, const std::string& contender) {
    const Data& d = data();
    const float* imatrix = with_imatrix ? d.imatrix.data() : nullptr;
    std::vector<uint8_t> out(output_bytes(type));
    if (contender == "ggml" && !oracle().available()) {
        state.SkipWithError(("no oracle: " + oracle().error()).c_str());
        return;
    }
    const KernelPath path = lane_path(contender);
    if (path != KernelPath::scalar && !rebox::quant::kernel_path_supported(path)) {
        state.SkipWithError("this CPU lacks the path");
        return;
    }
    if (contender == "rebox") {
        try {
            rebox::quantize_rows(type, d.values.data(), out.data(), kRows, kWidth, imatrix);
        } catch (const std::exception& e) {
            state.SkipWithError(e.what());
            return;
        }
    }
    for (auto _ : state) {
        if (contender == "ggml")
            oracle().quantize(rebox::ggml_type_id(type), d.values.data(), out.data(), kRows, kWidth,
                              imatrix);
        else if (contender == "rebox")
            rebox::quantize_rows(type, d.values.data(), out.data(), kRows, kWidth, imatrix);
        else if (!rebox::quant::quantize_rows_simd(path, type, d.values.data(), out.data(), kRows,
                                                   kWidth, imatrix)) {
            state.SkipWithError("no lane kernel for this type");
            return;
        }
        benchmark::DoNotOptimize(out.data());
        benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(state.iterations() * kRows * kWidth);
}

// Keeps the best items_per_second of every benchmark (over repetitions) and prints the ratios.
class RatioReporter : public benchmark::ConsoleReporter {
  public:
    void ReportRuns(const std::vector<Run>& runs) override {
        ConsoleReporter::ReportRuns(runs);
        for (const Run& r : runs) {
            if (r.run_type != Run::RT_Iteration || r.error_occurred) continue;
            const auto it = r.counters.find("items_per_second");
            if (it == r.counters.end()) continue;
            double& best = best_[r.run_name.function_name];
            best = std::max(best, static_cast<double>(it->second));
        }
    }
    void print_ratios() const {
        std::printf(
            "\nvalues/s per core, best repetition, against ggml_quantize_chunk on the same "
            "data:\n");
        for (const auto& [name, speed] : best_) {
            const auto slash = name.rfind('/');
            if (slash == std::string::npos) continue;
            const std::string key = name.substr(0, slash), contender = name.substr(slash + 1);
            if (contender == "ggml") continue;
            const auto base = best_.find(key + "/ggml");
            if (base == best_.end() || base->second <= 0) continue;
            std::printf("%s %s: %.2fx ggml (%.1f M values/s, ggml %.1f M)\n", key.c_str(),
                        contender.c_str(), speed / base->second, speed / 1e6, base->second / 1e6);
        }
    }

  private:
    std::map<std::string, double> best_;
};

}  // namespace

int main(int argc, char** argv) {
    const GgmlType types[] = {
        GgmlType::Q4_K,   GgmlType::Q6_K,   GgmlType::Q8_0,  GgmlType::Q4_0,    GgmlType::Q4_1,
        GgmlType::Q5_0,   GgmlType::Q5_1,   GgmlType::Q2_K,  GgmlType::Q3_K,    GgmlType::Q5_K,
        GgmlType::IQ4_NL, GgmlType::IQ4_XS, GgmlType::MXFP4, GgmlType::IQ2_XXS, GgmlType::NVFP4,
        GgmlType::TQ1_0,  GgmlType::TQ2_0,  GgmlType::Q1_0,  GgmlType::Q2_0};
    for (GgmlType type : types) {
        for (bool with_imatrix : {false, true}) {
            if ((type == GgmlType::Q8_0 || type == GgmlType::MXFP4 || type == GgmlType::NVFP4 ||
                 type == GgmlType::TQ1_0 || type == GgmlType::TQ2_0 || type == GgmlType::Q1_0 ||
                 type == GgmlType::Q2_0) &&
                with_imatrix)
                continue;  // ignored by ggml (Q1_0/Q2_0: the same reference per row): as ref
            if (type == GgmlType::IQ2_XXS && !with_imatrix)
                continue;  // ggml requires an imatrix (rebox refuses, ggml aborts)
            const std::string key =
                rebox::ggml_type_name(type) + (with_imatrix ? " imatrix" : " ref");
            for (const char* contender : {"ggml", "sse2", "avx2", "avx512", "rebox"}) {
                const std::string c = contender;
                const KernelPath path = lane_path(c);
                if (path != KernelPath::scalar) {  // only types with a lane kernel
                    std::vector<float> probe(256, 1.f);
                    std::vector<uint8_t> sink(1024);
                    if (!rebox::quant::kernel_path_supported(path)) continue;
                    if (!rebox::quant::quantize_rows_simd(path, type, probe.data(), sink.data(), 1,
                                                          256, nullptr))
                        continue;
                }
                benchmark::RegisterBenchmark((key + "/" + c).c_str(), [type, with_imatrix,
                                                                       c](benchmark::State& s) {
                    run(s, type, with_imatrix, c);
                })->Unit(benchmark::kMillisecond);
            }
        }
    }
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    RatioReporter reporter;
    benchmark::RunSpecifiedBenchmarks(&reporter);
    reporter.print_ratios();
    benchmark::Shutdown();
    return 0;
}
