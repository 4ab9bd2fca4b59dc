// diff_gguf(): KV differences (arrays summarised by length and first differing index) and per
// tensor a verdict, streaming both tensors in chunks of values dequantized by ggml's own
// dequantize_row_<type> (rebox::dequantize_row: every type rebox quantizes, K, IQ4 and MXFP4
// included, NVFP4, and F32 / F16 / BF16), so memory stays flat; mapped pages are released as they
// are done.
#include "gguf_tools/gguf_diff.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <map>

#include "format/gguf_shards.hpp"
#include "format/shape_text.hpp"
#include "gguf_tools/kv_text.hpp"
#include "quantize/quantize.hpp"
#include "rebox/ggml_type.hpp"

namespace rebox {
namespace {

using detail::shape_text;

constexpr uint64_t kChunkElements = 1 << 16;  // a multiple of every block size (32, 64, 256)
constexpr size_t kCompareBytes = 4 << 20;

KvDifference compare_values(const std::string& key, const GgufValue& a, const GgufValue& b) {
    KvDifference d;
    d.key = key;
    d.kind = KvDifference::Kind::changed;
    d.before = gguf_type_spec_name(a) + " " + gguf_value_to_string(a);
    d.after = gguf_type_spec_name(b) + " " + gguf_value_to_string(b);
    if (a.is_array() && b.is_array() && a.elem_type == b.elem_type) {
        const size_t n = std::min(a.array.size(), b.array.size());
        size_t first = n;
        for (size_t i = 0; i < n; ++i) {
            if (!(a.array[i] == b.array[i])) {
                first = i;
                break;
            }
        }
        d.detail = "length " + std::to_string(a.array.size()) + " vs " +
                   std::to_string(b.array.size()) + ", first difference at index " +
                   std::to_string(first);
    }
    return d;
}

void release(const GgufSet& set, std::span<const uint8_t> bytes) {
    std::vector<const MappedFile*> maps;
    for (size_t s = 0; s < set.shard_count(); ++s) maps.push_back(set.shard(s).mapping());
    release_mapped(maps, bytes);
}

// Elements [first, first + out.size()) of a tensor's bytes as floats; first and the count are
// multiples of the block size, and the tensor's bytes hold ggml_nbytes (the GGUF reader's rule).
void dequantize_elements(GgmlType type, std::span<const uint8_t> data, uint64_t first,
                         std::span<float> out) {
    const auto traits = ggml_type_traits(type);
    quant::dequantize_row_scalar(type, data.data() + first / traits->block_size * traits->type_size,
                                 out.data(), static_cast<int64_t>(out.size()));
}

// Releases the pages holding elements [first, first + n) of a tensor's bytes.
void release_elements(const GgufSet& set, GgmlType type, std::span<const uint8_t> data,
                      uint64_t first, size_t n) {
    const auto traits = ggml_type_traits(type);
    const uint64_t begin = first / traits->block_size * traits->type_size;
    const uint64_t length = n / traits->block_size * traits->type_size;
    release(set, data.subspan(begin, std::min<uint64_t>(length, data.size() - begin)));
}

TensorComparison compare_tensor(const GgufSet& sa, const GgufSet::Tensor& ta, const GgufSet& sb,
                                const GgufSet::Tensor& tb) {
    TensorComparison c;
    c.name = ta.info->name;
    c.type_a = ggml_type_name(ta.info->type);
    c.type_b = ggml_type_name(tb.info->type);
    c.shape_a = shape_text(ta.info->ne);
    c.shape_b = shape_text(tb.info->ne);
    c.elements = ta.info->element_count();
    if (ta.info->ne != tb.info->ne) {
        c.verdict = TensorComparison::Verdict::shape_differs;
        return c;
    }
    const auto da = sa.tensor_data(ta), db = sb.tensor_data(tb);
    if (ta.info->type == tb.info->type && da.size() == db.size()) {
        // Chunk by chunk, releasing the mapped pages, so a 100 MB tensor stays out of RSS.
        bool equal = true;
        for (size_t at = 0; equal && at < da.size(); at += kCompareBytes) {
            const size_t n = std::min(kCompareBytes, da.size() - at);
            equal = std::memcmp(da.data() + at, db.data() + at, n) == 0;
            release(sa, da.subspan(at, n));
            release(sb, db.subspan(at, n));
        }
        if (equal) {
            c.verdict = TensorComparison::Verdict::identical_bytes;
            return c;
        }
    }
    if (!quant::is_dequantizable_type(ta.info->type) ||
        !quant::is_dequantizable_type(tb.info->type)) {
        c.verdict = TensorComparison::Verdict::not_compared;
        return c;
    }
    std::vector<float> va(kChunkElements), vb(kChunkElements);
    for (uint64_t first = 0; first < c.elements; first += kChunkElements) {
        const size_t n = static_cast<size_t>(std::min(kChunkElements, c.elements - first));
        dequantize_elements(ta.info->type, da, first, std::span(va.data(), n));
        dequantize_elements(tb.info->type, db, first, std::span(vb.data(), n));
        release_elements(sa, ta.info->type, da, first, n);
        release_elements(sb, tb.info->type, db, first, n);
        for (size_t i = 0; i < n; ++i) {
            if (std::bit_cast<uint32_t>(va[i]) == std::bit_cast<uint32_t>(vb[i])) continue;
            ++c.differing_values;
            const double err = std::fabs(static_cast<double>(va[i]) - static_cast<double>(vb[i]));
            c.max_abs_error = std::isnan(err) ? INFINITY : std::max(c.max_abs_error, err);
        }
    }
    release(sa, da);
    release(sb, db);
    c.verdict = c.differing_values == 0 ? TensorComparison::Verdict::same_values
                                        : TensorComparison::Verdict::different;
    return c;
}

}  // namespace

const char* verdict_name(TensorComparison::Verdict verdict) {
    switch (verdict) {
        case TensorComparison::Verdict::identical_bytes:
            return "identical bytes";
        case TensorComparison::Verdict::same_values:
            return "same values";
        case TensorComparison::Verdict::different:
            return "different";
        case TensorComparison::Verdict::shape_differs:
            return "shape differs";
        case TensorComparison::Verdict::not_compared:
            return "not compared";
        case TensorComparison::Verdict::only_in_a:
            return "removed";
        case TensorComparison::Verdict::only_in_b:
            return "added";
    }
    return "?";
}

bool GgufDiff::same() const {
    if (!kvs.empty()) return false;
    return std::all_of(tensors.begin(), tensors.end(), [](const TensorComparison& t) {
        return t.verdict == TensorComparison::Verdict::identical_bytes ||
               t.verdict == TensorComparison::Verdict::same_values;
    });
}

GgufDiff diff_gguf(const std::filesystem::path& a, const std::filesystem::path& b) {
    const GgufSet sa = GgufSet::open(a);
    const GgufSet sb = GgufSet::open(b);
    GgufDiff diff;
    for (const GgufKV& kv : sa.kvs()) {
        const GgufValue* other = sb.find(kv.key);
        if (other == nullptr)
            diff.kvs.push_back(
                {kv.key, KvDifference::Kind::removed,
                 gguf_type_spec_name(kv.value) + " " + gguf_value_to_string(kv.value), "", ""});
        else if (!(kv.value == *other))
            diff.kvs.push_back(compare_values(kv.key, kv.value, *other));
    }
    for (const GgufKV& kv : sb.kvs())
        if (sa.find(kv.key) == nullptr)
            diff.kvs.push_back(
                {kv.key, KvDifference::Kind::added, "",
                 gguf_type_spec_name(kv.value) + " " + gguf_value_to_string(kv.value), ""});
    for (const GgufSet::Tensor& ta : sa.tensors()) {
        const GgufSet::Tensor* tb = sb.find_tensor(ta.info->name);
        if (tb == nullptr) {
            TensorComparison c;
            c.name = ta.info->name;
            c.verdict = TensorComparison::Verdict::only_in_a;
            c.type_a = ggml_type_name(ta.info->type);
            c.shape_a = shape_text(ta.info->ne);
            diff.tensors.push_back(c);
            continue;
        }
        diff.tensors.push_back(compare_tensor(sa, ta, sb, *tb));
    }
    for (const GgufSet::Tensor& tb : sb.tensors()) {
        if (sa.find_tensor(tb.info->name) != nullptr) continue;
        TensorComparison c;
        c.name = tb.info->name;
        c.verdict = TensorComparison::Verdict::only_in_b;
        c.type_b = ggml_type_name(tb.info->type);
        c.shape_b = shape_text(tb.info->ne);
        diff.tensors.push_back(c);
    }
    return diff;
}

}  // namespace rebox
