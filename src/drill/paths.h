#pragma once

// The pipelines a drill runs side by side over one workload, from one binlog: path A, path B, or
// both. Faults reach the process they name in whichever path runs it; recovery waits for every
// path; verify runs each path's checks and, when both ran, their parity:
//
//   parity_a_b   for every table, path A's digest equals path B's, and both equal the source's

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "drill/pipeline.h"

namespace binberg::drill {

enum class PathChoice { kA, kB, kBoth };

class Paths {
 public:
  Paths(DrillRun& run, const Workload& workload, PathChoice choice);

  // "A", "B" or "A and B".
  std::string names() const;
  const std::vector<std::unique_ptr<Pipeline>>& all() const { return paths_; }
  // The path that runs process NAME ("replicate", "source", "sink").
  Pipeline& owner_of(const std::string& process);
  // Every process of every path, each path's in its start order.
  std::vector<std::string> processes() const;

  void start(const Environment& environment = {});
  // The fewest snapshots any path committed so far: progress that every path made.
  std::size_t committed_snapshots();
  // Waits until every path's tables hold POSITION; the latest of their commit times.
  std::int64_t wait_until_tables_contain(const mysql::BinlogPosition& position, std::chrono::seconds timeout);
  // Sends SIGNAL to every process at once, then waits for each to exit.
  std::vector<ProcessExit> signal_all(int signal, std::chrono::seconds timeout);

  // Each path's checks, then parity_a_b when both ran.
  void verify(const Workload& workload);

 private:
  void check_parity();

  DrillRun& run_;
  std::vector<std::unique_ptr<Pipeline>> paths_;
};

}  // namespace binberg::drill
