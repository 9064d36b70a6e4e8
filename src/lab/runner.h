#pragma once

// Runs a workload: generated transactions are executed against the source (or printed), paced
// to a rate if asked, with progress logs and a summary. The statements, each followed by ";\n"
// and framed by "START TRANSACTION;\n" ... "COMMIT;\n", are exactly what --dry-run prints and
// what the plan digest (SHA-256) covers.

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "lab/workload.h"
#include "mysql/connection.h"

namespace binberg::lab {

struct RunLimits {
  std::uint64_t transactions = 0;  // stop after this many transactions (0: no limit)
  std::uint64_t events = 0;        // or at the first transaction boundary at this many row events
  double rate = 0;                 // row events per second to pace to (0: as fast as possible)
  std::chrono::milliseconds progress{5000};
  std::function<bool()> stop = [] { return false; };
};

struct RunSummary {
  std::uint64_t transactions = 0, statements = 0;
  std::uint64_t schema_changes = 0;  // transactions that were one ALTER TABLE
  EventCounts events;
  double seconds = 0;
  std::string plan_digest;  // SHA-256 of the SQL text, lowercase hex
};

// Executes one transaction somewhere: against a server, or onto standard output.
using TransactionSink = std::function<void(const Transaction& txn, const std::string& sql_text)>;

RunSummary run_workload(Generator& generator, const RunLimits& limits, const TransactionSink& sink);

// The SQL text of TXN as the plan digest covers it.
std::string transaction_text(const Transaction& txn);

// The live keys of the generator's tables on the server (empty tables: none).
std::vector<TableKeys> load_keys(mysql::Connection& connection, const std::string& prefix);

// A sink that runs each transaction on CONNECTION. With COMMIT_LOG, after each commit it appends
// "<gtid> <unix µs after COMMIT returned> <row events>\n" there (for freshness measurements).
TransactionSink server_sink(mysql::Connection& connection, const std::string& commit_log = "");

}  // namespace binberg::lab
