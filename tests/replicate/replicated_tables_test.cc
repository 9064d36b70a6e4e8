// The assertions path A keeps after every commit (replicated_tables.h, ReplicatedTable::committed):
// a table pair records the position it was committed at, both tables of it (invariant 3), past the
// one it held (invariant 4). A pair that breaks either aborts the process.

#include <gtest/gtest.h>

#include "iceberg/table_writer.h"
#include "replicate/replicated_tables.h"
#include "replicate/simulated_binlog.h"
#include "tables/table_pair.h"

namespace binberg::replicate::simulation {
namespace {

capture::SourcePosition at(std::uint64_t offset) {
  return capture::SourcePosition{mysql::BinlogPosition{"bin.000001", offset}, {}};
}

// The Iceberg tables of simulated table t0 in a real SQLite catalog, each committed once: the
// current-state table at STATE_AT, the changelog at CHANGELOG_AT.
class CommittedPair {
 public:
  CommittedPair(const capture::SourcePosition& state_at, const capture::SourcePosition& changelog_at) {
    SimRandom random(1);
    SimClock clock;
    SimulatedBinlog binlog(random, clock, 1, false, 2);
    tables::TablePair pair =
        tables::open_table_pair(catalog_.catalog(), "sim", "t0", "_changelog", binlog.schema("t0"), {});
    table.source = capture::CapturedTable{SimulatedBinlog::kDatabase, "t0"};
    table.state = std::make_unique<iceberg::TableWriter>(std::move(*pair.state), iceberg::WriteMode::kUpsert);
    table.changelog = std::make_unique<iceberg::TableWriter>(std::move(*pair.changelog), iceberg::WriteMode::kAppend);
    commit(*table.state, state_at);
    commit(*table.changelog, changelog_at);
  }

  ReplicatedTable table;

 private:
  void commit(iceberg::TableWriter& writer, const capture::SourcePosition& position) {
    iceberg::commit_tables(catalog_.catalog(), {&writer}, {writer.prepare("test", position.to_summary(), 0)});
  }

  testing::SimCatalog catalog_;
};

TEST(ReplicatedTableTest, APairThatRecordedItsPositionHoldsItAndNothingPending) {
  CommittedPair pair(at(200), at(200));
  pair.table.position = at(100);
  pair.table.dirty = true;
  pair.table.committed(at(200), {});
  EXPECT_EQ(pair.table.position->to_string(), at(200).to_string());
  EXPECT_FALSE(pair.table.dirty);
}

TEST(ReplicatedTableDeathTest, APairThatMovedBackAborts) {
  CommittedPair pair(at(200), at(200));
  pair.table.position = at(300);
  EXPECT_DEATH(pair.table.committed(at(200), {}), "table sim.t0 moved from bin.000001:300 back to bin.000001:200");
}

TEST(ReplicatedTableDeathTest, APairWhoseTablesRecordDifferentPositionsAborts) {
  CommittedPair pair(at(100), at(200));
  EXPECT_DEATH(pair.table.committed(at(200), {}),
               "the tables of sim.t0 do not both record the position bin.000001:200 they were committed at");
}

}  // namespace
}  // namespace binberg::replicate::simulation
