#pragma once

// The source of path A's deterministic simulation (tests/replicate/replicator_simulation_test.cc):
// a model of a MariaDB server whose binlog grows while the replicator reads it. Transactions over
// one to three tables (one of them may have no primary key) insert, update, change keys and
// delete; one may be a schema change. The model keeps every table's rows after each transaction,
// so a check can ask what a table held at any position.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "capture/source_position.h"
#include "core/source_transaction.h"
#include "support/simulation.h"

namespace binberg::replicate::simulation {

using testing::SimClock;
using testing::SimRandom;

// A table's rows by their id column (ids are unique in every table, keyed or not).
using Rows = std::map<std::int64_t, RowImage>;

struct LoggedTransaction {
  std::shared_ptr<const SourceTransaction> txn;  // without its events (they are in `events`)
  std::vector<ChangeEvent> events;
  std::map<std::string, Rows> after;  // every table's rows after it
};

class SimulatedBinlog {
 public:
  SimulatedBinlog(SimRandom& random, SimClock& clock, int tables, bool keyless_table, int keys);

  const std::vector<std::string>& tables() const { return tables_; }
  bool keyed(const std::string& table) const { return !schemas_.at(table)->primary_key.empty(); }
  std::shared_ptr<const TableSchema> schema(const std::string& table) const { return schemas_.at(table); }

  // Runs one more source transaction (a schema change of t0 when SCHEMA_CHANGE) and logs it.
  void run_transaction();
  void run_schema_change();

  const std::vector<LoggedTransaction>& log() const { return log_; }
  // Where the binlog ends now, with every GTID logged.
  capture::SourcePosition end() const;
  // The first transaction after POSITION (log().size() when none is).
  std::size_t first_after(const capture::SourcePosition& position) const;
  // TABLE's rows at POSITION (a transaction's end or the start).
  const Rows& rows_at(const std::string& table, const capture::SourcePosition& position) const;
  const Rows& rows(const std::string& table) const { return rows_.at(table); }

  static constexpr const char* kDatabase = "sim";
  static constexpr const char* kFile = "bin.000001";
  static constexpr std::uint64_t kStart = 4;

 private:
  RowImage row(const std::string& table, std::int64_t id);
  // The next transaction, LENGTH bytes of binlog long (its events not yet in it).
  std::shared_ptr<SourceTransaction> next_transaction(std::uint64_t length);
  ChangeEvent change(const std::string& table, Op op, std::optional<RowImage> before, std::optional<RowImage> after,
                     std::uint32_t row_index) const;

  SimRandom& random_;
  SimClock& clock_;
  const int keys_;
  std::vector<std::string> tables_;
  std::map<std::string, std::shared_ptr<const TableSchema>> schemas_;
  std::map<std::string, Rows> rows_;
  std::map<std::string, Rows> initial_;
  std::vector<LoggedTransaction> log_;
  std::int64_t next_value_ = 1;
  std::uint64_t position_ = kStart;
  std::uint64_t next_sequence_ = 1;  // GTID 0-1-N
};

}  // namespace binberg::replicate::simulation
