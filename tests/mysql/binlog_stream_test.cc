#include "mysql/binlog_stream.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "support/test_services.h"

namespace binberg::mysql {
namespace {

struct SourcePosition {
  BinlogPosition file_position;
  GtidPosition gtid;
};

SourcePosition current_position(Connection& db) {
  auto status = db.query("SHOW MASTER STATUS");
  EXPECT_EQ(status.rows.size(), 1u);
  return SourcePosition{BinlogPosition{*status.rows[0][0], std::stoull(*status.rows[0][1])},
                        GtidPosition::parse(db.scalar("SELECT @@gtid_binlog_pos").value_or(""))};
}

StreamOptions stream_options() {
  StreamOptions options;
  options.connection = testing::mariadb_replication_options();
  options.server_id = 9001;
  options.blocking = false;
  return options;
}

std::vector<BinlogEvent> read_to_end(BinlogStream& stream) {
  std::vector<BinlogEvent> events;
  while (auto event = stream.next()) events.push_back(*event);
  return events;
}

// The event kinds of the data-carrying part of the stream (no format/rotate/list bookkeeping).
std::vector<EventKind> transaction_kinds(const std::vector<BinlogEvent>& events) {
  std::vector<EventKind> kinds;
  for (const auto& event : events) {
    switch (event.kind) {
      case EventKind::kGtid:
      case EventKind::kTableMap:
      case EventKind::kWriteRows:
      case EventKind::kUpdateRows:
      case EventKind::kDeleteRows:
      case EventKind::kXid:
        kinds.push_back(event.kind);
        break;
      default:
        break;
    }
  }
  return kinds;
}

class BinlogStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    table_ = testing::unique_name("bl");
    db_.execute(fmt::format("CREATE TABLE {} (id INT PRIMARY KEY, v VARCHAR(20))", table_));
  }
  void TearDown() override { db_.execute("DROP TABLE IF EXISTS " + table_); }

  void commit_transaction(int id) {
    db_.execute("START TRANSACTION");
    db_.execute(fmt::format("INSERT INTO {} VALUES ({}, 'a')", table_, id));
    db_.execute(fmt::format("UPDATE {} SET v = 'b' WHERE id = {}", table_, id));
    db_.execute(fmt::format("DELETE FROM {} WHERE id = {}", table_, id));
    db_.execute("COMMIT");
  }

  Connection db_ = Connection::open(testing::mariadb_admin_options());
  std::string table_;
};

TEST_F(BinlogStreamTest, DeliversACommittedTransactionInOrder) {
  const SourcePosition before = current_position(db_);
  commit_transaction(1);
  const SourcePosition after = current_position(db_);

  auto options = stream_options();
  options.start_position = before.file_position;
  auto stream = BinlogStream::open(options);
  auto events = read_to_end(stream);

  EXPECT_EQ(
      transaction_kinds(events),
      (std::vector<EventKind>{EventKind::kGtid, EventKind::kTableMap, EventKind::kWriteRows, EventKind::kTableMap,
                              EventKind::kUpdateRows, EventKind::kTableMap, EventKind::kDeleteRows, EventKind::kXid}));
  for (const auto& event : events) {
    if (event.kind == EventKind::kTableMap) {
      ASSERT_TRUE(event.table_map.has_value());
      EXPECT_EQ(event.table_map->table, table_);
      EXPECT_EQ(event.table_map->database, testing::stack().mariadb().database);
    }
    if (event.kind == EventKind::kGtid) {
      ASSERT_TRUE(event.gtid.has_value());
      EXPECT_EQ(event.gtid, after.gtid.in_domain(event.gtid->domain)) << "GTID differs from @@gtid_binlog_pos";
    }
  }
  EXPECT_EQ(stream.position(), after.file_position) << "stream must end where the server's binlog ends";
}

TEST_F(BinlogStreamTest, GtidStartResumesAfterTheGivenTransaction) {
  const SourcePosition before = current_position(db_);
  commit_transaction(1);
  const SourcePosition middle = current_position(db_);
  commit_transaction(2);
  const SourcePosition after = current_position(db_);

  auto from_file = stream_options();
  from_file.start_position = before.file_position;
  auto full_stream = BinlogStream::open(from_file);
  auto full = read_to_end(full_stream);

  auto from_gtid = stream_options();
  from_gtid.start_gtid = middle.gtid;
  auto resumed_stream = BinlogStream::open(from_gtid);
  auto resumed = read_to_end(resumed_stream);

  std::vector<Gtid> full_gtids, resumed_gtids;
  for (const auto& e : full) {
    if (e.gtid) full_gtids.push_back(*e.gtid);
  }
  for (const auto& e : resumed) {
    if (e.gtid) resumed_gtids.push_back(*e.gtid);
  }
  ASSERT_EQ(full_gtids.size(), 2u);
  ASSERT_EQ(resumed_gtids.size(), 1u) << "resume must start after " << middle.gtid.to_string();
  EXPECT_EQ(resumed_gtids[0], full_gtids[1]);
  EXPECT_EQ(resumed_gtids[0], after.gtid.in_domain(resumed_gtids[0].domain));
  EXPECT_EQ(resumed_stream.position(), after.file_position);
}

TEST(BinlogStreamOptionsTest, RefusesServerIdZeroAndMissingStart) {
  auto options = stream_options();
  options.start_position = BinlogPosition{"binlog.000001", 4};
  options.server_id = 0;
  EXPECT_THROW(BinlogStream::open(options), ConfigError);
  options.server_id = 9002;
  options.start_position.reset();
  EXPECT_THROW(BinlogStream::open(options), ConfigError);
}

TEST(BinlogStreamOptionsTest, UnknownFileIsAClearError) {
  auto options = stream_options();
  options.start_position = BinlogPosition{"binlog.999999", 4};
  try {
    auto stream = BinlogStream::open(options);
    while (stream.next()) {
    }
    FAIL() << "streamed from a binlog file that does not exist";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("binlog.999999"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace binberg::mysql
