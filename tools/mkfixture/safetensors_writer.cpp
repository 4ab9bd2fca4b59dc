// Implementation of the fixture generator's own safetensors writer.
#include "safetensors_writer.hpp"

#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace mkfixture {

std::string json_escape(const std::string& text) {
    std::string out;
    out.reserve(text.size() + 8);
    for (unsigned char c : text) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
        } else {
            out += static_cast<char>(c);
        }
    }
    return out;
}

std::string safetensors_header(const std::vector<StTensor>& tensors,
                               const std::vector<std::pair<std::string, std::string>>& metadata) {
    std::string header = "{";
    bool first = true;
    if (!metadata.empty()) {
        header += "\"__metadata__\":{";
        for (size_t i = 0; i < metadata.size(); ++i) {
            if (i) header += ",";
            header += "\"" + json_escape(metadata[i].first) + "\":\"" +
                      json_escape(metadata[i].second) + "\"";
        }
        header += "}";
        first = false;
    }
    uint64_t offset = 0;
    for (const StTensor& t : tensors) {
        if (!first) header += ",";
        first = false;
        header += "\"" + json_escape(t.name) + "\":{\"dtype\":\"" + t.dtype + "\",\"shape\":[";
        for (size_t i = 0; i < t.shape.size(); ++i) {
            if (i) header += ",";
            header += std::to_string(t.shape[i]);
        }
        header += "],\"data_offsets\":[" + std::to_string(offset) + "," +
                  std::to_string(offset + t.byte_count) + "]}";
        offset += t.byte_count;
    }
    header += "}";
    while (header.size() % 8 != 0) header += ' ';
    return header;
}

void write_safetensors(const std::filesystem::path& path, const std::vector<StTensor>& tensors,
                       const std::vector<std::pair<std::string, std::string>>& metadata) {
    const std::string header = safetensors_header(tensors, metadata);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error(path.string() + ": cannot open for writing");
    uint64_t length = header.size();
    unsigned char length_le[8];
    for (int i = 0; i < 8; ++i) length_le[i] = static_cast<unsigned char>(length >> (8 * i));
    out.write(reinterpret_cast<const char*>(length_le), 8);
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
    for (const StTensor& t : tensors) {
        const auto before = out.tellp();
        t.write(out);
        const auto written = static_cast<uint64_t>(out.tellp() - before);
        if (written != t.byte_count)
            throw std::runtime_error(path.string() + ": " + t.name + ": wrote " +
                                     std::to_string(written) + " bytes (expected " +
                                     std::to_string(t.byte_count) + ")");
    }
    out.flush();
    if (!out) throw std::runtime_error(path.string() + ": write failed");
}

}  // namespace mkfixture
