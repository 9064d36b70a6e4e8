#include "sink/sink_metrics.h"

#include "sink/session_state.h"
#include "sink/sink_ports.h"

namespace binberg::sink {

SinkMetrics::SinkMetrics(metrics::Registry& registry_)
    : registry(registry_),
      records(registry.counter("binberg_sink_records_total", "Records read").counter()),
      applied(registry.counter("binberg_sink_applied_total", "Changes applied to the tables").counter()),
      redelivered(registry.counter("binberg_sink_redelivered_total",
                                   "Records skipped as already applied, by how they were recognized", {"by"})),
      dead_letters(
          registry.counter("binberg_sink_dead_letters_total", "Undecodable records sent to <topic>.dlq").counter()),
      dead_letters_truncated(registry
                                 .counter("binberg_sink_dead_letters_truncated_total",
                                          "Records too large to divert whole, diverted without their value (its "
                                          "SHA-256 in binberg.original_sha256)")
                                 .counter()),
      quarantined(registry
                      .counter("binberg_sink_quarantined_total",
                               "Records whose key is not their row's key, sent to <topic>.quarantine")
                      .counter()),
      replays(registry.counter("binberg_sink_replays_total", "Replayed dead letters, by what the sink did with them",
                               {"verdict"})),
      commits(registry.counter("binberg_sink_commits_total", "Iceberg commits").counter()),
      fenced(registry
                 .counter("binberg_sink_fenced_total",
                          "Tables this sink stopped writing because another sink claimed them after it")
                 .counter()),
      schema_changes(
          registry.counter("binberg_sink_schema_changes_total", "DDL statements applied to the tables").counter()),
      rollbacks(registry.counter("binberg_sink_rollbacks_total", "Sessions started over from the committed tables")
                    .counter()),
      held(registry
               .gauge("binberg_sink_held_records",
                      "Records read behind a schema change that not every partition of its topic reached yet")
               .gauge()),
      open_transactions(registry.gauge("binberg_sink_open_transactions", "Source transactions partly read").gauge()),
      queued(registry.gauge("binberg_sink_queued_records", "Records read and decoded, waiting for the sink's thread")
                 .gauge()),
      stopped_tables(registry
                         .gauge("binberg_sink_stopped_tables",
                                "Tables this sink stopped writing: at a refused schema change, or unmappable ([types])")
                         .gauge()),
      lag(registry.gauge("binberg_sink_lag_records", "Records between a partition's committed offset and its end",
                         {"topic", "partition"})),
      lag_seconds(registry.gauge(
          "binberg_sink_lag_seconds",
          "0 when a partition is read to its end and committed; else seconds since the first record past its "
          "committed offset was written to Kafka (before it is read: since the newest committed one was)",
          {"topic", "partition"})) {}

metrics::Gauge& SinkMetrics::owned_tables() {
  return registry.gauge("binberg_sink_owned_tables", "Topics whose tables this sink writes").gauge();
}

// Lag in seconds: 0 once the partition is read to its end and all of it committed; else the age of
// the first record read past the committed offset, or, while none is read yet, the age of the
// newest record the tables hold (an upper bound: the first one they lack came after it).
void SinkMetrics::report_lag(const SessionState& state, SinkInput& input, std::int64_t now_ms,
                             std::optional<std::size_t> queued_records) {
  if (queued_records) queued.set(static_cast<double>(*queued_records));
  held.set(static_cast<double>(state.held_records()));
  for (const auto& [topic, table] : state.tables()) {
    for (const auto& [partition, committed] : table.committed) {
      const auto high = input.end_offset(topic, partition);
      if (!high) continue;
      const std::vector<std::string> labels = {topic, std::to_string(partition.value)};
      lag.gauge(labels).set(static_cast<double>(high->value - committed.next_offset.value));
      const auto read = table.progress.find(partition);
      const bool uncommitted = read != table.progress.end() && read->second.next_offset > committed.next_offset;
      const auto pending = table.pending_since_ms.find(partition);
      const envelope::TopicPartition where{topic, partition.value};
      if (!uncommitted && !state.drain().waiting_in(where) && state.is_at_end(where)) {
        lag_seconds.gauge(labels).set(0);
      } else if (pending != table.pending_since_ms.end()) {
        lag_seconds.gauge(labels).set(static_cast<double>(now_ms - pending->second) / 1000.0);
      } else if (committed.timestamp_ms > 0) {
        lag_seconds.gauge(labels).set(static_cast<double>(now_ms - committed.timestamp_ms) / 1000.0);
      }
    }
  }
}

}  // namespace binberg::sink
