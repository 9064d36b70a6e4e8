#pragma once

// `binberg gen`'s workload: a deterministic stream of source transactions over the generator's
// tables, as SQL text. The same seed, options and starting keys give the same statements byte for
// byte (their SHA-256 is the run's plan digest; `binberg gen --dry-run | sha256sum` recomputes it).
//
// The tables (prefix P, see create_tables_sql):
//   P_accounts (id BIGINT PRIMARY KEY, owner, balance DECIMAL(18,2), version, updated DATETIME(6),
//               status ENUM, note TEXT NULL)
//   P_orders   (id BIGINT PRIMARY KEY, account_id, amount DECIMAL(12,2), quantity, placed
//               TIMESTAMP(6) NULL, score DOUBLE NULL, payload VARBINARY(32) NULL, version)
// Every UPDATE increments `version`, so each matched row changes and logs exactly one row event:
// the generator knows the exact number of events each transaction produces. Schema changes
// (WorkloadOptions::ddl_every) add columns the generated statements never name, so the statements
// stay valid on any of the table's versions.

#include <cstdint>
#include <string>
#include <vector>

#include "lab/prng.h"

namespace binberg::lab {

struct Mix {
  unsigned insert = 60, update = 30, remove = 10;  // relative weights of row operations
};

struct WorkloadOptions {
  std::uint64_t seed = 1;
  std::string prefix = "gen";
  Mix mix;
  unsigned max_statements = 4;         // statements per transaction: uniform in [1, max]
  unsigned rows_per_statement = 1;     // rows an INSERT writes / an UPDATE or DELETE matches (at most)
  double multi_table_share = 0.3;      // transactions whose statements go to random tables
  std::size_t hot_keys = 100;          // the hot set: the first keys of each table's live set
  double hot_share = 0.5;              // updates and deletes that pick from the hot set
  double key_change_share = 0.02;      // updates that change the primary key
  std::uint64_t large_every = 0;       // every Nth transaction is a large one (0: never)
  std::uint64_t large_rows = 100'000;  // rows inserted by a large transaction
  std::uint64_t ddl_every = 0;         // every Nth transaction is a schema change (0: never); see ddl_step
};

// Row events of one kind, as the binlog will carry them.
struct EventCounts {
  std::uint64_t inserts = 0, updates = 0, deletes = 0;
  std::uint64_t total() const { return inserts + updates + deletes; }
  EventCounts& operator+=(const EventCounts& other);
};

struct Transaction {
  std::uint64_t number = 0;  // 1-based, in generation order
  std::vector<std::string> statements;
  EventCounts events;
  bool schema_change = false;  // one ALTER TABLE, no row events
};

// The live primary keys of one generator table (what the generator may update or delete).
struct TableKeys {
  std::vector<std::int64_t> live;
  std::int64_t next_id = 1;  // larger than every key ever used
};

inline constexpr const char* kTableSuffixes[] = {"_accounts", "_orders"};
inline constexpr std::size_t kTableCount = 2;

// DROP + CREATE of the generator's tables.
std::vector<std::string> create_tables_sql(const std::string& prefix);

class Generator {
 public:
  // KEYS: the live keys of each table (kTableSuffixes order), e.g. read from the source.
  Generator(WorkloadOptions options, std::vector<TableKeys> keys);

  Transaction next();
  // A transaction of ROWS inserts into TABLE (initial loads), in statements of up to 1000 rows.
  Transaction bulk_insert(std::size_t table, std::uint64_t rows);

  const std::vector<TableKeys>& keys() const { return keys_; }
  std::string table_name(std::size_t table) const;

 private:
  std::string insert(std::size_t table, std::uint64_t rows, EventCounts& events);
  std::string update(std::size_t table, EventCounts& events);
  std::string remove(std::size_t table, EventCounts& events);
  std::vector<std::size_t> pick_keys(std::size_t table, std::size_t count);
  std::string row_values(std::size_t table, std::int64_t id);
  std::string set_clause(std::size_t table);
  Transaction ddl_step();

  WorkloadOptions options_;
  std::vector<TableKeys> keys_;
  Prng random_;
  std::uint64_t generated_ = 0;
  std::uint64_t schema_changes_ = 0;
};

}  // namespace binberg::lab
