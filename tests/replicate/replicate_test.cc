// Path A end to end on the real stack: `binberg replicate` (a real process) keeps two Iceberg
// tables equal to two MariaDB tables under a mixed multi-table workload, survives SIGKILL at
// random moments, and `binberg reconcile` proves the result: digests equal, diff 0, audit clean.
// pyiceberg reads the same rows binberg's reconcile read.

#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>
#include <thread>
#include <tuple>

#include "capture/source_position.h"
#include "iceberg/catalog.h"
#include "iceberg/table_scan.h"
#include "mysql/connection.h"
#include "support/child_process.h"
#include "support/prometheus.h"
#include "support/schema_change_steps.h"
#include "support/temp_dir.h"
#include "support/test_services.h"
#include "verify/snapshot_history.h"

namespace binberg::replicate {
namespace {

using binberg::testing::sample_sum;

using namespace std::chrono_literals;

class ReplicateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    prefix_ = binberg::testing::unique_name("pa");
    orders_ = prefix_ + "_orders";
    lines_ = prefix_ + "_lines";
    db_.execute(fmt::format(
        "CREATE TABLE {} (id BIGINT PRIMARY KEY, customer VARCHAR(40), total DECIMAL(12,2), placed DATETIME(6), "
        "score DOUBLE, note TEXT)",
        orders_));
    db_.execute(fmt::format(
        "CREATE TABLE {} (order_id BIGINT, line INT, sku VARBINARY(16), qty INT UNSIGNED, PRIMARY KEY (order_id, "
        "line))",
        lines_));
    config_ = (dir_.path() / "binberg.toml").string();
    std::ofstream(config_) << binberg::testing::source_config(5000 + ::getpid() % 10000, prefix_ + "_", dir_.path())
                           << R"(
[commit]
interval_ms = 200

[metrics]
address = "127.0.0.1:0"
)";
  }

  void TearDown() override {
    stop_replicate(SIGKILL);
    db_.execute("DROP TABLE IF EXISTS " + orders_);
    db_.execute("DROP TABLE IF EXISTS " + lines_);
    db_.execute(fmt::format("DROP TABLE IF EXISTS {0}_g_accounts, {0}_g_orders, {0}_ledger, {0}_enum", prefix_));
    db_.execute(fmt::format("DROP TABLE IF EXISTS {0}_float_key, {0}_wide_decimal", prefix_));
  }

  // Starts `binberg replicate`; FAILPOINTS (BINBERG_FAILPOINTS syntax) are armed in it.
  void start_replicate(const std::string& failpoints = "", const std::string& accept_schema_change = "") {
    std::vector<std::string> argv = {BINBERG_CLI, "replicate", "--config", config_};
    if (!accept_schema_change.empty()) argv.insert(argv.end(), {"--accept-schema-change", accept_schema_change});
    replicate_.start(argv, dir_.path() / "replicate.log",
                     {{"BINBERG_FAILPOINTS", failpoints.empty() ? std::nullopt : std::optional(failpoints)}});
  }

  // Waits up to TIMEOUT for replicate to exit by itself; returns its status (or -signal), or
  // nullopt if it is still running.
  std::optional<int> wait_for_exit(std::chrono::milliseconds timeout) { return replicate_.wait_for_exit(timeout); }

  // Returns the exit status (or -signal).
  int stop_replicate(int signal) { return replicate_.stop(signal); }

  // TRANSACTIONS random transactions over both tables: inserts, updates (some of the key) and
  // deletes on hot keys, one to four statements each, many touching both tables.
  void run_workload(std::mt19937_64& random, int transactions) {
    std::uniform_int_distribution<int> key(1, 150), kind(0, 9), statements(1, 4);
    for (int t = 0; t < transactions; ++t) {
      const int serial = ++transactions_run_;  // unique across calls
      db_.execute("START TRANSACTION");
      for (int s = statements(random); s > 0; --s) {
        const int id = key(random);
        const int k = kind(random);
        if (k < 6) {
          db_.execute(fmt::format(
              "INSERT INTO {} VALUES ({}, 'c{}é', {}.{:02}, '2024-05-0{} 10:00:00.{:06}', {}, {}) ON DUPLICATE KEY "
              "UPDATE total = total + 1, note = 'again'",
              orders_, id, id % 7, id * 3, t % 100, 1 + t % 9, t, (t % 5 == 0) ? "NULL" : fmt::format("{}e-3", t),
              (t % 3 == 0) ? "NULL" : "'n'"));
          db_.execute(fmt::format("INSERT INTO {} VALUES ({}, {}, x'{:04x}', {}) ON DUPLICATE KEY UPDATE qty = qty + 1",
                                  lines_, id, t % 3, t, 4000000000u - static_cast<unsigned>(t)));
        } else if (k < 9) {
          db_.execute(fmt::format("UPDATE {} SET customer = 'u{}', score = {} WHERE id = {}", orders_, t, -t, id));
          // A primary-key change: lines 0..2 move to 10 * serial + line, unique per transaction.
          db_.execute(
              fmt::format("UPDATE {} SET line = line + {} WHERE order_id = {} AND line < 3", lines_, 10 * serial, id));
        } else {
          db_.execute(fmt::format("DELETE FROM {} WHERE id = {}", orders_, id));
          db_.execute(fmt::format("DELETE FROM {} WHERE order_id = {}", lines_, id));
        }
      }
      db_.execute("COMMIT");
    }
  }

  // Reconciles TABLES (source table names; none: every captured table).
  nlohmann::json reconcile(const std::vector<std::string>& tables = {}) {
    std::string only;
    for (const std::string& table : tables) {
      only += fmt::format(" --table '{}.{}'", binberg::testing::stack().mariadb().database, table);
    }
    const std::string output = binberg::testing::run_command(
        fmt::format("'{}' reconcile --config '{}'{} --json --wait 120 2>>'{}/reconcile.log' || true", BINBERG_CLI,
                    config_, only, dir_.path().string()));
    try {
      return nlohmann::json::parse(output);
    } catch (const nlohmann::json::exception&) {
      ADD_FAILURE() << "reconcile printed no report. reconcile.log:\n"
                    << log_tail("reconcile.log") << "\nreplicate.log:\n"
                    << log_tail("replicate.log");
      return nlohmann::json::object();
    }
  }

  // The last lines of the test's log NAME, for failure messages.
  std::string log_tail(const std::string& name) const { return binberg::testing::log_tail(dir_.path() / name); }

  void expect_equal(const nlohmann::json& report, std::size_t tables = 2) {
    ASSERT_EQ(report["tables"].size(), tables) << report.dump(1);
    for (const auto& table : report["tables"]) {
      EXPECT_EQ(table["verdict"], "equal") << table.dump(1);
      EXPECT_EQ(table["source"]["digest"], table["iceberg"]["digest"]);
      EXPECT_EQ(table["audit"]["verdict"], "clean") << table["audit"].dump(1);
      EXPECT_EQ(table["diff"]["missing"], 0);
      EXPECT_EQ(table["diff"]["extra"], 0);
      EXPECT_EQ(table["diff"]["different"], 0);
    }
    EXPECT_EQ(report["verdict"], "equal");
  }

  // The current state of TABLE as pyiceberg and DuckDB read it, digested by
  // tests/iceberg/table_reader_tool.py from the canonical-row specification: an independent check
  // of the digest reconcile computed with binberg's own reader.
  void expect_independent_readers_agree(const std::string& table, const std::string& digest) {
    const auto& database = binberg::testing::stack().mariadb().database;
    const std::string tool = std::string(BINBERG_SOURCE_DIR) + "/tests/iceberg/table_reader_tool.py";
    const auto pyiceberg = nlohmann::json::parse(binberg::testing::run_command(
        fmt::format("'{}' '{}' digest pyiceberg '{}' '{}' '{}.{}'", BINBERG_PYTHON, tool, catalog_options().uri,
                    catalog_options().warehouse, database, table)));
    EXPECT_EQ(pyiceberg["digest"], digest) << "pyiceberg reads other rows from " << table;
    const auto catalog = iceberg::open_catalog(catalog_options());
    const std::string metadata = catalog->load_table(iceberg::TableIdentifier{database, table}).metadata_location;
    const auto duckdb = nlohmann::json::parse(
        binberg::testing::run_command(fmt::format("'{}' '{}' digest duckdb '{}'", BINBERG_PYTHON, tool, metadata)));
    EXPECT_EQ(duckdb["digest"], digest) << "DuckDB reads other rows from " << table;
  }

  // `binberg gen` (a real process) on this test's generator tables; ARGS are its workload options.
  nlohmann::json gen(const std::string& args) {
    const auto& mariadb = binberg::testing::stack().mariadb();
    return nlohmann::json::parse(binberg::testing::run_command(fmt::format(
        "'{}' gen --host {} --port {} --user '{}' --password-env BINBERG_TEST_SOURCE_PASSWORD --database '{}' "
        "--prefix {}_g {} 2>>'{}/gen.log'",
        BINBERG_CLI, mariadb.host, mariadb.port, mariadb.user, mariadb.database, prefix_, args, dir_.path().string())));
  }

  // Waits up to 30 s for replicate to log a line with TEXT; returns what follows TEXT on it.
  std::string wait_for_log(const std::string& text) {
    const auto rest = binberg::testing::wait_for_log_line(dir_.path() / "replicate.log", text);
    if (!rest) ADD_FAILURE() << "replicate did not log '" << text << "'";
    return rest.value_or("");
  }

  // Sum of the samples of metric NAME whose labels contain every LABELS text (e.g. `op="insert"`).
  static std::size_t column(const iceberg::Schema& schema, const std::string& name) {
    for (std::size_t i = 0; i < schema.fields().size(); ++i) {
      if (schema.fields()[i].name == name) return i;
    }
    ADD_FAILURE() << "no column " << name;
    return 0;
  }

  static std::int64_t integer(const iceberg::Literal& value) {
    if (const auto* wide = std::get_if<std::int64_t>(&value)) return *wide;
    return std::get<std::int32_t>(value);
  }

  // Over every intermediate snapshot of the changelogs of TABLES: each snapshot adds whole source
  // transactions only (every event of a GTID arrives in one snapshot, never split or repeated),
  // and a transaction over several tables arrives in all of them in the same commit.
  void expect_every_snapshot_holds_whole_transactions(const std::vector<std::string>& tables,
                                                      std::size_t min_snapshots = 21) {
    const auto catalog = iceberg::open_catalog(catalog_options());
    const auto& database = binberg::testing::stack().mariadb().database;
    std::vector<iceberg::TableIdentifier> changelogs;
    for (const std::string& table : tables) changelogs.push_back({database, table + "_changelog"});
    const verify::HistoryFinding finding = verify::check_whole_transactions(*catalog, changelogs);
    EXPECT_EQ(finding.violation_count, 0u) << ::testing::PrintToString(finding.violations);
    EXPECT_GE(finding.snapshots_checked, min_snapshots) << "too few snapshots to check";
    std::cout << "checked " << finding.snapshots_checked << " snapshots, " << finding.transactions_checked
              << " transactions\n";
  }

  // Over every snapshot of current-state table TABLE: the sum of COLUMN is TOTAL. A transfer
  // workload keeps it in the source at every commit, so any snapshot holding part of a
  // transaction, or a lost or repeated change, breaks it.
  void expect_every_snapshot_sums_to(const std::string& table, const std::string& column_name, std::int64_t total) {
    const auto catalog = iceberg::open_catalog(catalog_options());
    const auto& database = binberg::testing::stack().mariadb().database;
    const verify::HistoryFinding finding =
        verify::check_every_snapshot_sums_to(*catalog, iceberg::TableIdentifier{database, table}, column_name, total);
    EXPECT_EQ(finding.violation_count, 0u) << ::testing::PrintToString(finding.violations);
  }

  // Over every snapshot of current-state table TABLE: no key's state moves backwards (its
  // `version`, which every update increments, never decreases) and a deleted key never returns
  // (the generator never reuses a key); keys are unique in each snapshot.
  void expect_states_never_move_backwards(const std::string& table) {
    const auto catalog = iceberg::open_catalog(catalog_options());
    const auto& database = binberg::testing::stack().mariadb().database;
    const iceberg::LoadedTable state = catalog->load_table(iceberg::TableIdentifier{database, table});
    const iceberg::Schema& schema = state.metadata.current_schema();
    const std::size_t id_column = column(schema, "id"), version_column = column(schema, "version");
    std::map<std::int64_t, std::int64_t> previous;
    std::set<std::int64_t> deleted;
    for (const auto& entry : state.metadata.snapshot_log) {
      std::map<std::int64_t, std::int64_t> current;
      iceberg::scan_rows(iceberg::plan_scan(state.metadata, entry.snapshot_id), schema,
                         [&](const iceberg::Row& row, const iceberg::LiveFile&, std::int64_t) {
                           const std::int64_t id = integer(row[id_column]);
                           EXPECT_TRUE(current.emplace(id, integer(row[version_column])).second)
                               << table << ": key " << id << " twice in snapshot " << entry.snapshot_id;
                         });
      for (const auto& [id, version] : previous) {
        const auto now = current.find(id);
        if (now == current.end()) {
          deleted.insert(id);
        } else {
          EXPECT_GE(now->second, version) << table << ": key " << id << " went back in snapshot " << entry.snapshot_id;
        }
      }
      for (const auto& [id, version] : current) {
        EXPECT_FALSE(deleted.contains(id))
            << table << ": deleted key " << id << " came back in snapshot " << entry.snapshot_id;
      }
      previous = std::move(current);
    }
  }

  iceberg::CatalogOptions catalog_options() const {
    iceberg::CatalogOptions options;
    options.uri = "sqlite:///" + dir_.path().string() + "/catalog.db";
    options.warehouse = dir_.path().string() + "/warehouse";
    return options;
  }

  // Every snapshot of every table records a position, positions never go back, and the state
  // table and its changelog were always committed together (same commit ids).
  void expect_history_is_monotonic(const std::string& table) {
    const auto catalog = iceberg::open_catalog(catalog_options());
    const auto& database = binberg::testing::stack().mariadb().database;
    std::vector<std::string> commit_ids[2];
    int index = 0;
    for (const std::string& name : {table, table + "_changelog"}) {
      const iceberg::LoadedTable loaded = catalog->load_table(iceberg::TableIdentifier{database, name});
      std::optional<capture::SourcePosition> previous;
      for (const auto& entry : loaded.metadata.snapshot_log) {
        const iceberg::Snapshot* snapshot = loaded.metadata.find_snapshot(entry.snapshot_id);
        ASSERT_NE(snapshot, nullptr);
        const auto position = capture::SourcePosition::from_summary(snapshot->summary);
        ASSERT_TRUE(position.has_value()) << name << " snapshot " << snapshot->snapshot_id;
        if (previous) {
          EXPECT_TRUE(std::is_gt(capture::compare_binlog(position->binlog, previous->binlog))) << name;
        }
        previous = position;
        commit_ids[index].push_back(snapshot->summary.at("binberg.commit-id"));
      }
      ++index;
    }
    EXPECT_EQ(commit_ids[0], commit_ids[1]) << "state and changelog committed apart";
  }

  binberg::testing::TempDir dir_;
  mysql::Connection db_ = mysql::Connection::open(binberg::testing::mariadb_admin_options());
  std::string prefix_, orders_, lines_, config_;
  binberg::testing::ChildProcess replicate_;
  int transactions_run_ = 0;
};

TEST_F(ReplicateTest, MixedWorkloadThenGracefulStopReconcilesEqual) {
  std::mt19937_64 random(1);
  run_workload(random, 100);  // before the first start: the initial snapshot takes these
  start_replicate();
  run_workload(random, 400);
  const nlohmann::json report = reconcile();  // waits until the tables reach the source
  EXPECT_EQ(stop_replicate(SIGTERM), 0) << "a graceful stop exits 0";
  expect_equal(report);
  const nlohmann::json after_stop = reconcile();  // the graceful stop committed nothing that differs
  expect_equal(after_stop);
  for (const auto& table : after_stop["tables"]) {
    const std::string name = table["source"]["table"];
    expect_independent_readers_agree(name.substr(name.find('.') + 1), table["source"]["digest"]);
  }
  expect_history_is_monotonic(orders_);
  expect_history_is_monotonic(lines_);
}

TEST_F(ReplicateTest, SigkillAtRandomMomentsLosesAndDuplicatesNothing) {
  std::mt19937_64 workload_random(2), pause_random(3);
  std::uniform_int_distribution<int> pause_ms(100, 1200);
  run_workload(workload_random, 50);
  for (int kill = 0; kill < 8; ++kill) {
    start_replicate();
    std::thread writer([&] { run_workload(workload_random, 60); });
    std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms(pause_random)));
    EXPECT_EQ(stop_replicate(SIGKILL), -SIGKILL);
    writer.join();
  }
  start_replicate();
  const nlohmann::json report = reconcile();
  EXPECT_EQ(stop_replicate(SIGTERM), 0);
  expect_equal(report);
  expect_history_is_monotonic(orders_);
  expect_history_is_monotonic(lines_);
}

// The initial copy of a table keyed by an ENUM, one row per chunk (issue 24, item 3). MariaDB
// orders an ENUM by its index ('z' < 'a' < 'm' here), not by its text: paging that compared the
// text lost 'a' and 'm'. Every row reaches Iceberg and reconcile proves it.
TEST_F(ReplicateTest, InitialCopyOfAnEnumKeyedTableInChunksOfOneRowLosesNothing) {
  const std::string table = prefix_ + "_enum";
  db_.execute(fmt::format("CREATE TABLE {} (k ENUM('z','a','m') PRIMARY KEY, v INT)", table));
  db_.execute(fmt::format("INSERT INTO {} VALUES ('z', 1), ('a', 2), ('m', 3)", table));
  std::ofstream(config_, std::ios::app) << "\n[replicator]\nsnapshot_chunk_rows = 1\n";
  start_replicate();
  wait_for_log("committed: ");  // the initial copy: the tables exist
  const nlohmann::json report = reconcile();
  EXPECT_EQ(stop_replicate(SIGTERM), 0);
  expect_equal(report, 3);
  for (const auto& result : report["tables"]) {
    if (result["source"]["table"].get<std::string>().ends_with(table)) {
      EXPECT_EQ(result["iceberg"]["rows"], 3) << result.dump(1);
      expect_independent_readers_agree(table, result["source"]["digest"]);
    }
  }
}

// A crash before the initial copy's commit leaves the table's Iceberg tables made and empty. A
// column added before the restart made every restart stop with "table ... changed while binberg
// opened it; restart binberg" (found by the replicator simulation, seed 23). The restart makes the
// empty tables again for the table as it is now, and copies it.
TEST_F(ReplicateTest, ATableAlteredAfterACrashBeforeItsFirstCommitIsCopiedAsItIsNow) {
  const std::string table = prefix_ + "_altered";
  db_.execute(fmt::format("CREATE TABLE {} (id INT PRIMARY KEY, v INT)", table));
  db_.execute(fmt::format("INSERT INTO {} VALUES (1, 10), (2, 20), (3, 30)", table));
  start_replicate("pipeline.before_commit=crash");  // the first commit: the initial copy's
  ASSERT_EQ(wait_for_exit(60s), -SIGKILL) << "replicate did not crash at the initial copy's commit";
  db_.execute(fmt::format("ALTER TABLE {} ADD COLUMN w INT", table));
  db_.execute(fmt::format("UPDATE {} SET w = 7 WHERE id = 2", table));
  start_replicate();
  wait_for_log("committed: ");
  const nlohmann::json report = reconcile();
  EXPECT_EQ(stop_replicate(SIGTERM), 0);
  expect_equal(report, 3);
}

// A crash at each point of the commit protocol: before the writers prepare, between prepare and
// the catalog transaction, inside it (data, manifests and metadata written but not swapped in;
// swapped in but not acknowledged) and right after it. Each restart must resume from what the
// tables hold, neither re-applying a committed transaction nor skipping an uncommitted one.
TEST_F(ReplicateTest, CrashAtEveryCommitPointResumesExactlyOnce) {
  std::mt19937_64 random(4);
  run_workload(random, 40);
  const std::vector<std::string> failpoints = {
      "pipeline.before_prepare", "iceberg.writer.after_data_files", "iceberg.writer.after_manifests",
      "pipeline.before_commit",  "iceberg.catalog.before_commit",   "iceberg.catalog.after_commit",
      "pipeline.after_commit",
  };
  for (const std::string& failpoint : failpoints) {
    SCOPED_TRACE(failpoint);
    // @3: past the initial snapshot's commit, in the middle of streaming.
    start_replicate(failpoint + "=crash@3");
    std::optional<int> status;
    for (int round = 0; round < 20 && !status; ++round) {
      run_workload(random, 15);
      status = wait_for_exit(300ms);
    }
    ASSERT_EQ(status, -SIGKILL) << "replicate did not crash at " << failpoint;
  }
  start_replicate();
  run_workload(random, 20);
  const nlohmann::json report = reconcile();
  EXPECT_EQ(stop_replicate(SIGTERM), 0);
  expect_equal(report);
  expect_history_is_monotonic(orders_);
  expect_history_is_monotonic(lines_);
}

// A transaction arrives in batches; when the reader pauses between two of them (a slow decode of
// a wide or spilled transaction), the commit interval passes with the transaction half applied.
// No commit may be cut there: every snapshot must hold whole transfers (the ledger's sum is
// constant in each), and a crash right after a commit must not make the restart apply part of a
// transaction twice.
TEST_F(ReplicateTest, AReaderPauseInsideATransactionNeverCutsACommitThere) {
  const std::string ledger = prefix_ + "_ledger";
  constexpr int kAccounts = 6000, kBalance = 1000;  // three reader batches (2,048 events each) per transfer
  db_.execute(fmt::format("CREATE TABLE {} (id BIGINT PRIMARY KEY, balance BIGINT NOT NULL)", ledger));
  db_.execute(fmt::format("INSERT INTO {} SELECT seq, {} FROM seq_1_to_{}", ledger, kBalance, kAccounts));
  std::ofstream(config_) << binberg::testing::source_config(5000 + ::getpid() % 10000, prefix_ + "_", dir_.path())
                         << "\n[commit]\ninterval_ms = 100\n";
  const auto transfer = [&](int amount) {
    // Half the accounts give AMOUNT, the other half take it: one transaction, one event per account.
    db_.execute("START TRANSACTION");
    db_.execute(fmt::format("UPDATE {} SET balance = balance - {} WHERE id <= {}", ledger, amount, kAccounts / 2));
    db_.execute(fmt::format("UPDATE {} SET balance = balance + {} WHERE id > {}", ledger, amount, kAccounts / 2));
    db_.execute("COMMIT");
  };

  start_replicate("source.between_batches=delay(600)");
  wait_for_log("committed: ");  // the initial copy
  for (int amount = 1; amount <= 4; ++amount) transfer(amount);
  expect_equal(reconcile(), 3);
  EXPECT_EQ(stop_replicate(SIGTERM), 0);

  // The same pause with a crash right after the first commit of the stream; then a clean restart.
  start_replicate("source.between_batches=delay(600);pipeline.after_commit=crash");
  for (int amount = 5; amount <= 6; ++amount) transfer(amount);
  ASSERT_EQ(wait_for_exit(30s), -SIGKILL) << "replicate did not crash after its first commit";
  start_replicate();
  transfer(7);
  expect_equal(reconcile(), 3);
  EXPECT_EQ(stop_replicate(SIGTERM), 0);

  expect_every_snapshot_sums_to(ledger, "balance", std::int64_t{kAccounts} * kBalance);
  expect_every_snapshot_holds_whole_transactions({ledger}, 4);
  expect_history_is_monotonic(ledger);
}

// The Prometheus endpoint counts exactly what was applied: the generator's row events by table
// and op, the initial copy's rows, and one commit-duration observation per commit.
TEST_F(ReplicateTest, MetricsCountTheEventsApplied) {
  const std::string accounts = prefix_ + "_g_accounts", orders = prefix_ + "_g_orders";
  gen("--create --initial-rows 300 --transactions 20");
  const auto copied = [&](const std::string& table) {
    return std::stod(db_.scalar("SELECT COUNT(*) FROM " + table).value_or("0"));
  };
  const double initial_rows = copied(accounts) + copied(orders);
  start_replicate();
  wait_for_log("committed: ");  // the initial copy, before the workload starts
  const nlohmann::json summary = gen("--events 3000 --seed 3 --rows-per-statement 3");
  const nlohmann::json report = reconcile();
  expect_equal(report, 4);
  const std::string body = binberg::testing::scrape_metrics("http://" + wait_for_log("metrics on http://"));
  ASSERT_FALSE(body.empty());
  const auto& database = binberg::testing::stack().mariadb().database;
  const std::string ours = "table=\"" + database + "." + prefix_ + "_g_";
  EXPECT_EQ(sample_sum(body, "binberg_replicate_events_total", {ours}), summary["events"]["total"].get<double>())
      << body;
  EXPECT_EQ(sample_sum(body, "binberg_replicate_events_total", {ours, "op=\"delete\""}),
            summary["events"]["delete"].get<double>());
  EXPECT_EQ(sample_sum(body, "binberg_replicate_snapshot_rows_total", {ours}), initial_rows);
  const double commits = sample_sum(body, "binberg_replicate_commits_total");
  EXPECT_GE(commits, 2);
  EXPECT_EQ(sample_sum(body, "binberg_replicate_commit_duration_seconds_count"), commits);
  EXPECT_GE(sample_sum(body, "binberg_replicate_transactions_total"), summary["transactions"].get<double>());
  EXPECT_GT(sample_sum(body, "binberg_replicate_bytes_written_total"), 0);
  EXPECT_EQ(sample_sum(body, "binberg_replicate_pending_events"), 0) << "caught up, nothing pending";
  EXPECT_NE(body.find("\nbinberg_replicate_stopped_tables 0\n"), std::string::npos) << "every table mapped";
  EXPECT_NE(body.find("binberg_build_info{version=\""), std::string::npos);
  EXPECT_EQ(stop_replicate(SIGTERM), 0);
}

// Peak resident memory of process PID (VmHWM), in MiB.
double peak_rss_mib(pid_t pid) {
  std::ifstream status(fmt::format("/proc/{}/status", pid));
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024;
  }
  ADD_FAILURE() << "no VmHWM for " << pid;
  return 0;
}

// One source transaction of 1.1M row events (1M inserts, then 100k updates of rows it inserted)
// under small memory bounds: the reader spools it, the writers spill it (the updates replace
// rows already written), and it still arrives whole in one snapshot, with the process's peak
// memory far below what holding it decoded would take.
TEST_F(ReplicateTest, MillionRowTransactionStaysWithinTheMemoryBoundAndArrivesWhole) {
  std::ofstream(config_, std::ios::app) << R"(
[memory]
transaction_buffer_mb = 8
queue_events = 20000
writer_buffer_mb = 16
)";
  start_replicate();
  wait_for_log("committed: ");
  constexpr std::int64_t kRows = 1'000'000, kUpdates = 100'000;
  db_.execute("START TRANSACTION");
  db_.execute(
      fmt::format("INSERT INTO {} SELECT seq, CONCAT('customer-', seq % 1000), (seq % 100000) / 100, "
                  "TIMESTAMP'2026-01-01 00:00:00' + INTERVAL seq SECOND, seq / 7, REPEAT('n', 40) FROM seq_1_to_{}",
                  orders_, kRows));
  db_.execute(fmt::format("UPDATE {} SET total = total + 1, note = 'updated' WHERE id % 10 = 0", orders_));
  db_.execute("COMMIT");
  const nlohmann::json report = reconcile();
  expect_equal(report);
  const double peak = peak_rss_mib(replicate_.pid());
  std::cout << "peak RSS of binberg replicate: " << peak << " MiB\n";
  const std::string body = binberg::testing::scrape_metrics("http://" + wait_for_log("metrics on http://"));
  EXPECT_EQ(sample_sum(body, "binberg_replicate_spilled_transactions_total"), 1);
  EXPECT_GT(sample_sum(body, "binberg_replicate_backpressure_seconds_total"), 0)
      << "a 20k-event queue in front of 1.1M events must fill";
  EXPECT_EQ(stop_replicate(SIGTERM), 0);
  // Decoded, the transaction alone is over 1 GiB (two images per update, rows of both tables).
  EXPECT_LT(peak, 700) << "the memory bounds did not hold";

  // Whole: one snapshot of the changelog adds every event of the transaction, the others none.
  const auto catalog = iceberg::open_catalog(catalog_options());
  const auto& database = binberg::testing::stack().mariadb().database;
  const iceberg::LoadedTable changelog =
      catalog->load_table(iceberg::TableIdentifier{database, orders_ + "_changelog"});
  std::vector<std::int64_t> added;
  for (const iceberg::Snapshot& snapshot : changelog.metadata.snapshots) {
    if (const auto records = std::stoll(snapshot.summary.at("added-records")); records > 0) added.push_back(records);
  }
  EXPECT_EQ(added, std::vector<std::int64_t>{kRows + kUpdates});
  const iceberg::LoadedTable state = catalog->load_table(iceberg::TableIdentifier{database, orders_});
  EXPECT_GT(std::stoll(state.metadata.current_snapshot()->summary.at("added-position-deletes")), 0)
      << "updates of rows the writer had already spilled are position deletes in the same snapshot";
}

// MariaDB SIGKILLed and restarted under a running replicate: the stream reconnects by itself and
// resumes right after the last whole transaction, so the tables end equal with a clean audit.
TEST_F(ReplicateTest, MariadbRestartMidStreamResumesByItself) {
  gen("--create --initial-rows 200 --transactions 1");
  start_replicate();
  wait_for_log("committed: ");
  gen("--events 2000 --seed 4 --rows-per-statement 2");
  binberg::testing::kill_and_restart_mariadb();
  db_ = mysql::Connection::open(binberg::testing::mariadb_admin_options());
  gen("--events 2000 --seed 5 --rows-per-statement 2");
  EXPECT_FALSE(wait_for_exit(0ms).has_value()) << "replicate exited instead of reconnecting";
  const nlohmann::json report = reconcile();
  EXPECT_EQ(stop_replicate(SIGTERM), 0);
  expect_equal(report, 4);
}

// The PostgreSQL catalog goes away under a running replicate, twice: every backend terminated by
// an administrator (pg_terminate_backend), then the whole server SIGKILLed and started again 3 s
// later. The catalog reconnects by itself and a commit whose answer was lost is recognized from
// the tables: replicate never exits, and the tables end equal with a clean audit.
TEST_F(ReplicateTest, PostgresCatalogTerminatedAndRestartedUnderLoadResumesByItself) {
  std::ofstream(config_) << binberg::testing::source_config(5000 + ::getpid() % 10000, prefix_ + "_", dir_.path(),
                                                            binberg::testing::postgres_catalog_uri(), prefix_)
                         << "\n[commit]\ninterval_ms = 200\n\n[metrics]\naddress = \"127.0.0.1:0\"\n";
  gen("--create --initial-rows 200 --transactions 1");
  start_replicate();
  wait_for_log("committed: ");
  std::thread writer([&] { gen("--events 6000 --seed 4 --rate 1000 --rows-per-statement 2"); });
  std::this_thread::sleep_for(2s);
  EXPECT_GE(binberg::testing::terminate_postgres_backends(), 1) << "replicate's catalog connection was terminated";
  std::this_thread::sleep_for(1500ms);
  binberg::testing::kill_service("postgres");
  std::this_thread::sleep_for(3s);
  binberg::testing::start_service("postgres");
  writer.join();
  gen("--events 1000 --seed 5 --rows-per-statement 2");
  EXPECT_FALSE(wait_for_exit(0ms).has_value()) << "replicate exited instead of reconnecting\n"
                                               << log_tail("replicate.log");
  const nlohmann::json report = reconcile();
  EXPECT_EQ(stop_replicate(SIGTERM), 0) << log_tail("replicate.log");
  expect_equal(report, 4);
  EXPECT_GE(binberg::testing::count_log_lines(dir_.path() / "replicate.log", "answers again after"), 1u)
      << log_tail("replicate.log");
}

// Schema evolution from DDL mid-stream: added columns (with a default the existing rows get, and
// nullable), widened types, a rename and a drop evolve the Iceberg tables and the rows stay equal,
// also after a crash between the evolved schema and its commit. An unsafe change (narrowing) stops
// replication before it, again after a restart, and resumes once the operator accepts it.
TEST_F(ReplicateTest, SchemaChangesEvolveTheTablesAndUnsafeOnesStopUntilAccepted) {
  const std::string accounts = prefix_ + "_g_accounts", orders = prefix_ + "_g_orders";
  const auto& database = binberg::testing::stack().mariadb().database;
  gen("--create --initial-rows 300 --transactions 1");
  start_replicate("pipeline.before_schema_commit=crash");
  wait_for_log("committed: ");
  gen("--events 600 --seed 6");
  db_.execute(binberg::testing::add_tier_and_memo(accounts));
  EXPECT_EQ(wait_for_exit(60s), -SIGKILL) << "the failpoint before the schema commit did not fire";
  start_replicate();
  db_.execute(fmt::format("UPDATE {} SET tier = id % 5, memo = CONCAT('m', id) WHERE id % 4 = 0", accounts));
  gen("--events 600 --seed 7");
  binberg::testing::widen_rename_add_and_drop(db_, accounts, orders);
  EXPECT_GT(gen("--events 600 --seed 8 --ddl-every 20")["schema_changes"].get<int>(), 0);  // gen's own steps
  const nlohmann::json evolved = reconcile();
  expect_equal(evolved, 4);

  const auto catalog = iceberg::open_catalog(catalog_options());
  const auto load = [&](const std::string& table) {
    return catalog->load_table(iceberg::TableIdentifier{database, table});
  };
  binberg::testing::expect_evolved_tables(*catalog, database, accounts, orders);
  {
    for (const auto& table : evolved["tables"]) {
      if (table["source"]["table"].get<std::string>().ends_with(accounts)) {
        expect_independent_readers_agree(accounts, table["iceberg"]["digest"]);
      }
    }
  }

  // Narrowing may clip stored values without a row event: refused, before and after a restart.
  const auto position_of = [&](const std::string& table) {
    return capture::SourcePosition::from_summary(load(table).metadata.current_snapshot()->summary).value().to_string();
  };
  db_.execute(fmt::format("UPDATE {} SET quantity = quantity - 5000000000 WHERE quantity > 2147483647", orders));
  db_.execute(fmt::format("ALTER TABLE {} MODIFY quantity INT NOT NULL", orders));  // strict mode: values fit
  gen("--events 300 --seed 9");
  std::string gtid;
  std::string before;
  for (int run = 0; run < 2; ++run) {
    SCOPED_TRACE(run == 0 ? "streaming" : "after a restart");
    EXPECT_EQ(wait_for_exit(60s), 1) << "replicate did not stop on the unsafe schema change";
    const std::string message = wait_for_log("[error] ");
    EXPECT_NE(message.find("schema change at"), std::string::npos) << message;
    EXPECT_NE(message.find("refused"), std::string::npos) << message;
    EXPECT_NE(message.find("quantity"), std::string::npos) << message;
    const auto at = message.find("(transaction ");
    ASSERT_NE(at, std::string::npos) << message;
    gtid = message.substr(at + 13, message.find(')', at) - at - 13);
    if (run == 0) before = position_of(orders);
    EXPECT_EQ(position_of(orders), before) << "a transaction past the refused change was committed";
    std::filesystem::remove(dir_.path() / "replicate.log");
    if (run == 0) start_replicate();
  }
  start_replicate("", gtid);
  gen("--events 300 --seed 10");
  expect_equal(reconcile(), 4);
  EXPECT_EQ(stop_replicate(SIGTERM), 0);
  EXPECT_EQ(load(orders).metadata.current_schema().find_field("quantity")->type->to_string(), "long")
      << "an accepted narrowing keeps the wider Iceberg type";
}

// The acceptance run of path A: a 100k-event generated workload (60/30/10 insert/update/delete,
// hot keys, multi-table and large transactions, key changes, schema changes) while replicate is
// SIGKILLed at 20 random moments and restarted. The end state reconciles equal (digest, diff 0, audit clean), and
// every intermediate snapshot holds whole transactions and no key state older than before.
TEST_F(ReplicateTest, GeneratedWorkloadUnderTwentySigkillsStaysExactlyOnce) {
  const std::string accounts = prefix_ + "_g_accounts", orders = prefix_ + "_g_orders";
  gen("--create --initial-rows 2000 --transactions 1");  // the initial snapshot copies these
  std::mt19937_64 pause_random(6);
  std::uniform_int_distribution<int> pause_ms(150, 1500);
  std::uint64_t events = 0, schema_changes = 0;
  constexpr int kKills = 20;
  for (int kill = 0; kill < kKills; ++kill) {
    start_replicate();
    nlohmann::json summary;
    std::thread writer([&] {
      summary =
          gen(fmt::format("--seed {} --events 5000 --rate 6000 --rows-per-statement 3 --hot-keys 50 "
                          "--large-every 400 --large-rows 3000 --ddl-every 150",
                          kill + 1));
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms(pause_random)));
    EXPECT_EQ(stop_replicate(SIGKILL), -SIGKILL) << "replicate exited before kill " << kill;
    writer.join();
    events += summary["events"]["total"].get<std::uint64_t>();
    schema_changes += summary["schema_changes"].get<std::uint64_t>();
  }
  EXPECT_GE(events, 100'000u);
  EXPECT_GE(schema_changes, 20u);
  start_replicate();
  const nlohmann::json report = reconcile();
  EXPECT_EQ(stop_replicate(SIGTERM), 0);
  expect_equal(report, 4);
  expect_every_snapshot_holds_whole_transactions({accounts, orders});
  expect_states_never_move_backwards(accounts);
  expect_states_never_move_backwards(orders);
  expect_history_is_monotonic(accounts);
  expect_history_is_monotonic(orders);
}

// An operator compacts, merges manifests and expires snapshots (`binberg table`, real processes)
// while replicate commits every 200 ms under load: whichever loses a catalog swap recovers — the
// compaction rebases onto replicate's snapshot, replicate reopens its tables and resumes from
// their positions — and the tables stay exactly the source, no snapshot moving a key backwards.
TEST_F(ReplicateTest, MaintenanceWhileReplicatingLosesNothing) {
  const std::string accounts = prefix_ + "_g_accounts", orders = prefix_ + "_g_orders";
  const auto& database = binberg::testing::stack().mariadb().database;
  gen("--create --initial-rows 2000 --transactions 1");
  start_replicate();
  wait_for_log("committed: ");
  std::atomic<bool> writing{true};
  std::thread writer([&] {
    gen("--seed 31 --events 30000 --rate 5000 --rows-per-statement 3 --hot-keys 50");
    writing = false;
  });
  const auto table = [&](const std::string& args) {
    return nlohmann::json::parse(binberg::testing::run_command(fmt::format(
        "'{}' table {} --config '{}' --json 2>>'{}/table.log'", BINBERG_CLI, args, config_, dir_.path().string())));
  };
  int rounds = 0, compactions = 0;
  while (writing || rounds < 2) {
    for (const std::string& name : {orders, accounts, orders + "_changelog"}) {
      compactions += table(fmt::format("compact {}.{}", database, name))["committed"].get<bool>() ? 1 : 0;
    }
    table(fmt::format("rewrite-manifests {}.{}", database, accounts));
    table(fmt::format("expire {}.{} --older-than 0s --retain-last 20", database, orders));
    ++rounds;
  }
  writer.join();
  EXPECT_GT(compactions, 0);
  EXPECT_FALSE(wait_for_exit(0ms).has_value()) << "replicate exited:\n" << log_tail("replicate.log");
  const nlohmann::json report = reconcile();
  EXPECT_EQ(stop_replicate(SIGTERM), 0);
  expect_equal(report, 4);
  expect_states_never_move_backwards(accounts);
  expect_states_never_move_backwards(orders);
  for (const auto& result : report["tables"]) {
    const std::string name = result["source"]["table"];
    if (name.ends_with("_g_orders")) expect_independent_readers_agree(orders, result["source"]["digest"]);
  }
  const std::string log = binberg::testing::run_command(fmt::format(
      "grep -c 'reopening the tables' '{}/replicate.log' || true; grep -c 'rebasing' '{}/table.log' || true",
      dir_.path().string(), dir_.path().string()));
  std::cout << "maintenance rounds " << rounds << ", compactions " << compactions
            << "; replicate reopenings / compaction rebases:\n"
            << log;
}

// One capture set with two good tables and two binberg cannot map: a FLOAT primary key (Iceberg
// forbids floating-point identifier fields) and a DECIMAL wider than Iceberg's 38 digits (refused
// under the default [types] wide_decimal = "refuse"). replicate copies and streams the good ones,
// which reconcile equal, and reports each bad one alone — an error naming its column and type and
// what to configure, binberg_replicate_stopped_tables, `binberg table ls` — writing nothing for it.
// Once wide decimals are configured as text, a restart copies that table from its own snapshot,
// with every row written while it was stopped: it reconciles equal, and pyiceberg and DuckDB read it.
TEST_F(ReplicateTest, UnmappableTablesStopAloneWhileTheOthersReplicateAndLoseNothing) {
  const auto& database = binberg::testing::stack().mariadb().database;
  const std::string floats = prefix_ + "_float_key", wide = prefix_ + "_wide_decimal";
  db_.execute(fmt::format("CREATE TABLE {} (k FLOAT PRIMARY KEY, v INT)", floats));
  db_.execute(fmt::format(
      "CREATE TABLE {} (id INT PRIMARY KEY, amount DECIMAL(50,10), tiny DECIMAL(65,30) NOT NULL, note VARCHAR(10))",
      wide));
  // Rows FROM..TO of both odd tables, and an update and a delete of earlier ones.
  const auto write_odd_tables = [&](int from, int to) {
    for (int i = from; i < to; ++i) {
      db_.execute(fmt::format("INSERT INTO {} VALUES ({}.25, {})", floats, i, i));
      db_.execute(
          fmt::format("INSERT INTO {} VALUES ({}, '{}1234567890123456789012345678901234567.{:010}', "
                      "'-0.{:030}', 'n{}')",
                      wide, i, i % 2 == 0 ? "-" : "", i, i, i));
    }
    db_.execute(fmt::format("UPDATE {} SET amount = amount * 3, note = 'u' WHERE id = {}", wide, from / 2));
    db_.execute(fmt::format("DELETE FROM {} WHERE id = {}", wide, from / 2 + 1));
    db_.execute(fmt::format("UPDATE {} SET v = v + 1 WHERE k = {}.25", floats, from));
  };
  std::mt19937_64 random(12);
  run_workload(random, 50);
  write_odd_tables(1, 20);
  start_replicate();
  ASSERT_TRUE(binberg::testing::wait_for_log_line(dir_.path() / "replicate.log", "committed: "))
      << "the good tables were not copied:\n"
      << log_tail("replicate.log");
  for (const auto& [table, column, type, remedy] :
       {std::tuple{floats, "k", "FLOAT", "[capture] exclude"},
        std::tuple{wide, "amount", "DECIMAL(50,10)", "[types] wide_decimal"}}) {
    const std::string message = wait_for_log(fmt::format("table {}.{} is not replicated: ", database, table));
    EXPECT_NE(message.find(fmt::format("column {} ({})", column, type)), std::string::npos) << message;
    EXPECT_NE(message.find(remedy), std::string::npos) << message;
    EXPECT_NE(message.find("the other tables go on"), std::string::npos) << message;
  }
  run_workload(random, 100);
  write_odd_tables(20, 40);
  expect_equal(reconcile({orders_, lines_}));
  const nlohmann::json everything = reconcile();  // a stopped table is reported, and no pass
  EXPECT_EQ(everything["verdict"], "different") << everything.dump(1);
  std::size_t stopped = 0;
  for (const auto& table : everything["tables"]) stopped += table["verdict"] == "stopped" ? 1 : 0;
  EXPECT_EQ(stopped, 2u) << everything.dump(1);
  EXPECT_FALSE(wait_for_exit(0ms).has_value()) << "replicate exited:\n" << log_tail("replicate.log");
  const std::string metrics = binberg::testing::scrape_metrics("http://" + wait_for_log("metrics on http://"));
  EXPECT_EQ(sample_sum(metrics, "binberg_replicate_stopped_tables"), 2) << metrics;
  const auto table_ls = [&] {
    std::map<std::string, nlohmann::json> listed;
    for (const auto& entry : nlohmann::json::parse(binberg::testing::run_command(fmt::format(
             "'{}' table ls --config '{}' --json 2>>'{}/table.log'", BINBERG_CLI, config_, dir_.path().string())))) {
      listed[entry["table"]] = entry;
    }
    return listed;
  };
  auto listed = table_ls();
  for (const std::string& table : {floats, wide}) {
    const std::string name = database + "." + table;
    ASSERT_TRUE(listed.contains(name)) << "table ls does not show " << name;
    EXPECT_EQ(listed[name]["status"], "stopped") << listed[name].dump();
    EXPECT_NE(listed[name]["reason"].get<std::string>().find(table), std::string::npos) << listed[name].dump();
    EXPECT_FALSE(listed.contains(name + "_changelog")) << "binberg wrote a table for " << name;
  }
  EXPECT_TRUE(listed.contains(database + "." + orders_ + "_changelog"));

  // The operator keeps wide decimals as their exact text: the table is copied from its own snapshot.
  EXPECT_EQ(stop_replicate(SIGTERM), 0) << "a graceful stop with a stopped table exits 0";
  std::ofstream(config_, std::ios::app) << "\n[types]\nwide_decimal = \"string\"\n";
  std::filesystem::remove(dir_.path() / "replicate.log");
  start_replicate();
  write_odd_tables(40, 60);
  run_workload(random, 50);
  const nlohmann::json report = reconcile({orders_, lines_, wide});
  expect_equal(report, 3);
  for (const auto& table : report["tables"]) {
    if (table["source"]["table"] == database + "." + wide) {
      EXPECT_EQ(table["source"]["rows"], 56) << "59 inserted, 3 deleted, some while the table was stopped";
      expect_independent_readers_agree(wide, table["source"]["digest"]);
    }
  }
  EXPECT_EQ(sample_sum(binberg::testing::scrape_metrics("http://" + wait_for_log("metrics on http://")),
                       "binberg_replicate_stopped_tables"),
            1);
  listed = table_ls();
  EXPECT_EQ(listed[database + "." + floats]["status"], "stopped");
  EXPECT_TRUE(listed.contains(database + "." + wide + "_changelog"));
  EXPECT_EQ(stop_replicate(SIGTERM), 0);
  expect_history_is_monotonic(wide);

  // With every captured table stopped there is nothing to replicate: exit 2, naming why.
  const std::filesystem::path alone = dir_.path() / "float-key-alone";
  std::filesystem::create_directories(alone);
  std::ofstream(alone / "binberg.toml") << binberg::testing::source_config(4999, floats, alone);
  const std::string output = binberg::testing::run_command(fmt::format(
      "'{}' replicate --config '{}' 2>&1; echo \"exit $?\"", BINBERG_CLI, (alone / "binberg.toml").string()));
  EXPECT_NE(output.find("no captured table can be replicated: table " + database + "." + floats), std::string::npos)
      << output;
  EXPECT_NE(output.find("exit 2"), std::string::npos) << output;
}

}  // namespace
}  // namespace binberg::replicate
