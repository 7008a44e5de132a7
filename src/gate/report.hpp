// The gate's outputs: the terminal table, a Markdown summary for a CI job page, JUnit XML (one test case per problem
// and per key, a failure per regression, new cases as skipped) for CI test reporters, and JSON for scripts. Each
// reports the per-problem verdicts first: a problem that got slower is what slows a program.
#pragma once

#include <iosfwd>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "gate/gate.hpp"

namespace gemmtune {

// Shared wording of the reports.
// "REGRESSED", "improved", "run-to-run" (spared by the baseline's spread), "isolated" (moved alone), "throttled",
// "within noise", "unchanged"
std::string verdict_label(const CaseComparison& c);
std::string verdict_label(const ProblemComparison& p);  // "REGRESSED", "improved", "unchanged"
std::string format_change(double ratio);             // "+12.3%", "-4.0%"
std::string format_us(double us);                    // "123.45"
std::string gate_headline(const GateResult& r);      // "FAILED: 1 of 20 problems, 2 of 40 cases regressed"
// What failed of a regressed problem: "best +12.0% (own/a -> own/b); chosen +12.0% (own/a)"
std::string problem_change_text(const ProblemComparison& p);
// The closing lines on comparisons that were slower yet not failed (run-to-run, isolated); "" when there were none.
std::string spared_text(const GateResult& r);

void write_gate_table(std::ostream& out, const GateResult& r);
std::string gate_markdown(const GateResult& r);
std::string gate_junit(const GateResult& r);
nlohmann::json gate_json(const GateResult& r);

}  // namespace gemmtune
