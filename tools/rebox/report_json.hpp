// JSON renderings of plan, conversion and verification results for --json reports.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "rebox/rebox.hpp"

namespace rebox::cli {

nlohmann::json verify_report_to_json(const VerifyReport& report);
nlohmann::json plan_to_json(const PlanReport& plan);
nlohmann::json quantize_report_to_json(const QuantizeReport& report);
// One line per tensor ("NAME FROM -> TO WHY"), the notes, and "would write"/"wrote" with sizes.
void print_quantize_report(const QuantizeReport& report);
// Writes json to path (pretty, trailing newline) atomically; throws rebox::Error on I/O failure.
void write_json_file(const std::string& path, const nlohmann::json& json);

}  // namespace rebox::cli
