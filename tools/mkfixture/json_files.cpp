// The fixtures' JSON side files (see json_files.hpp).
#include "json_files.hpp"

#include <fstream>
#include <stdexcept>

namespace mkfixture {

nlohmann::ordered_json read_json_file(const std::filesystem::path& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error(path.string() + ": cannot read");
    try {
        return nlohmann::ordered_json::parse(in);
    } catch (const std::exception& e) {
        throw std::runtime_error(path.string() + ": not JSON (" + e.what() + ")");
    }
}

void write_json_file(const std::filesystem::path& path, const nlohmann::ordered_json& value,
                     int indent) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << value.dump(indent) << "\n";
    if (!out) throw std::runtime_error(path.string() + ": cannot write");
}

}  // namespace mkfixture
