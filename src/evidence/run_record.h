#pragma once

// The evidence a drill leaves: one run record per drill run (docs/run-record.schema.json, which
// is compiled into binberg and checked before a record is written or read). What ran, on what
// (provenance detected at run time), the timeline of inject, detect, recover and verify read from
// the system's own signals, every check with its value and threshold, what reconcile found, and
// metric samples over time for charts.

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "evidence/json_schema.h"

namespace binberg::evidence {

enum class CheckVerdict { kPass, kFail, kSkipped };
std::string_view to_string(CheckVerdict verdict);

// How a check compares its value with its threshold.
enum class Comparison { kEqual, kNotEqual, kAtMost, kAtLeast, kBelow, kAbove, kHolds };
std::string_view to_string(Comparison comparison);

struct Check {
  std::string name;  // snake_case, unique in its record
  CheckVerdict verdict = CheckVerdict::kFail;
  nlohmann::json value;      // what was measured; null when skipped
  nlohmann::json threshold;  // what it had to be
  Comparison comparison = Comparison::kEqual;
  std::string detail;  // why it failed or was skipped, or what it means

  // A check computed from VALUE against THRESHOLD (numbers compare by value; kHolds: VALUE is true).
  static Check compare(std::string name, nlohmann::json value, Comparison comparison, nlohmann::json threshold,
                       std::string detail = "");
  // A check that could not be computed: never a pass.
  static Check skipped(std::string name, nlohmann::json threshold, Comparison comparison, std::string why);
};

enum class Phase { kStart, kInject, kDetect, kRecover, kVerify, kNote };
std::string_view to_string(Phase phase);

struct TimelineEvent {
  Phase phase = Phase::kNote;
  std::int64_t at_ms = 0;  // Unix time
  std::string signal;      // what the time was read from: a log line, an exit status, a snapshot, a metric
  std::string detail;
};

struct Series {
  std::string unit;
  std::string description;
  std::vector<std::pair<std::int64_t, double>> points;  // (Unix ms, value)
};

struct FileHash {
  std::string path;  // relative to the run's folder
  std::string sha256;
};

enum class RunVerdict { kPass, kFail, kIncomplete };
std::string_view to_string(RunVerdict verdict);

struct RunRecord {
  std::string run_id, drill, title;
  std::string error;  // what stopped the drill before its checks, if anything
  std::string docs;   // its runbook section
  std::int64_t started_at_ms = 0, finished_at_ms = 0;
  std::uint64_t seed = 0, events = 0;
  bool quick = false;
  std::vector<std::string> paths;  // "A", "B"
  std::optional<double> recovery_seconds;
  nlohmann::json config = nlohmann::json::object();
  nlohmann::json provenance = nlohmann::json::object();
  std::vector<TimelineEvent> timeline;
  std::vector<Check> checks;
  nlohmann::json reconcile = nlohmann::json::array();
  nlohmann::json parity = nlohmann::json::array();
  std::map<std::string, Series> samples;
  std::vector<FileHash> logs;

  // Pass only when every check held and at least one ran; fail when one failed or the drill broke
  // off (error); incomplete when none failed but one was skipped.
  RunVerdict verdict() const;
  nlohmann::json to_json() const;
};

// docs/run-record.schema.json as compiled into binberg.
const JsonSchema& run_record_schema();
const char* run_record_schema_text();

}  // namespace binberg::evidence
