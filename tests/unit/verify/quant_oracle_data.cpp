// The generated and adversarial inputs of the re-quantizer oracle tests (quant_oracle_data.hpp).
#include "quant_oracle_data.hpp"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>

#include "verify/quantized/ref_half_round.hpp"
#include "verify/values/ref_half.hpp"

namespace rebox::test {

namespace {

float to_bf16_grid(float v) {  // round to nearest even on the bfloat16 grid
    uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    bits = (bits + 0x7fffu + ((bits >> 16) & 1u)) & 0xffff0000u;
    std::memcpy(&v, &bits, sizeof v);
    return v;
}

float to_f16_grid(float v) {  // RNE onto the binary16 grid (the rounding is itself tested)
    return verify_ref::half_bits_to_float(verify_ref::float_to_half_bits(v));
}

std::vector<float> importance_vector(std::mt19937_64& rng, int64_t width, const std::string& kind) {
    std::vector<float> w(static_cast<size_t>(width));
    std::normal_distribution<float> normal(0.f, 1.f);
    for (auto& v : w) v = std::exp(normal(rng)) * 0.5f;  // positive, log-normal like real sums
    if (kind == "zero-columns")
        for (int64_t i = 0; i < width; i += 13) w[static_cast<size_t>(i)] = 0.f;
    if (kind == "all-zero") std::fill(w.begin(), w.end(), 0.f);
    if (kind == "tiny")
        for (auto& v : w) v *= 1e-30f;
    return w;
}

QuantMatrix adversarial(std::mt19937_64& rng, int64_t width) {
    QuantMatrix m;
    m.width = width;
    std::normal_distribution<float> normal(0.f, 1.f);
    std::uniform_int_distribution<int> small_int(-64, 64);
    std::uniform_int_distribution<int> exponent(-20, 20);
    std::uniform_int_distribution<int64_t> column(0, width - 1);
    const auto add = [&](const std::string& what, const std::function<float(int64_t)>& value) {
        m.row_what.push_back(what);
        for (int64_t i = 0; i < width; ++i) m.values.push_back(value(i));
    };
    add("zeros", [](int64_t) { return 0.f; });
    add("negative zeros", [](int64_t) { return -0.f; });
    add("constant 0.5", [](int64_t) { return 0.5f; });
    add("constant -3.25", [](int64_t) { return -3.25f; });
    add("one outlier", [&](int64_t i) { return i == 7 ? 100.f : 0.01f * normal(rng); });
    add("one negative outlier per block",
        [&](int64_t i) { return i % 32 == 5 ? -40.f : 0.02f * normal(rng); });
    add("subnormals", [&](int64_t) { return 1e-40f * normal(rng); });
    add("smallest normals", [&](int64_t) { return 1.2e-38f * normal(rng); });
    add("ties on an eighth grid", [&](int64_t) { return small_int(rng) / 8.f; });
    add("ties on integers", [&](int64_t) { return static_cast<float>(small_int(rng)); });
    add("1e30", [&](int64_t) { return 1e30f * normal(rng); });
    add("1e-30", [&](int64_t) { return 1e-30f * normal(rng); });
    add("one value per block", [&](int64_t i) { return i % 32 == 17 ? 0.3f : 0.f; });
    add("alternating +-1", [](int64_t i) { return i % 2 ? 1.f : -1.f; });
    add("just below powers of two", [&](int64_t i) {
        const float v = std::ldexp(1.f - 0x1p-24f, exponent(rng));
        return i % 3 ? v : -v;
    });
    add("half zeros", [&](int64_t i) { return (i / 16) % 2 ? normal(rng) : 0.f; });
    add("positive only", [&](int64_t) { return 1.f + 0.1f * normal(rng); });
    add("negative only", [&](int64_t) { return -1.f - 0.1f * std::fabs(normal(rng)); });
    add("near fp16 max", [&](int64_t) { return 60000.f * normal(rng); });
    add("beyond fp16 max", [&](int64_t i) { return i % 32 == 3 ? 1e6f : normal(rng); });
    add("random column spike",
        [&, spike = column(rng)](int64_t i) { return i == spike ? -1e4f : 0.001f * normal(rng); });
    m.rows = static_cast<int64_t>(m.row_what.size());
    return m;
}

QuantMatrix generated(std::mt19937_64& rng, int64_t width, int kind, int grid) {
    QuantMatrix m;
    m.width = width;
    m.rows = std::max<int64_t>(1, 32768 / width);
    std::normal_distribution<float> normal(0.f, 1.f);
    std::uniform_real_distribution<float> uniform(-1.f, 1.f);
    const char* kinds[] = {"normal*0.02", "student-t(3)*0.02", "uniform", "1+0.1*normal",
                           "normal*0.02, 1% outliers x50"};
    const char* grids[] = {"f32", "bf16 grid", "f16 grid"};
    m.what = std::string(kinds[kind]) + ", " + grids[grid] + ", width " + std::to_string(width);
    m.values.resize(static_cast<size_t>(m.rows * width));
    for (auto& v : m.values) {
        switch (kind) {
            case 0:
                v = 0.02f * normal(rng);
                break;
            case 1: {
                const float a = normal(rng), b = normal(rng), c = normal(rng);
                v = 0.02f * normal(rng) / std::sqrt((a * a + b * b + c * c) / 3.f);
                break;
            }
            case 2:
                v = uniform(rng);
                break;
            case 3:
                v = 1.f + 0.1f * normal(rng);
                break;
            default:
                v = 0.02f * normal(rng) * (uniform(rng) > 0.98f ? 50.f : 1.f);
                break;
        }
        if (grid == 1) v = to_bf16_grid(v);
        if (grid == 2) v = to_f16_grid(v);
    }
    return m;
}

}  // namespace

std::vector<QuantMatrix> quant_oracle_matrices(uint32_t block_values, bool with_importance,
                                               uint64_t target_values, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<QuantMatrix> matrices;
    const int64_t adversarial_width = 512;
    const char* importance_kinds[] = {"zero-columns", "all-zero", "tiny"};
    for (int copy = 0; copy < (with_importance ? 3 : 1); ++copy) {
        QuantMatrix m = adversarial(rng, adversarial_width);
        m.what = "adversarial rows";
        if (with_importance) {
            m.importance = importance_vector(rng, adversarial_width, importance_kinds[copy]);
            m.what += std::string(", importance ") + importance_kinds[copy];
        }
        matrices.push_back(std::move(m));
    }
    std::vector<int64_t> widths = {256, 512, 768, 1024, 2048, 4096, 8192, 1280};
    if (block_values == 32) widths.push_back(96), widths.push_back(896);
    uint64_t total = 0;
    for (const auto& m : matrices) total += m.values.size();
    for (int i = 0; total < target_values; ++i) {
        QuantMatrix m =
            generated(rng, widths[static_cast<size_t>(i) % widths.size()], i % 5, (i / 5) % 3);
        if (with_importance) {
            m.importance = importance_vector(rng, m.width, i % 4 == 0 ? "zero-columns" : "plain");
            m.what += i % 4 == 0 ? ", importance with zero columns" : ", importance";
        }
        total += m.values.size();
        matrices.push_back(std::move(m));
    }
    return matrices;
}

uint64_t quant_test_values(uint64_t fallback) {
    const char* text = std::getenv("REBOX_QUANT_TEST_VALUES");
    if (!text || !*text) return fallback;
    const unsigned long long value = std::strtoull(text, nullptr, 10);
    return value > 0 ? value : fallback;
}

}  // namespace rebox::test
