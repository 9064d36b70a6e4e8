#pragma once

// How path A's commits reach the catalog: every writer prepared, then all their tables moved in
// one catalog transaction, with the commit metrics kept on the way.

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "core/clock.h"
#include "iceberg/catalog.h"
#include "iceberg/table_writer.h"
#include "replicate/replicator_metrics.h"

namespace binberg::replicate {

class TableCommitter {
 public:
  TableCommitter(iceberg::Catalog& catalog, TimeSource& time, ReplicatorMetrics& metrics)
      : catalog_(catalog), time_(time), metrics_(metrics) {}

  // Prepares every writer, then moves all their tables in one catalog transaction: the atomic
  // visibility invariant (a commit is seen in every table it touches, or in none). SUMMARIES: one
  // per writer. Returns the time the prepare and catalog transaction took.
  std::chrono::milliseconds commit(const std::vector<iceberg::TableWriter*>& writers, const std::string& commit_id,
                                   const std::vector<std::map<std::string, std::string>>& summaries);

 private:
  iceberg::Catalog& catalog_;
  TimeSource& time_;
  ReplicatorMetrics& metrics_;
};

}  // namespace binberg::replicate
