// NameIndex: name -> position in a vector the caller owns, for the hundreds of thousands of tensor
// names a big MoE checkpoint holds. Open addressing with linear probing over one flat array of
// (hash bits, position) slots, at most half full: a look-up touches one slot run and compares one
// name, where std::unordered_map follows a node pointer per candidate.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

namespace rebox {

class NameIndex {
  public:
    // Room for `count` names without growing.
    void reserve(size_t count) {
        size_t capacity = 16;
        while (capacity < 2 * count) capacity *= 2;
        if (capacity <= slots_.size()) return;
        std::vector<Slot> old = std::move(slots_);
        slots_.assign(capacity, Slot{});
        for (const Slot& slot : old)
            if (slot.position_plus_one != 0) place(slot);
    }

    // The position stored for `name`, or npos. name_at(position) gives a stored name.
    template <class NameAt>
    size_t find(std::string_view name, const NameAt& name_at) const {
        if (slots_.empty()) return npos;
        const uint64_t hash = std::hash<std::string_view>{}(name);
        const size_t mask = slots_.size() - 1;
        for (size_t at = hash & mask;; at = (at + 1) & mask) {
            const Slot& slot = slots_[at];
            if (slot.position_plus_one == 0) return npos;
            if (slot.hash_bits == static_cast<uint32_t>(hash >> 32) &&
                name_at(slot.position_plus_one - 1) == name)
                return slot.position_plus_one - 1;
        }
    }

    // Stores `position` (below 2^32 - 1) for `name`, which find() has just not found.
    void insert_absent(std::string_view name, size_t position) {
        if (2 * (count_ + 1) > slots_.size()) reserve(2 * (count_ + 1));
        const uint64_t hash = std::hash<std::string_view>{}(name);
        place(Slot{static_cast<uint32_t>(hash >> 32), static_cast<uint32_t>(hash),
                   static_cast<uint32_t>(position + 1)});
        ++count_;
    }

    static constexpr size_t npos = static_cast<size_t>(-1);

  private:
    struct Slot {
        uint32_t hash_bits = 0;          // the hash's high half, compared before the name
        uint32_t hash_low = 0;           // its low half: the home slot, kept for growing
        uint32_t position_plus_one = 0;  // 0: empty
    };

    void place(const Slot& slot) {
        const uint64_t hash = (static_cast<uint64_t>(slot.hash_bits) << 32) | slot.hash_low;
        const size_t mask = slots_.size() - 1;
        size_t at = hash & mask;
        while (slots_[at].position_plus_one != 0) at = (at + 1) & mask;
        slots_[at] = slot;
    }

    std::vector<Slot> slots_;
    size_t count_ = 0;
};

}  // namespace rebox
