// The gate's outputs: the terminal table, a Markdown summary for a CI job page, JUnit XML (one test case per key,
// a failure per regression) for CI test reporters, and JSON for scripts.
#pragma once

#include <iosfwd>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "gate/gate.hpp"

namespace gemmtune {

// Shared wording of the reports.
std::string verdict_label(const CaseComparison& c);  // "REGRESSED", "improved", "throttled", "within noise", "unchanged"
std::string format_change(double ratio);             // "+12.3%", "-4.0%"
std::string format_us(double us);                    // "123.45"
std::string gate_headline(const GateResult& r);      // "FAILED: 2 of 40 cases regressed"

void write_gate_table(std::ostream& out, const GateResult& r);
std::string gate_markdown(const GateResult& r);
std::string gate_junit(const GateResult& r);
nlohmann::json gate_json(const GateResult& r);

}  // namespace gemmtune
