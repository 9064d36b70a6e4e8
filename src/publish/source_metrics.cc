#include "publish/source_metrics.h"

namespace binberg::publish {

SourceMetrics::SourceMetrics(metrics::Registry& registry)
    : transactions(
          registry.counter("binberg_source_transactions_total", "Source transactions read from the binlog").counter()),
      commits(registry
                  .counter("binberg_source_commits_total",
                           "Saves of the source positions (Kafka transactions in exactly-once mode)")
                  .counter()),
      save_duration(registry
                        .histogram("binberg_source_save_duration_seconds",
                                   "Time a save blocks the source: every record acknowledged, the Kafka "
                                   "transaction committed (exactly-once)",
                                   {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5})
                        .histogram()),
      pending(registry.gauge("binberg_source_pending_records", "Records produced, not yet committed").gauge()),
      lag(registry.gauge("binberg_source_lag_seconds", "Seconds between a transaction's source commit and its reading")
              .gauge()),
      schema_changes(registry
                         .counter("binberg_source_schema_changes_total",
                                  "DDL statements on captured tables published to their topics")
                         .counter()),
      stopped(
          registry
              .gauge("binberg_source_stopped_tables", "Tables stopped because the registry refused their new schema")
              .gauge()) {}

}  // namespace binberg::publish
