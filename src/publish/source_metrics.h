#pragma once

// The metrics `binberg source` exports for each session (docs/metrics.md lists them with their meaning).

#include "metrics/metrics.h"

namespace binberg::publish {

struct SourceMetrics {
  explicit SourceMetrics(metrics::Registry& registry);

  metrics::Counter& transactions;     // read from the binlog
  metrics::Counter& commits;          // saves of the positions
  metrics::Histogram& save_duration;  // seconds a save blocks the source
  metrics::Gauge& pending;            // records produced, not yet committed
  metrics::Gauge& lag;                // seconds between a transaction's source commit and its reading
  metrics::Counter& schema_changes;   // DDL statements published
  metrics::Gauge& stopped;            // tables the registry refused a new schema of
};

}  // namespace binberg::publish
