// Importance matrices as llama-quantize reads them (common/imatrix-loader.cpp and
// tools/quantize/quantize.cpp load_imatrix, v0.4.0): llama.cpp's GGUF imatrix (W.in_sum2 and
// W.counts per weight, with imatrix.datasets / chunk_count / chunk_size) or the legacy
// imatrix.dat, told apart by content, and normalized the same way: GGUF sums / lround(count) per
// expert (1.0 where the count is 0), legacy sums / ncall (the sums where ncall is 0).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace rebox {

struct Imatrix {
    std::map<std::string, std::vector<float>> entries;  // GGUF tensor name -> normalized weights
    std::vector<std::string> datasets;
    int32_t chunk_count = 0;
    bool legacy = false;
};

// --include-weights / --exclude-weights, as llama-quantize's prepare_imatrix applies them after
// loading: every entry whose name contains one of `exclude` (a plain substring) is dropped; with
// `include`, only the entries whose name contains one of them are kept. Not both at once.
struct ImatrixFilter {
    std::vector<std::string> include;
    std::vector<std::string> exclude;
};

// Throws Error (input class) naming the file and entry for anything llama-quantize would not
// load (truncated data, a length past the end, sums without counts, a GGUF imatrix without its
// three metadata keys, no entries) and for a non-finite normalized value in an entry the filter
// keeps (llama-quantize checks only those). Entries may be empty after filtering: then the file
// is quantized as without an imatrix.
Imatrix load_imatrix(const std::filesystem::path& path, const ImatrixFilter& filter = {});

}  // namespace rebox
