#pragma once

// The metrics `binberg replicate` exports (docs/metrics.md lists them with their meaning).

#include <string>

#include "metrics/metrics.h"

namespace binberg::replicate {

struct ReplicatorMetrics {
  explicit ReplicatorMetrics(metrics::Registry& registry);

  metrics::Registry& registry;
  metrics::Counter& transactions;          // read from the binlog
  metrics::Counter& skipped_transactions;  // already in the tables (after a restart)
  metrics::Family& events;                 // {table, op}: row events applied
  metrics::Family& snapshot_rows;          // {table}
  metrics::Counter& commits;
  metrics::Counter& commit_conflicts;  // catalog swaps lost to another writer (maintenance)
  metrics::Counter& bytes_written;
  metrics::Histogram& commit_duration;    // seconds, prepare through catalog transaction
  metrics::Histogram& commit_events;      // row events per commit
  metrics::Gauge& pending_events;         // read, not yet committed (lag in events)
  metrics::Gauge& source_lag;             // seconds between a transaction's source commit and its reading
  metrics::Gauge& last_commit_time;       // unix seconds of the last Iceberg commit
  metrics::Gauge& committed_source_time;  // unix seconds of the source commit of the last committed transaction
  metrics::Gauge& commit_interval;        // seconds between the last two commits
  metrics::Gauge& stopped_tables;         // captured tables binberg cannot map, left out
};

}  // namespace binberg::replicate
