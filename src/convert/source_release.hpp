// Input-page release bookkeeping for the converter: which source bytes a slice of a tensor reads,
// and a per-tensor count of unfinished slices (slices finish out of order on several threads), so
// consumed input pages leave the resident set as soon as no slice needs them.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "format/mapped_file.hpp"
#include "plan/plan.hpp"
#include "source/source_model.hpp"

namespace rebox::convert_detail {

// The byte ranges values [first, first+count) of `source` are computed from: codes, scales and
// mins of a quantized tensor, or the float data (other parts empty). Clipped to the arrays.
std::array<std::span<const uint8_t>, 3> source_bytes(const SourceTensor& source, uint64_t first,
                                                     uint64_t count);

// Releases (release_mapped) the mapped pages values [first, first+count) of `source` are read from.
void release_source_values(const std::vector<const MappedFile*>& mappings,
                           const SourceTensor& source, uint64_t first, uint64_t count);

// Releases every whole source page a planned tensor reads: its source tensor's, or each stacked
// expert's; nothing for a computed tensor.
void release_planned_tensor(const std::vector<const MappedFile*>& mappings,
                            const SourceModel& source, const TensorPlan& tp);

// The pages planned tensors share: a tensor's byte range that starts or ends inside a page leaves
// that page to its neighbours, so whole-page releases never drop it (a checkpoint of thousands of
// 2 KB experts would stay resident entire). Each such page counts the planned tensors whose
// ranges touch it and leaves the resident set when the last of them is finished.
class SharedPages {
  public:
    SharedPages(const SourceModel& source, const Plan& plan);
    // release_planned_tensor(tp), then each shared page of tp that no unfinished tensor touches.
    // Thread-safe; call once per planned tensor, when its last slice is done.
    void release_tensor(const std::vector<const MappedFile*>& mappings, const SourceModel& source,
                        const TensorPlan& tp);

  private:
    std::vector<uintptr_t> pages_;  // sorted page addresses
    std::unique_ptr<std::atomic<uint32_t>[]> touching_;
};

// Counts down the unfinished parts of each item; finish() is thread-safe and returns true exactly
// once per item: for the call that finished its last part.
class PendingParts {
  public:
    explicit PendingParts(const std::vector<uint32_t>& parts_per_item);
    bool finish(size_t item);

  private:
    std::unique_ptr<std::atomic<uint32_t>[]> left_;
};

}  // namespace rebox::convert_detail
