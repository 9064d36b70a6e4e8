#pragma once

// What a pipeline captures (a source table) and when it cuts its commits. Path A's replicator and
// path B's source and sink share both.

#include <chrono>
#include <cstddef>
#include <string>

namespace binberg::capture {

struct CapturedTable {
  std::string database;
  std::string table;
  std::string qualified_name() const { return database + "." + table; }
};

struct CommitPolicy {
  // A commit is cut at the first transaction boundary after any of these is reached.
  std::chrono::milliseconds interval{1000};
  std::size_t max_events = 200'000;
  // Tables without changes get a snapshot that only records the position this often, so a
  // restart does not re-read (or miss, once purged) binlog they have no changes in.
  std::chrono::milliseconds idle_position_interval{60'000};
};

}  // namespace binberg::capture
