#pragma once

// The metrics `binberg sink` exports (docs/metrics.md lists them with their meaning).

#include <cstdint>
#include <optional>

#include "metrics/metrics.h"

namespace binberg::sink {

class SessionState;
class SinkInput;

struct SinkMetrics {
  explicit SinkMetrics(metrics::Registry& registry);

  // Scale-out only (a lone sink does not export it): topics whose tables this sink writes.
  metrics::Gauge& owned_tables();
  // The gauges of a session at NOW_MS: its lag per partition, records held and QUEUED (none: the
  // session is not reading yet).
  void report_lag(const SessionState& state, SinkInput& input, std::int64_t now_ms, std::optional<std::size_t> queued);

  metrics::Registry& registry;
  metrics::Counter& records;
  metrics::Counter& applied;
  metrics::Family& redelivered;  // {by}: offset, position
  metrics::Counter& dead_letters;
  metrics::Counter& dead_letters_truncated;  // diverted (dead letters and quarantine) without their value
  metrics::Counter& quarantined;
  metrics::Family& replays;  // {verdict}: applied, superseded, duplicate
  metrics::Counter& commits;
  metrics::Counter& fenced;
  metrics::Counter& schema_changes;
  metrics::Counter& rollbacks;
  metrics::Gauge& held;
  metrics::Gauge& open_transactions;
  metrics::Gauge& queued;
  metrics::Gauge& stopped_tables;
  metrics::Family& lag;          // {topic, partition}: records
  metrics::Family& lag_seconds;  // {topic, partition}
};

}  // namespace binberg::sink
