#include "replicate/replicator_metrics.h"

#include "core/version.h"

namespace binberg::replicate {

ReplicatorMetrics::ReplicatorMetrics(metrics::Registry& registry_)
    : registry(registry_),
      transactions(registry.counter("binberg_replicate_transactions_total", "Source transactions read from the binlog")
                       .counter()),
      skipped_transactions(registry
                               .counter("binberg_replicate_skipped_transactions_total",
                                        "Transactions the Iceberg tables already held (re-read after a restart)")
                               .counter()),
      events(registry.counter("binberg_replicate_events_total", "Row events applied to the Iceberg tables",
                              {"table", "op"})),
      snapshot_rows(
          registry.counter("binberg_replicate_snapshot_rows_total", "Rows copied by the initial snapshot", {"table"})),
      commits(registry.counter("binberg_replicate_commits_total", "Iceberg commits (catalog transactions)").counter()),
      commit_conflicts(registry
                           .counter("binberg_replicate_commit_conflicts_total",
                                    "Commits lost to another writer of a table (compaction, expiry); each one "
                                    "reopens the tables and resumes from their positions")
                           .counter()),
      bytes_written(
          registry.counter("binberg_replicate_bytes_written_total", "Bytes of data and delete files committed")
              .counter()),
      commit_duration(registry
                          .histogram("binberg_replicate_commit_duration_seconds",
                                     "Time to write and commit one snapshot of every table it touches",
                                     {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10})
                          .histogram()),
      commit_events(registry
                        .histogram("binberg_replicate_commit_events", "Row events per commit",
                                   {1, 10, 100, 1000, 10'000, 100'000, 1'000'000})
                        .histogram()),
      pending_events(
          registry.gauge("binberg_replicate_pending_events", "Row events read but not yet committed").gauge()),
      source_lag(registry
                     .gauge("binberg_replicate_source_lag_seconds",
                            "Seconds from the source commit of the last transaction read to its reading (0 when idle)")
                     .gauge()),
      last_commit_time(
          registry.gauge("binberg_replicate_last_commit_timestamp_seconds", "Unix time of the last Iceberg commit")
              .gauge()),
      committed_source_time(registry
                                .gauge("binberg_replicate_committed_source_timestamp_seconds",
                                       "Unix time of the source commit of the last transaction committed to Iceberg")
                                .gauge()),
      commit_interval(
          registry.gauge("binberg_replicate_commit_interval_seconds", "Seconds between the last two commits").gauge()),
      stopped_tables(registry
                         .gauge("binberg_replicate_stopped_tables",
                                "Captured tables not replicated because binberg cannot map them onto Iceberg tables "
                                "([types], docs/configuration.md)")
                         .gauge()) {
  registry.gauge("binberg_build_info", "binberg's version", {"version"}).gauge({kVersion}).set(1);
}

}  // namespace binberg::replicate
