// Whole transactions from the real MariaDB: order, images, DDL, exact resume (also across a
// SIGKILLed and restarted server), refusal of misconfigured sources and purged positions.

#include "mysql/transaction_reader.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "core/error.h"
#include "mysql/source_checks.h"
#include "source_test_support.h"
#include "support/temp_dir.h"

namespace binberg::mysql {
namespace {

using namespace std::chrono_literals;

class TransactionReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    orders_ = binberg::testing::unique_name("orders");
    items_ = binberg::testing::unique_name("items");
    db_.execute(fmt::format("CREATE TABLE {} (id INT PRIMARY KEY, status VARCHAR(10), total DECIMAL(8,2))", orders_));
    db_.execute(
        fmt::format("CREATE TABLE {} (order_id INT, line INT, sku VARCHAR(8), PRIMARY KEY (order_id, line))", items_));
  }
  void TearDown() override {
    db_.execute("DROP TABLE IF EXISTS " + orders_);
    db_.execute("DROP TABLE IF EXISTS " + items_);
  }

  void run_workload(int first_order, int orders) {
    for (int o = first_order; o < first_order + orders; ++o) {
      db_.execute("START TRANSACTION");
      db_.execute(fmt::format("INSERT INTO {} VALUES ({}, 'new', 10.50)", orders_, o));
      db_.execute(fmt::format("INSERT INTO {} VALUES ({}, 1, 'A'), ({}, 2, 'B')", items_, o, o));
      db_.execute(fmt::format("UPDATE {} SET status = 'paid', total = total * 2 WHERE id = {}", orders_, o));
      db_.execute(fmt::format("DELETE FROM {} WHERE order_id = {} AND line = 2", items_, o));
      db_.execute("COMMIT");
    }
  }

  Connection db_ = Connection::open(binberg::testing::mariadb_admin_options());
  std::string orders_, items_;
};

std::vector<std::string> event_ids(const std::vector<SourceTransaction>& transactions) {
  std::vector<std::string> ids;
  for (const auto& txn : transactions) {
    for (const auto& event : txn.events) ids.push_back(event.event_id);
  }
  return ids;
}

TEST_F(TransactionReaderTest, MixedTransactionsArriveWholeInCommitOrder) {
  const BinlogPosition start = testing::master_position(db_);
  run_workload(1, 3);
  auto transactions = testing::read_transactions(start);
  ASSERT_EQ(transactions.size(), 3u);
  const std::string database = binberg::testing::stack().mariadb().database;
  for (std::size_t t = 0; t < transactions.size(); ++t) {
    const SourceTransaction& txn = transactions[t];
    ASSERT_EQ(txn.events.size(), 5u) << "transaction " << t << " split or merged";
    EXPECT_EQ(txn.tables, (std::vector<std::string>{database + "." + items_, database + "." + orders_}));
    const int id = static_cast<int>(t) + 1;
    EXPECT_EQ(txn.events[0].op, Op::kCreate);
    EXPECT_EQ(txn.events[0].source.table, orders_);
    EXPECT_EQ(txn.events[1].op, Op::kCreate);
    EXPECT_EQ(txn.events[2].op, Op::kCreate);
    EXPECT_EQ(txn.events[3].op, Op::kUpdate);
    EXPECT_EQ((*txn.events[3].before)[1], Value(Text{"new"}));
    EXPECT_EQ((*txn.events[3].before)[2], Value(Decimal{"10.50"}));
    EXPECT_EQ((*txn.events[3].after)[1], Value(Text{"paid"}));
    EXPECT_EQ((*txn.events[3].after)[2], Value(Decimal{"21.00"}));
    EXPECT_EQ(txn.events[4].op, Op::kDelete);
    EXPECT_EQ((*txn.events[4].before)[0], Value(std::int64_t{id}));
    EXPECT_EQ((*txn.events[4].before)[1], Value(std::int64_t{2}));
    EXPECT_EQ(txn.events[1].schema->primary_key, (std::vector<std::size_t>{0, 1}));
    for (std::size_t e = 0; e < txn.events.size(); ++e) {
      EXPECT_EQ(txn.events[e].source.row_index, e);
      EXPECT_EQ(txn.events[e].event_id, fmt::format("{}#{}", txn.gtid, e));
      EXPECT_EQ(txn.events[e].source.end_pos, txn.end_pos);
    }
    if (t > 0) {
      EXPECT_GT(Gtid::parse(txn.gtid).sequence, Gtid::parse(transactions[t - 1].gtid).sequence);
      EXPECT_GT(txn.end_pos, transactions[t - 1].end_pos);
    }
  }
  EXPECT_EQ(transactions.back().end_pos, testing::master_position(db_).offset);
}

TEST_F(TransactionReaderTest, SchemaChangesArriveInOrderWithRows) {
  const BinlogPosition start = testing::master_position(db_);
  db_.execute(fmt::format("INSERT INTO {} VALUES (1, 'a', 1)", orders_));
  db_.execute(fmt::format("ALTER TABLE {} ADD COLUMN note VARCHAR(20) NULL", orders_));
  db_.execute(fmt::format("INSERT INTO {} VALUES (2, 'b', 2, 'hello')", orders_));
  db_.execute(fmt::format("TRUNCATE TABLE {}", items_));
  auto transactions = testing::read_transactions(start);
  ASSERT_EQ(transactions.size(), 4u);
  EXPECT_EQ(transactions[0].events.size(), 1u);
  ASSERT_TRUE(transactions[1].schema_change.has_value());
  EXPECT_NE(transactions[1].schema_change->statement.find("ADD COLUMN note"), std::string::npos);
  EXPECT_TRUE(transactions[1].events.empty());
  ASSERT_EQ(transactions[2].events.size(), 1u);
  EXPECT_EQ(transactions[2].events[0].schema->columns.size(), 4u) << "rows after ALTER use the new schema";
  EXPECT_EQ((*transactions[2].events[0].after)[3], Value(Text{"hello"}));
  ASSERT_TRUE(transactions[3].schema_change.has_value());
  EXPECT_TRUE(is_schema_change(transactions[3].schema_change->statement));
}

TEST_F(TransactionReaderTest, ResumeFromRecordedPositionEqualsOneUninterruptedRead) {
  const BinlogPosition start = testing::master_position(db_);
  run_workload(1, 6);
  const auto uninterrupted = event_ids(testing::read_transactions(start));
  ASSERT_EQ(uninterrupted.size(), 30u);

  std::vector<std::string> resumed;
  BinlogPosition position = start;
  for (int round = 0; round < 3; ++round) {  // read two transactions, stop, resume
    TransactionReader reader(testing::reader_options(position), CharsetNames::load(db_));
    for (int i = 0; i < 2; ++i) {
      auto txn = reader.next();
      ASSERT_TRUE(txn.has_value());
      for (const auto& event : txn->events) resumed.push_back(event.event_id);
    }
    position = reader.position();
  }
  EXPECT_EQ(resumed, uninterrupted);

  // The same from a GTID position.
  StreamOptions by_gtid = testing::reader_options(start);
  by_gtid.start_position.reset();
  TransactionReader first(testing::reader_options(start), CharsetNames::load(db_));
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(first.next().has_value());
  by_gtid.start_gtid = first.gtid_position();
  TransactionReader second(by_gtid, CharsetNames::load(db_));
  std::vector<std::string> tail;
  while (auto txn = second.next()) {
    for (const auto& event : txn->events) tail.push_back(event.event_id);
  }
  EXPECT_EQ(tail, std::vector<std::string>(uninterrupted.begin() + 15, uninterrupted.end()));
}

// A transaction bigger than the spool's memory bound goes to a spill file and comes back whole
// and identical (same events, images and ids) to one read within memory; no spill file is left.
TEST_F(TransactionReaderTest, TransactionLargerThanTheMemoryBoundIsSpilledAndReadBackIdentically) {
  const BinlogPosition start = testing::master_position(db_);
  db_.execute("START TRANSACTION");
  for (int batch = 0; batch < 20; ++batch) {
    std::string values;
    for (int i = 0; i < 100; ++i) {
      values += fmt::format("{}({}, 's{}', {}.25)", values.empty() ? "" : ", ", batch * 100 + i, i % 7, i);
    }
    db_.execute(fmt::format("INSERT INTO {} VALUES {}", orders_, values));
  }
  db_.execute(fmt::format("UPDATE {} SET status = 'paid' WHERE id % 3 = 0", orders_));
  db_.execute(fmt::format("DELETE FROM {} WHERE id % 5 = 0", orders_));
  db_.execute("COMMIT");

  const binberg::testing::TempDir spool_dir;
  SpoolOptions tight{spool_dir.path().string(), 4096};
  TransactionReader spilling(testing::reader_options(start), CharsetNames::load(db_), {}, tight);
  std::optional<EncodedTransaction> encoded;
  while ((encoded = spilling.next_encoded()) && encoded->rows.events() == 0) {
  }
  ASSERT_TRUE(encoded);
  EXPECT_TRUE(encoded->rows.spilled());
  EXPECT_TRUE(std::filesystem::is_empty(spool_dir.path())) << "the spill file is unlinked at once";
  std::vector<ChangeEvent> spilled;
  std::size_t batches = 0;
  for (std::vector<ChangeEvent> batch; !(batch = spilling.decode(*encoded, 500)).empty(); ++batches) {
    for (ChangeEvent& event : batch) spilled.push_back(std::move(event));
  }
  EXPECT_GE(batches, 4u);

  std::vector<SourceTransaction> in_memory = testing::read_transactions(start);
  const auto whole = std::find_if(in_memory.begin(), in_memory.end(), [](auto& txn) { return !txn.events.empty(); });
  ASSERT_NE(whole, in_memory.end());
  EXPECT_EQ(encoded->header.gtid, whole->gtid);
  EXPECT_EQ(encoded->header.end_pos, whole->end_pos);
  ASSERT_EQ(spilled.size(), whole->events.size());
  EXPECT_EQ(spilled.size(), 2000u + 667u + 400u);
  for (std::size_t i = 0; i < spilled.size(); ++i) {
    ASSERT_EQ(spilled[i].event_id, whole->events[i].event_id) << i;
    ASSERT_EQ(spilled[i].before, whole->events[i].before) << i;
    ASSERT_EQ(spilled[i].after, whole->events[i].after) << i;
  }
}

TEST_F(TransactionReaderTest, BlockingReaderReturnsWhenTheSourceIsIdleAndThenContinues) {
  const BinlogPosition start = testing::master_position(db_);
  run_workload(1, 1);
  StreamOptions options = testing::reader_options(start, /*blocking=*/true);
  options.heartbeat = 200ms;
  TransactionReader reader(options, CharsetNames::load(db_));
  // Only this test's tables (unqualified names in the test database): other tests may write meanwhile.
  const auto ours = [&](const SourceTransaction& txn) {
    std::size_t count = 0;
    for (const auto& event : txn.events) {
      if (event.source.table == orders_ || event.source.table == items_) ++count;
    }
    return count;
  };
  std::size_t events = 0;
  int idle = 0;
  while (idle == 0) {
    if (auto txn = reader.next()) {
      events += ours(*txn);
    } else {
      ++idle;  // the heartbeat after the last transaction
    }
  }
  EXPECT_EQ(events, 5u);
  run_workload(2, 1);
  std::size_t later = 0;
  for (int tries = 0; later == 0 && tries < 50; ++tries) {
    if (auto txn = reader.next()) later += ours(*txn);
  }
  EXPECT_EQ(later, 5u) << "the stream continues after an idle return";
}

TEST_F(TransactionReaderTest, ResumesExactlyAfterTheServerIsKilledMidStream) {
  const BinlogPosition start = testing::master_position(db_);
  run_workload(1, 4);
  const auto before_kill = event_ids(testing::read_transactions(start));

  ReconnectPolicy policy;
  policy.first_delay = 200ms;
  policy.give_up_after = 120s;
  TransactionReader reader(testing::reader_options(start, /*blocking=*/true), CharsetNames::load(db_), policy);
  std::vector<std::string> seen;
  for (int i = 0; i < 2; ++i) {
    auto txn = reader.next();
    ASSERT_TRUE(txn.has_value());
    for (const auto& event : txn->events) seen.push_back(event.event_id);
  }
  binberg::testing::kill_and_restart_mariadb();
  db_ = Connection::open(binberg::testing::mariadb_admin_options());
  run_workload(5, 2);
  const auto all = event_ids(testing::read_transactions(start));
  ASSERT_EQ(all.size(), 30u);
  for (int idle = 0; seen.size() < all.size();) {
    auto txn = reader.next();
    if (!txn) {  // a heartbeat: the source is idle
      ASSERT_LT(++idle, 120) << "the stream went idle before every event arrived";
      continue;
    }
    for (const auto& event : txn->events) seen.push_back(event.event_id);
  }
  EXPECT_EQ(seen, all) << "events lost or duplicated across the server restart";
  // The position is real after the restart too: the dump resumed at the end of a binlog file the
  // crash left without a closing rotate, and the server's artificial rotate names the new file.
  EXPECT_EQ(reader.position(), testing::master_position(db_));
  EXPECT_GE(reader.reconnects(), 1u);
  EXPECT_EQ(std::vector<std::string>(all.begin(), all.begin() + 20), before_kill);
}

class MisconfiguredSourceTest : public ::testing::TestWithParam<std::pair<const char*, const char*>> {};

TEST_P(MisconfiguredSourceTest, RefusesToStartNamingSettingAndFix) {
  const auto [setting, bad_value] = GetParam();
  Connection admin = Connection::open(binberg::testing::mariadb_admin_options());
  const std::string original = admin.scalar(fmt::format("SELECT @@global.{}", setting)).value_or("");
  admin.execute(fmt::format("SET GLOBAL {} = '{}'", setting, bad_value));
  try {
    TransactionReader reader(testing::reader_options(testing::master_position(admin)), CharsetNames::load(admin));
    ADD_FAILURE() << "started with " << setting << "=" << bad_value;
  } catch (const ConfigError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(setting), std::string::npos) << message;
    EXPECT_NE(message.find("SET GLOBAL"), std::string::npos) << message;
  }
  admin.execute(fmt::format("SET GLOBAL {} = '{}'", setting, original));
}

INSTANTIATE_TEST_SUITE_P(Settings, MisconfiguredSourceTest,
                         ::testing::Values(std::pair{"binlog_format", "STATEMENT"},
                                           std::pair{"binlog_row_image", "MINIMAL"},
                                           std::pair{"binlog_row_metadata", "MINIMAL"}));

TEST(SourceChecksTest, MissingReplicationPrivilegeIsNamed) {
  Connection admin = Connection::open(binberg::testing::mariadb_admin_options());
  const std::string user = binberg::testing::unique_name("nopriv");
  admin.execute(fmt::format("CREATE USER '{}'@'127.0.0.1' IDENTIFIED BY 'pw'", user));
  admin.execute(fmt::format("GRANT SELECT ON *.* TO '{}'@'127.0.0.1'", user));
  auto options = binberg::testing::mariadb_admin_options();
  options.user = user;
  options.password = "pw";
  Connection weak = Connection::open(options);
  try {
    require_cdc_ready(weak);
    ADD_FAILURE() << "a user without REPLICATION SLAVE passed";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("REPLICATION SLAVE"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("BINLOG MONITOR"), std::string::npos) << e.what();
  }
  admin.execute(fmt::format("DROP USER '{}'@'127.0.0.1'", user));
}

TEST(SourceChecksTest, PurgedPositionsSaySoAndOfferASnapshot) {
  Connection admin = Connection::open(binberg::testing::mariadb_admin_options());
  const BinlogPosition old_position = testing::master_position(admin);
  admin.execute("FLUSH BINARY LOGS");
  const BinlogPosition current = testing::master_position(admin);
  // MariaDB keeps a file that a binlog dump thread still reads (an earlier test's reader may not
  // have been reaped yet), so purge until the old file is really gone.
  const auto still_listed = [&] {
    for (const auto& row : admin.query("SHOW BINARY LOGS").rows) {
      if (row[0] == old_position.file) return true;
    }
    return false;
  };
  for (int attempt = 0; attempt < 100; ++attempt) {
    admin.execute(fmt::format("PURGE BINARY LOGS TO '{}'", current.file));
    if (!still_listed()) break;
    std::this_thread::sleep_for(100ms);
  }
  ASSERT_FALSE(still_listed()) << old_position.file << " could not be purged";
  try {
    TransactionReader reader(testing::reader_options(old_position), CharsetNames::load(admin));
    ADD_FAILURE() << "started from purged " << old_position.to_string();
  } catch (const PositionUnavailable& e) {
    EXPECT_NE(std::string(e.what()).find("purged"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("snapshot"), std::string::npos) << e.what();
  }
  StreamOptions by_gtid = testing::reader_options(current);
  by_gtid.start_position.reset();
  by_gtid.start_gtid = GtidPosition::parse("0-1-1");
  try {
    TransactionReader reader(by_gtid, CharsetNames::load(admin));
    while (reader.next()) {
    }
    ADD_FAILURE() << "started from purged GTID 0-1-1";
  } catch (const PositionUnavailable& e) {
    EXPECT_NE(std::string(e.what()).find("snapshot"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace binberg::mysql
