#include "evidence/run_record.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/assert.h"
#include "evidence/run_record_schema.h"

namespace binberg::evidence {
namespace {

using nlohmann::json;

bool holds(const json& value, Comparison comparison, const json& threshold) {
  if (comparison == Comparison::kHolds) return value.is_boolean() && value.get<bool>();
  if (value.is_number() && threshold.is_number()) {
    const double v = value.get<double>(), t = threshold.get<double>();
    switch (comparison) {
      case Comparison::kEqual:
        return v == t;
      case Comparison::kNotEqual:
        return v != t;
      case Comparison::kAtMost:
        return v <= t;
      case Comparison::kAtLeast:
        return v >= t;
      case Comparison::kBelow:
        return v < t;
      case Comparison::kAbove:
        return v > t;
      case Comparison::kHolds:
        break;
    }
    BINBERG_UNREACHABLE("comparison {}", static_cast<int>(comparison));
  }
  if (comparison == Comparison::kEqual) return value == threshold;
  if (comparison == Comparison::kNotEqual) return value != threshold;
  BINBERG_UNREACHABLE("comparison {} of {} with {}: only numbers are ordered", to_string(comparison), value.dump(),
                      threshold.dump());
}

}  // namespace

std::string_view to_string(CheckVerdict verdict) {
  switch (verdict) {
    case CheckVerdict::kPass:
      return "pass";
    case CheckVerdict::kFail:
      return "fail";
    case CheckVerdict::kSkipped:
      return "skipped";
  }
  BINBERG_UNREACHABLE("check verdict {}", static_cast<int>(verdict));
}

std::string_view to_string(Comparison comparison) {
  static constexpr std::string_view kNames[] = {"==", "!=", "<=", ">=", "<", ">", "holds"};
  return kNames[static_cast<int>(comparison)];
}

std::string_view to_string(Phase phase) {
  static constexpr std::string_view kNames[] = {"start", "inject", "detect", "recover", "verify", "note"};
  return kNames[static_cast<int>(phase)];
}

std::string_view to_string(RunVerdict verdict) {
  static constexpr std::string_view kNames[] = {"pass", "fail", "incomplete"};
  return kNames[static_cast<int>(verdict)];
}

Check Check::compare(std::string name, json value, Comparison comparison, json threshold, std::string detail) {
  const bool held = holds(value, comparison, threshold);
  return Check{std::move(name),  held ? CheckVerdict::kPass : CheckVerdict::kFail,
               std::move(value), std::move(threshold),
               comparison,       std::move(detail)};
}

Check Check::skipped(std::string name, json threshold, Comparison comparison, std::string why) {
  return Check{std::move(name), CheckVerdict::kSkipped, nullptr, std::move(threshold), comparison, std::move(why)};
}

RunVerdict RunRecord::verdict() const {
  if (!error.empty()) return RunVerdict::kFail;
  const auto any = [&](CheckVerdict verdict) {
    return std::any_of(checks.begin(), checks.end(), [&](const Check& check) { return check.verdict == verdict; });
  };
  if (any(CheckVerdict::kFail)) return RunVerdict::kFail;
  if (checks.empty() || any(CheckVerdict::kSkipped)) return RunVerdict::kIncomplete;
  return RunVerdict::kPass;
}

nlohmann::json RunRecord::to_json() const {
  json record = {
      {"schema", "binberg.drill-run/1"},
      {"run_id", run_id},
      {"drill", drill},
      {"title", title},
      {"verdict", to_string(verdict())},
      {"started_at_ms", started_at_ms},
      {"finished_at_ms", finished_at_ms},
      {"wall_seconds", static_cast<double>(std::max<std::int64_t>(0, finished_at_ms - started_at_ms)) / 1000},
      {"seed", seed},
      {"events", events},
      {"quick", quick},
      {"paths", paths},
      {"recovery_seconds", recovery_seconds ? json(*recovery_seconds) : json(nullptr)},
      {"config", config},
      {"provenance", provenance},
      {"timeline", json::array()},
      {"checks", json::array()},
      {"reconcile", reconcile},
      {"parity", parity},
      {"samples", json::object()},
      {"logs", json::array()},
  };
  if (!error.empty()) record["error"] = error;
  if (!docs.empty()) record["docs"] = docs;
  for (const TimelineEvent& event : timeline) {
    json item = {{"phase", to_string(event.phase)}, {"at_ms", event.at_ms}, {"signal", event.signal}};
    if (!event.detail.empty()) item["detail"] = event.detail;
    record["timeline"].push_back(std::move(item));
  }
  for (const Check& check : checks) {
    json item = {{"name", check.name},
                 {"verdict", to_string(check.verdict)},
                 {"value", check.value},
                 {"threshold", check.threshold},
                 {"comparison", to_string(check.comparison)}};
    if (!check.detail.empty()) item["detail"] = check.detail;
    record["checks"].push_back(std::move(item));
  }
  for (const auto& [name, series] : samples) {
    json points = json::array();
    for (const auto& [at, value] : series.points) points.push_back({at, value});
    json item = {{"unit", series.unit}, {"points", std::move(points)}};
    if (!series.description.empty()) item["description"] = series.description;
    record["samples"][name] = std::move(item);
  }
  for (const FileHash& log : logs) record["logs"].push_back({{"path", log.path}, {"sha256", log.sha256}});
  const std::vector<std::string> problems = run_record_schema().validate(record);
  BINBERG_ASSERT(problems.empty(), "drill {} made a run record its schema refuses: {}", drill,
                 fmt::join(problems, "; "));
  return record;
}

const char* run_record_schema_text() { return kRunRecordSchema; }

const JsonSchema& run_record_schema() {
  static const JsonSchema schema = JsonSchema::parse(json::parse(kRunRecordSchema));
  return schema;
}

}  // namespace binberg::evidence
