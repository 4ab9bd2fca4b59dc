// write_gguf(): a whole GGUF file through AtomicOutput, one tensor buffer at a time: metadata, then
// each tensor's bytes from fill() at data_offset + offset, zero padding after every tensor (incl.
// the last), commit. Kept apart from GgufLayout so the layout links without the output code.
#include <algorithm>

#include "format/atomic_output.hpp"
#include "format/gguf_layout.hpp"

namespace rebox {

void write_gguf(const std::filesystem::path& target, const GgufLayout& layout,
                const std::function<void(size_t, std::span<uint8_t>)>& fill, bool force) {
    AtomicOutput output(target, force);
    output.resize(layout.file_size());
    const std::vector<uint8_t> metadata = layout.serialize_metadata();
    output.pwrite(metadata, 0);
    const uint64_t data_offset = metadata.size();

    uint64_t largest = 0;
    for (const GgufTensorInfo& t : layout.tensors()) largest = std::max(largest, t.nbytes);
    std::vector<uint8_t> buffer(largest);
    const std::vector<uint8_t> zeros(layout.alignment(), 0);
    for (size_t i = 0; i < layout.tensors().size(); ++i) {
        const GgufTensorInfo& t = layout.tensors()[i];
        const std::span<uint8_t> data(buffer.data(), t.nbytes);
        std::fill(data.begin(), data.end(), uint8_t{0});
        fill(i, data);
        output.pwrite(data, data_offset + t.offset);
        const uint64_t padding = gguf_pad(t.nbytes, layout.alignment()) - t.nbytes;
        if (padding > 0)
            output.pwrite(std::span<const uint8_t>(zeros.data(), padding),
                          data_offset + t.offset + t.nbytes);
    }
    output.commit();
}

}  // namespace rebox
