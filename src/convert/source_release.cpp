// Byte ranges of a slice of a source tensor (lsb0 codes: bits [first*bits, (first+count)*bits);
// scales/mins: the groups the slice touches; integer-zero-point views: only the whole tensor) and
// the releases of those pages, the count of planned tensors on each page they share, and the
// per-tensor countdown of unfinished slices.
#include "source_release.hpp"

#include <unistd.h>

#include <algorithm>

namespace rebox::convert_detail {
namespace {

std::span<const uint8_t> clipped(std::span<const uint8_t> bytes, uint64_t begin, uint64_t end) {
    end = std::min<uint64_t>(end, bytes.size());
    if (begin >= end) return {};
    return bytes.subspan(static_cast<size_t>(begin), static_cast<size_t>(end - begin));
}

}  // namespace

void release_source_values(const std::vector<const MappedFile*>& mappings,
                           const SourceTensor& source, uint64_t first, uint64_t count) {
    for (const auto bytes : source_bytes(source, first, count)) release_mapped(mappings, bytes);
}

void release_planned_tensor(const std::vector<const MappedFile*>& mappings,
                            const SourceModel& source, const TensorPlan& tp) {
    if (tp.is_computed()) return;
    if (tp.expert_sources.empty()) {
        const SourceTensor& tensor = source.tensors[tp.source_index];
        release_source_values(mappings, tensor, 0, tensor.element_count());
    }
    for (size_t piece = 0; piece < tp.expert_sources.size(); ++piece)
        release_source_values(mappings, source.tensors[tp.expert_sources[piece]],
                              tp.expert_first(piece), tp.expert_values);
}

std::array<std::span<const uint8_t>, 3> source_bytes(const SourceTensor& source, uint64_t first,
                                                     uint64_t count) {
    if (count == 0) return {};
    if (source.fp4) {  // two codes per byte, one scale byte per group
        const Fp4View& v = *source.fp4;
        const uint64_t group = static_cast<uint64_t>(v.group);
        return {clipped(v.codes, first / 2, (first + count + 1) / 2),
                clipped(v.scales, first / group, (first + count + group - 1) / group),
                {}};
    }
    if (source.fp8) {  // one code byte per value; the scales are small: released with the tensor
        const Fp8View& v = *source.fp8;
        const bool whole = first == 0 && count >= source.element_count();
        return {clipped(v.codes, first, first + count),
                whole ? v.scales : std::span<const uint8_t>{},
                {}};
    }
    if (!source.quant) {
        const uint64_t width = float_dtype_size(source.float_dtype);
        return {clipped(source.float_data, first * width, (first + count) * width), {}, {}};
    }
    if (source.int_quant) {
        // GPTQ/AWQ codes of a slice are spread over the whole packed array: its pages are released
        // only with the whole tensor.
        const IntQuantView& v = *source.int_quant;
        if (first != 0 || count < source.element_count()) return {};
        return {v.codes, v.scales, v.zeros};
    }
    const QuantView& q = *source.quant;
    const uint64_t bits = static_cast<uint64_t>(q.bits);
    const uint64_t group = static_cast<uint64_t>(std::max<int64_t>(q.group, 1));
    const uint64_t width = float_dtype_size(q.scale_dtype);
    const uint64_t group_begin = first / group, group_end = (first + count + group - 1) / group;
    return {clipped(q.codes, first * bits / 8, ((first + count) * bits + 7) / 8),
            clipped(q.scales, group_begin * width, group_end * width),
            clipped(q.mins, group_begin * width, group_end * width)};
}

namespace {

size_t page_size() {
    static const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    return page;
}

// Each byte range a planned tensor reads (its source's, or each stacked expert's).
template <class Visit>
void for_each_planned_range(const SourceModel& source, const TensorPlan& tp, Visit&& visit) {
    if (tp.is_computed()) return;
    const auto ranges_of = [&](const SourceTensor& tensor, uint64_t first, uint64_t count) {
        for (const auto bytes : source_bytes(tensor, first, count))
            if (!bytes.empty()) visit(bytes);
    };
    if (tp.expert_sources.empty()) {
        const SourceTensor& tensor = source.tensors[tp.source_index];
        ranges_of(tensor, 0, tensor.element_count());
    }
    for (size_t piece = 0; piece < tp.expert_sources.size(); ++piece)
        ranges_of(source.tensors[tp.expert_sources[piece]], tp.expert_first(piece),
                  tp.expert_values);
}

// The pages a range only partly covers (its first and last), each once.
template <class Visit>
void for_each_partial_page(std::span<const uint8_t> bytes, Visit&& visit) {
    const uintptr_t page = page_size();
    const auto begin = reinterpret_cast<uintptr_t>(bytes.data()), end = begin + bytes.size();
    const uintptr_t first = begin / page * page, last = (end - 1) / page * page;
    if (first == last) {
        if (begin != first || end != first + page) visit(first);
        return;
    }
    if (begin != first) visit(first);
    if (end != last + page) visit(last);
}

}  // namespace

SharedPages::SharedPages(const SourceModel& source, const Plan& plan) {
    std::vector<uintptr_t> touches;
    for (const TensorPlan& tp : plan.tensors)
        for_each_planned_range(source, tp, [&](std::span<const uint8_t> bytes) {
            for_each_partial_page(bytes, [&](uintptr_t page) { touches.push_back(page); });
        });
    std::sort(touches.begin(), touches.end());
    touching_ = std::make_unique<std::atomic<uint32_t>[]>(touches.size());
    for (size_t i = 0; i < touches.size();) {
        size_t j = i;
        while (j < touches.size() && touches[j] == touches[i]) ++j;
        touching_[pages_.size()] = static_cast<uint32_t>(j - i);
        pages_.push_back(touches[i]);
        i = j;
    }
}

void SharedPages::release_tensor(const std::vector<const MappedFile*>& mappings,
                                 const SourceModel& source, const TensorPlan& tp) {
    release_planned_tensor(mappings, source, tp);
    for_each_planned_range(source, tp, [&](std::span<const uint8_t> bytes) {
        for_each_partial_page(bytes, [&](uintptr_t page) {
            const auto at = std::lower_bound(pages_.begin(), pages_.end(), page);
            if (at == pages_.end() || *at != page) return;
            if (touching_[static_cast<size_t>(at - pages_.begin())].fetch_sub(1) == 1)
                release_mapped(mappings, std::span<const uint8_t>(
                                             reinterpret_cast<const uint8_t*>(page), page_size()));
        });
    });
}

PendingParts::PendingParts(const std::vector<uint32_t>& parts_per_item)
    : left_(std::make_unique<std::atomic<uint32_t>[]>(parts_per_item.size())) {
    for (size_t i = 0; i < parts_per_item.size(); ++i) left_[i] = parts_per_item[i];
}

bool PendingParts::finish(size_t item) { return left_[item].fetch_sub(1) == 1; }

}  // namespace rebox::convert_detail
