// `binberg reconcile` (a real process) against tables `binberg replicate` wrote, each check made to
// fail once: the Iceberg tables are damaged through binberg's own table writer at the position
// they record (a faulty writer's commit), or the source moves on without them. Every check must
// be able to fail, and a check that did not run is never reported as a pass.

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "capture/source_position.h"
#include "core/clock.h"
#include "iceberg/catalog.h"
#include "iceberg/table_scan.h"
#include "iceberg/table_writer.h"
#include "mysql/connection.h"
#include "support/child_process.h"
#include "support/temp_dir.h"
#include "support/test_services.h"

namespace binberg::verify {
namespace {

using namespace std::chrono_literals;

class ReconcileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    prefix_ = binberg::testing::unique_name("rc");
    items_ = prefix_ + "_items";
    db_.execute(fmt::format("CREATE TABLE {} (id INT PRIMARY KEY, name VARCHAR(20), qty INT)", items_));
    db_.execute(fmt::format("INSERT INTO {} SELECT seq, CONCAT('item ', seq), seq * 10 FROM seq_1_to_20", items_));
    config_ = (dir_.path() / "binberg.toml").string();
    std::ofstream(config_) << binberg::testing::source_config(8000 + ::getpid() % 10000, prefix_ + "_", dir_.path())
                           << "\n[commit]\ninterval_ms = 100\n";
  }

  void TearDown() override {
    replicate_.stop(SIGKILL);
    db_.execute(fmt::format("DROP TABLE IF EXISTS {0}_items, {0}_pairs, {0}_bag", prefix_));
  }

  // Replicates the tables (the initial copy, then an insert, an update and a delete, and what
  // CHANGES writes), waits until reconcile finds them equal, and stops replicate: the tables then
  // stay as they are.
  void replicate_and_stop(const std::function<void()>& changes = {}) {
    replicate_.start({BINBERG_CLI, "replicate", "--config", config_}, dir_.path() / "replicate.log");
    ASSERT_TRUE(binberg::testing::wait_for_log_line(dir_.path() / "replicate.log", "committed: "))
        << log_tail("replicate.log");
    db_.execute(fmt::format("INSERT INTO {} VALUES (21, 'item 21', 210)", items_));
    db_.execute(fmt::format("UPDATE {} SET qty = qty + 1 WHERE id = 2", items_));
    db_.execute(fmt::format("DELETE FROM {} WHERE id = 3", items_));
    if (changes) changes();
    int exit_code = 0;
    const nlohmann::json report = reconcile(exit_code);
    ASSERT_EQ(exit_code, 0) << report.dump(2) << log_tail("reconcile.log");
    ASSERT_EQ(replicate_.stop(SIGTERM), 0);
  }

  // `binberg reconcile --json` with ARGUMENTS: its report, and its exit code in EXIT_CODE.
  nlohmann::json reconcile(int& exit_code, const std::string& arguments = "") {
    std::string out = binberg::testing::run_command(
        fmt::format("'{}' reconcile --config '{}' --json --wait 60 {} 2>>'{}/reconcile.log'; echo \"exit $?\"",
                    BINBERG_CLI, config_, arguments, dir_.path().string()));
    const auto exit_at = out.rfind("exit ");
    exit_code = std::stoi(out.substr(exit_at + 5));
    out.resize(exit_at);
    return out.empty() ? nlohmann::json() : nlohmann::json::parse(out);
  }

  // The report of TABLE (a source table name without the database) in REPORT.
  static nlohmann::json table_report(const nlohmann::json& report, const std::string& table) {
    for (const auto& entry : report["tables"]) {
      if (entry["source"]["table"].get<std::string>().ends_with("." + table)) return entry;
    }
    ADD_FAILURE() << "no report of " << table << " in " << report.dump(2);
    return nlohmann::json::object();
  }

  iceberg::CatalogOptions catalog_options() const {
    iceberg::CatalogOptions options;
    options.uri = "sqlite:///" + dir_.path().string() + "/catalog.db";
    options.warehouse = dir_.path().string() + "/warehouse";
    return options;
  }

  // Commits to the Iceberg table NAME what CHANGE writes with a writer in MODE, as a new snapshot
  // at POSITION (default: the position its current snapshot records): a faulty writer's commit.
  void commit_to(const std::string& name, iceberg::WriteMode mode,
                 const std::function<void(iceberg::TableWriter&, const std::vector<iceberg::Row>&)>& change,
                 std::optional<capture::SourcePosition> position = std::nullopt) {
    const auto catalog = iceberg::open_catalog(catalog_options());
    iceberg::LoadedTable table = catalog->load_table({binberg::testing::stack().mariadb().database, name});
    if (!position) position = capture::SourcePosition::from_summary(table.metadata.current_snapshot()->summary);
    const std::vector<iceberg::Row> rows = iceberg::read_table_rows(table.metadata);
    iceberg::TableWriter writer(std::move(table), mode);
    change(writer, rows);
    const iceberg::PreparedCommit prepared = writer.prepare("damage", position->to_summary(), unix_millis());
    iceberg::commit_tables(*catalog, {&writer}, {prepared});
  }

  // The row of ROWS whose first column (the key `id`, or the changelog's `_event_id`) is KEY.
  static iceberg::Row row_with(const std::vector<iceberg::Row>& rows, const iceberg::Literal& key) {
    for (const auto& row : rows) {
      if (row[0] == key) return row;
    }
    ADD_FAILURE() << "no such row";
    return {};
  }

  std::string log_tail(const std::string& name) const { return binberg::testing::log_tail(dir_.path() / name); }

  binberg::testing::TempDir dir_;
  mysql::Connection db_ = mysql::Connection::open(binberg::testing::mariadb_admin_options());
  std::string prefix_, items_, config_;
  binberg::testing::ChildProcess replicate_;
};

TEST_F(ReconcileTest, EqualTablesWithACleanAuditAreEqual) {
  replicate_and_stop();
  int exit_code = 0;
  const nlohmann::json report = reconcile(exit_code);
  EXPECT_EQ(exit_code, 0) << report.dump(2);
  nlohmann::json items = table_report(report, items_);
  EXPECT_EQ(items["verdict"], "equal");
  EXPECT_EQ(items["source"]["rows"], 20);
  EXPECT_EQ(items["audit"]["verdict"], "clean") << items.dump(2);
  EXPECT_EQ(items["audit"]["source_events"], 23) << "20 copied rows, an insert, an update and a delete";
  EXPECT_TRUE(items["skipped"].empty()) << items.dump(2);
}

TEST_F(ReconcileTest, ARowMissingFromTheTableFailsTheCountTheDigestAndTheDiff) {
  replicate_and_stop();
  commit_to(items_, iceberg::WriteMode::kUpsert,
            [](iceberg::TableWriter& writer, const auto& rows) { writer.remove(row_with(rows, std::int32_t{5})); });
  int exit_code = 0;
  nlohmann::json items = table_report(reconcile(exit_code), items_);
  EXPECT_EQ(exit_code, 3);
  EXPECT_EQ(items["verdict"], "different") << items.dump(2);
  EXPECT_EQ(items["source"]["rows"], 20);
  EXPECT_EQ(items["iceberg"]["rows"], 19);
  EXPECT_NE(items["source"]["digest"], items["iceberg"]["digest"]);
  EXPECT_EQ(items["diff"]["missing"], 1);
  EXPECT_EQ(items["diff"]["examples"][0]["key"], "id=5") << items.dump(2);
}

TEST_F(ReconcileTest, AnExtraRowInTheTableFails) {
  replicate_and_stop();
  commit_to(items_, iceberg::WriteMode::kUpsert, [](iceberg::TableWriter& writer, const auto& rows) {
    iceberg::Row extra = row_with(rows, std::int32_t{5});
    extra[0] = std::int32_t{99};
    writer.upsert(std::move(extra));
  });
  int exit_code = 0;
  nlohmann::json items = table_report(reconcile(exit_code), items_);
  EXPECT_EQ(exit_code, 3);
  EXPECT_EQ(items["diff"]["extra"], 1) << items.dump(2);
  EXPECT_EQ(items["diff"]["examples"][0]["key"], "id=99") << items.dump(2);
}

TEST_F(ReconcileTest, AChangedColumnFailsAsDifferentNamingTheColumn) {
  replicate_and_stop();
  commit_to(items_, iceberg::WriteMode::kUpsert, [](iceberg::TableWriter& writer, const auto& rows) {
    iceberg::Row changed = row_with(rows, std::int32_t{7});
    changed[2] = std::int32_t{-1};
    writer.upsert(std::move(changed));
  });
  int exit_code = 0;
  nlohmann::json items = table_report(reconcile(exit_code), items_);
  EXPECT_EQ(exit_code, 3);
  EXPECT_EQ(items["diff"]["different"], 1) << items.dump(2);
  EXPECT_EQ(items["source"]["rows"], items["iceberg"]["rows"]);
  EXPECT_EQ(items["diff"]["examples"][0]["columns"], nlohmann::json::array({"qty"})) << items.dump(2);
}

TEST_F(ReconcileTest, AKeyTheTableHoldsTwiceFailsAsADuplicateKey) {
  replicate_and_stop();
  commit_to(items_, iceberg::WriteMode::kAppend,
            [](iceberg::TableWriter& writer, const auto& rows) { writer.append(row_with(rows, std::int32_t{9})); });
  int exit_code = 0;
  nlohmann::json items = table_report(reconcile(exit_code), items_);
  EXPECT_EQ(exit_code, 3);
  EXPECT_EQ(items["iceberg"]["duplicate_keys"], 1) << items.dump(2);
  EXPECT_EQ(items["diff"]["missing"], 0);
  EXPECT_EQ(items["diff"]["extra"], 0);
}

// Composite text keys whose parts, joined as text, read the same: ('1, id2=2', '3') and
// ('1', '2, id2=3') are two keys, not one key twice.
TEST_F(ReconcileTest, CompositeKeysWhosePartsJoinToTheSameTextAreTwoKeys) {
  const std::string pairs = prefix_ + "_pairs";
  db_.execute(fmt::format("CREATE TABLE {} (id1 VARCHAR(20), id2 VARCHAR(20), v INT, PRIMARY KEY (id1, id2))", pairs));
  db_.execute(fmt::format("INSERT INTO {} VALUES ('1, id2=2', '3', 1), ('1', '2, id2=3', 2)", pairs));
  replicate_and_stop();
  int exit_code = 0;
  nlohmann::json report = table_report(reconcile(exit_code), pairs);
  EXPECT_EQ(exit_code, 0) << report.dump(2);
  EXPECT_EQ(report["iceberg"]["duplicate_keys"], 0) << report.dump(2);
  EXPECT_EQ(report["verdict"], "equal");
}

TEST_F(ReconcileTest, AChangelogRowHeldTwiceFailsTheAuditAsADuplicate) {
  replicate_and_stop();
  std::string event_id;
  commit_to(items_ + "_changelog", iceberg::WriteMode::kAppend, [&](iceberg::TableWriter& writer, const auto& rows) {
    for (const iceberg::Row& row : rows) {
      if (std::get<std::string>(row[1]) != "u") continue;
      event_id = std::get<std::string>(row[0]);
      writer.append(row);
    }
  });
  int exit_code = 0;
  nlohmann::json items = table_report(reconcile(exit_code), items_);
  EXPECT_EQ(exit_code, 3);
  EXPECT_EQ(items["verdict"], "different");
  EXPECT_EQ(items["diff"]["missing"], 0);
  EXPECT_EQ(items["audit"]["duplicates"], 1) << items.dump(2);
  EXPECT_NE(items["audit"]["examples"].dump().find(event_id), std::string::npos) << items.dump(2);
}

TEST_F(ReconcileTest, AChangelogRowWithAnIdTheSourceLacksFailsTheAuditAsUnknown) {
  replicate_and_stop();
  commit_to(items_ + "_changelog", iceberg::WriteMode::kAppend, [&](iceberg::TableWriter& writer, const auto& rows) {
    for (const iceberg::Row& row : rows) {
      if (std::get<std::string>(row[1]) != "c") continue;
      iceberg::Row invented = row;
      invented[0] = std::string("0-99-12345#0");
      writer.append(std::move(invented));
      return;
    }
  });
  int exit_code = 0;
  nlohmann::json items = table_report(reconcile(exit_code), items_);
  EXPECT_EQ(exit_code, 3);
  EXPECT_EQ(items["audit"]["unknown"], 1) << items.dump(2);
  EXPECT_NE(items["audit"]["examples"].dump().find("0-99-12345#0"), std::string::npos) << items.dump(2);
}

// A changelog row with the id of a row of another initial copy (this table's copy is at another
// position): unknown. The audit checks the copy's rows by id, not only how many there are.
TEST_F(ReconcileTest, AChangelogRowOfAnotherInitialCopyFailsTheAuditAsUnknown) {
  replicate_and_stop();
  const std::string foreign =
      fmt::format("snapshot:binlog.000001:4:{}.{}#0", binberg::testing::stack().mariadb().database, items_);
  commit_to(items_ + "_changelog", iceberg::WriteMode::kAppend, [&](iceberg::TableWriter& writer, const auto& rows) {
    for (const iceberg::Row& row : rows) {
      if (std::get<std::string>(row[1]) != "c") continue;
      iceberg::Row other_copy = row;
      other_copy[0] = foreign;
      writer.append(std::move(other_copy));
      return;
    }
  });
  int exit_code = 0;
  nlohmann::json items = table_report(reconcile(exit_code), items_);
  EXPECT_EQ(exit_code, 3) << items.dump(2);
  EXPECT_EQ(items["audit"]["unknown"], 1) << items.dump(2);
  EXPECT_NE(items["audit"]["examples"].dump().find(foreign), std::string::npos) << items.dump(2);
}

// A source change applied to the current-state table by a faulty commit that left it out of the
// changelog: the rows are equal, the audit names the missing event.
TEST_F(ReconcileTest, AnEventTheChangelogLacksFailsTheAuditAsMissing) {
  replicate_and_stop();
  db_.execute(fmt::format("UPDATE {} SET qty = 0 WHERE id = 4", items_));
  const std::string gtid = db_.scalar("SELECT @@last_gtid").value_or("");
  const auto status = db_.query("SHOW MASTER STATUS");
  const capture::SourcePosition after{mysql::BinlogPosition{*status.rows[0][0], std::stoull(*status.rows[0][1])},
                                      mysql::GtidPosition::parse(*db_.scalar("SELECT @@gtid_binlog_pos"))};
  commit_to(
      items_, iceberg::WriteMode::kUpsert,
      [](iceberg::TableWriter& writer, const auto& rows) {
        iceberg::Row updated = row_with(rows, std::int32_t{4});
        updated[2] = std::int32_t{0};
        writer.upsert(std::move(updated));
      },
      after);
  commit_to(
      items_ + "_changelog", iceberg::WriteMode::kAppend, [](iceberg::TableWriter&, const auto&) {}, after);
  int exit_code = 0;
  nlohmann::json items = table_report(reconcile(exit_code), items_);
  EXPECT_EQ(exit_code, 3);
  EXPECT_EQ(items["diff"]["different"], 0) << items.dump(2);
  EXPECT_EQ(items["source"]["digest"], items["iceberg"]["digest"]);
  EXPECT_EQ(items["audit"]["missing"], 1) << items.dump(2);
  EXPECT_NE(items["audit"]["examples"].dump().find(gtid + "#0"), std::string::npos) << items.dump(2);
}

// The source moved on and nothing writes the table: no consistent point, so nothing is compared
// and reconcile fails (exit 1) naming both positions rather than compare two different states.
TEST_F(ReconcileTest, ATableBehindTheSourceIsNotComparedAndReconcileFails) {
  replicate_and_stop();
  db_.execute(fmt::format("UPDATE {} SET qty = 0 WHERE id = 4", items_));
  const std::string output = binberg::testing::run_command(
      fmt::format("'{}' reconcile --config '{}' --json --wait 1 2>&1; echo \"exit $?\"", BINBERG_CLI, config_));
  EXPECT_NE(output.find("exit 1"), std::string::npos) << output;
  EXPECT_NE(output.find("did not reach source position"), std::string::npos) << output;
}

// A keyless table has no current-state table: reconcile compares the rows its changelog's events
// leave with the source's, identical rows counted, and audits the changelog as any other. It used
// to leave such a table out of the report (a warning only) and exit 0.
TEST_F(ReconcileTest, AKeylessTableIsComparedByWhatItsChangelogLeaves) {
  const std::string bag = prefix_ + "_bag";
  db_.execute(fmt::format("CREATE TABLE {} (v INT, s VARCHAR(5) COLLATE utf8mb4_general_ci)", bag));
  db_.execute(fmt::format("INSERT INTO {} VALUES (1, 'x'), (1, 'x'), (1, 'x'), (1, 'X'), (2, NULL), (2, NULL)", bag));
  replicate_and_stop([&] {
    db_.execute(fmt::format("UPDATE {} SET v = 3 WHERE v = 1 LIMIT 1", bag));
    db_.execute(fmt::format("DELETE FROM {} WHERE v = 2 LIMIT 1", bag));
    db_.execute(fmt::format("INSERT INTO {} VALUES (1, 'x'), (4, 'y')", bag));
  });
  int exit_code = 0;
  nlohmann::json report = table_report(reconcile(exit_code), bag);
  EXPECT_EQ(exit_code, 0) << report.dump(2);
  EXPECT_EQ(report["verdict"], "equal") << report.dump(2);
  EXPECT_EQ(report["source"]["rows"], 7);
  EXPECT_EQ(report["iceberg"]["rows"], 7);
  EXPECT_EQ(report["source"]["digest"], report["iceberg"]["digest"]);
  EXPECT_EQ(report["audit"]["verdict"], "clean") << report.dump(2);
  EXPECT_EQ(report["audit"]["source_events"], 10) << "6 copied rows, an update, a delete and two inserts";

  // A changelog row of an insert held twice: one row too many, and a duplicate event.
  commit_to(bag + "_changelog", iceberg::WriteMode::kAppend, [](iceberg::TableWriter& writer, const auto& rows) {
    for (const iceberg::Row& row : rows) {
      if (std::get<std::string>(row[1]) == "c") {
        writer.append(row);
        return;
      }
    }
  });
  report = table_report(reconcile(exit_code), bag);
  EXPECT_EQ(exit_code, 3);
  EXPECT_EQ(report["diff"]["extra"], 1) << report.dump(2);
  EXPECT_EQ(report["diff"]["missing"], 0) << report.dump(2);
  EXPECT_EQ(report["audit"]["duplicates"], 1) << report.dump(2);
}

// --no-audit: the audit does not run, the report says so, and the verdict stands on the rows.
TEST_F(ReconcileTest, NoAuditIsReportedAsSkippedOnRequest) {
  replicate_and_stop();
  int exit_code = 0;
  nlohmann::json items = table_report(reconcile(exit_code, "--no-audit"), items_);
  EXPECT_EQ(exit_code, 0);
  EXPECT_EQ(items["verdict"], "equal");
  EXPECT_EQ(items["audit"]["verdict"], "skipped") << items.dump(2);
  ASSERT_EQ(items["skipped"].size(), 1u) << items.dump(2);
  EXPECT_EQ(items["skipped"][0]["check"], "audit");
  EXPECT_TRUE(items["skipped"][0]["accepted"].get<bool>());
  const std::string text = binberg::testing::run_command(
      fmt::format("'{}' reconcile --config '{}' --no-audit --table {}.{} 2>/dev/null", BINBERG_CLI, config_,
                  binberg::testing::stack().mariadb().database, items_));
  EXPECT_NE(text.find("skipped  audit: not requested (--no-audit)"), std::string::npos) << text;
}

}  // namespace
}  // namespace binberg::verify
