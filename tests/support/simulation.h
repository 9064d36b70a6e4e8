#pragma once

// Deterministic simulation, after TigerBeetle's VOPR and FoundationDB's simulation workloads: one
// seed drives every choice a run makes (the stream it feeds, the faults, the clock), the
// invariants are checked after every step against what a real catalog holds, and a failure prints
// the one command that replays its seed. The pieces here are shared by the simulations of binberg's
// pipelines (tests/sink/sink_simulation_test.cc, tests/replicate/replicator_simulation_test.cc).
//
//   TEST(SinkSimulation, ...) {
//     binberg::testing::run_seeds(1'000, [](std::uint64_t seed) { ... SimRandom random(seed); ... });
//   }
//
// BINBERG_SIMULATION_SEED=N replays seed N alone; BINBERG_SIMULATION_SEEDS=N runs N seeds (from
// BINBERG_SIMULATION_FIRST_SEED, default 1) instead of the test's default count.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/change_event.h"
#include "core/clock.h"
#include "iceberg/arrow_rows.h"
#include "iceberg/catalog.h"
#include "lab/prng.h"
#include "support/temp_dir.h"

namespace binberg::testing {

// The simulation's seeded numbers: the workload generator's generator (xoshiro256** seeded by
// SplitMix64), the same on every platform and standard library — <random>'s distributions are not
// specified exactly.
class SimRandom : public lab::Prng {
 public:
  using lab::Prng::Prng;

  bool one_in(std::uint64_t n) { return below(n) == 0; }
  bool percent(std::uint64_t chance) { return below(100) < chance; }
  template <typename T>
  const T& pick(const std::vector<T>& items) {
    return items.at(below(items.size()));
  }
};

// Simulated time: the steady clock and the wall clock move only when the simulation moves them
// (a sleep moves them by its duration).
class SimClock final : public TimeSource {
 public:
  static constexpr std::int64_t kStartUnixMillis = 1'750'000'000'000;

  std::chrono::steady_clock::time_point now() override { return std::chrono::steady_clock::time_point(elapsed_); }
  std::int64_t unix_millis() override {
    return kStartUnixMillis + std::chrono::duration_cast<std::chrono::milliseconds>(elapsed_).count();
  }
  void sleep_for(std::chrono::milliseconds duration) override { advance(duration); }
  void advance(std::chrono::milliseconds duration) { elapsed_ += duration; }

 private:
  std::chrono::steady_clock::duration elapsed_{std::chrono::hours(1)};
};

// The command that replays SEED of the test running now: its binary, its gtest filter and
// BINBERG_SIMULATION_SEED.
std::string replay_command(std::uint64_t seed);

// Runs RUN for each seed this test is to run (DEFAULT_COUNT unless the environment says otherwise,
// see above) and stops at the first that fails — a gtest failure or an exception — printing the
// seed and the command that replays it. While a seed runs, a broken assertion (core/assert.h)
// prints the same command before the process aborts.
void run_seeds(std::uint64_t default_count, const std::function<void(std::uint64_t seed)>& run);
// The same for SEEDS (BINBERG_SIMULATION_SEED alone replays one): seeds that once found a defect,
// kept in every run although they lie past a test's default count.
void run_listed_seeds(const std::vector<std::uint64_t>& seeds, const std::function<void(std::uint64_t seed)>& run);

// A change of a row of SCHEMA's table on the simulated server 1, the ROW_INDEX-th of its transaction,
// committed at COMMIT_TS_MS; the caller says where the transaction is (file, position, GTID).
ChangeEvent sim_change(std::shared_ptr<const TableSchema> schema, Op op, std::optional<RowImage> before,
                       std::optional<RowImage> after, std::uint32_t row_index, std::int64_t commit_ts_ms);

// Runs one seed's RUN (BINBERG_SIMULATION_LOG=1: with the pipeline's log), leaves no failpoint
// armed, and throws what it threw as InvariantBroken with the scenario DESCRIBE gives.
void run_world(const std::function<void()>& run, const std::function<std::string()>& describe);

// A failed invariant of a simulation: thrown by check(), it ends the seed (run_seeds reports it).
class InvariantBroken : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

template <typename... Args>
void check(bool holds, fmt::format_string<Args...> format, Args&&... args) {
  if (!holds) throw InvariantBroken(fmt::format(format, std::forward<Args>(args)...));
}

// A real SQLite catalog in a fresh temporary folder, removed with it: in memory (/dev/shm) where
// there is one, so the thousands of commits of a simulation do not wait for a disk's syncs. Its
// retries (catalog_retry.h) wait on TIME.
class SimCatalog {
 public:
  explicit SimCatalog(TimeSource& time = system_time());
  ~SimCatalog();
  iceberg::Catalog& catalog();
  const iceberg::CatalogOptions& options() const { return options_; }
  // Changes made through catalog() so far (tables created or dropped, commits): a check reads the
  // tables again only when this moved.
  std::uint64_t changes() const;

 private:
  class Counting;
  TempDir dir_;
  iceberg::CatalogOptions options_;
  std::unique_ptr<Counting> catalog_;
};

// One changelog row as the invariant checks read it (tables/table_mapping.h's changelog columns).
struct ChangelogRow {
  std::string event_id;
  char op = 'c';
  std::string gtid, binlog_file;
  std::int64_t binlog_pos = 0;
  std::int32_t row_index = 0;
  iceberg::Row after, before;  // the watched source columns of each image (nulls when it has none)
};

// A snapshot of a table pair the checks have not seen before.
struct ObservedSnapshot {
  std::int64_t snapshot_id = 0;
  std::map<std::string, std::string> summary;
  std::vector<ChangelogRow> added;  // changelog rows this snapshot added (the changelog is append-only)
  bool current = true;              // the changelog's current snapshot (else an older one not seen yet)
};

// Watches the current snapshots of a changelog and its current-state table in a real catalog and
// reads, once each, what every new snapshot of the changelog added; the current state is read
// whole. Shared by the simulations: both paths write the same tables (tables/table_pair.h). Rows
// are read as the source COLUMNS they watch (by name: the tables' schemas may evolve).
class TableWatch {
 public:
  TableWatch(iceberg::Catalog& catalog, iceberg::TableIdentifier changelog, iceberg::TableIdentifier state,
             std::vector<std::string> columns);

  // The oldest snapshot of the changelog not seen yet, up to its current one (rows it added read
  // from the data files not seen before): one at a time, as a sink may commit twice between two
  // looks (a schema change's commit right after the commit of every table); nullopt when it did
  // not move. A snapshot that no longer descends from the last one seen breaks an invariant (a
  // table never moves back).
  std::optional<ObservedSnapshot> next();
  // The current-state table as it is now: its current snapshot's summary (empty: none yet) and
  // rows; nullopt when there is no such table.
  struct State {
    std::map<std::string, std::string> summary;
    std::vector<iceberg::Row> rows;
  };
  std::optional<State> state();
  const iceberg::TableIdentifier& changelog() const { return changelog_; }

 private:
  std::optional<std::string> location(const iceberg::TableIdentifier& table);

  iceberg::Catalog& catalog_;
  const iceberg::TableIdentifier changelog_, state_;
  const std::vector<std::string> columns_;
  std::optional<std::string> last_location_;
  std::optional<std::int64_t> last_snapshot_;
  bool behind_ = false;  // the last snapshot seen is older than the current one
  std::set<std::string> seen_files_;
};

// Literals of rows as text (for messages and comparisons).
std::string to_string(const iceberg::Row& row);

}  // namespace binberg::testing
