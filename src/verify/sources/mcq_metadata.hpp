// verify's own reading of the mcq-v1 metadata (safetensors __metadata__["mcq"], a JSON string:
// {"version":1,"tensors":{NAME:{"bits","group","layout","shape"}}}), independent of
// source/mcq_reader. Every rule of the spec is checked; a bad entry becomes a problem line and is
// left out.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace rebox::verify_ref::mcq {

struct Entry {
    unsigned bits = 0;           // 1..8
    uint64_t group = 0;          // >= 1, divides rows*cols
    std::vector<int64_t> shape;  // [rows, cols], both >= 1
    uint64_t element_count = 0;  // rows*cols (no overflow)
};

struct FileMetadata {
    std::map<std::string, Entry> entries;  // by the tensor name the metadata lists
};

// file_name is used in problem lines ("FILE: __metadata__.mcq[.NAME]: what (expected ...)").
FileMetadata parse_file_metadata(std::string_view json_text, const std::string& file_name,
                                 std::vector<std::string>& problems);

}  // namespace rebox::verify_ref::mcq
