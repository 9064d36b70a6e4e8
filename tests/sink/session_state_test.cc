// The pure parts of the sink's state machine, each on its own; the simulation
// (sink_simulation_test.cc) runs them together.

#include <gtest/gtest.h>

#include "envelope/change_envelope.h"
#include "envelope/transaction_footprint.h"
#include "sink/ownership.h"
#include "sink/progress.h"
#include "sink/record_judgement.h"
#include "sink/session_state.h"
#include "sink/transactions.h"

namespace binberg::sink {
namespace {

const mysql::BinlogPosition kAt100{"bin.000001", 100}, kAt200{"bin.000001", 200};

TransactionMark mark(std::string id, const mysql::BinlogPosition& position,
                     std::optional<envelope::Footprint> footprint = std::nullopt) {
  return TransactionMark{std::move(id), position, std::move(footprint)};
}

const OpenTransactions::Concerns kEveryPartition = [](const auto&, const auto&, const auto&) { return true; };

TEST(ProgressTest, TheOffsetsATableRecordsKeepTheirFormByteForByte) {
  PartitionProgress progress;
  progress[Partition(0)].next_offset = Offset(5);
  progress[Partition(0)].last = Coordinates{kAt100, 1, 1};
  progress[Partition(0)].last_txn = "0-1-1";
  progress[Partition(0)].last_txn_position = kAt100;
  progress[Partition(10)].next_offset = Offset(3);
  progress[Partition(2)].next_offset = Offset(7);
  const std::string json =
      R"({"0":{"last":"bin.000001:100#1/new","last_txn":"0-1-1","last_txn_position":"bin.000001:100","next_offset":5},)"
      R"("10":{"next_offset":3},"2":{"next_offset":7}})";
  EXPECT_EQ(progress_json(progress), json);
  EXPECT_EQ(progress_json(parse_progress(json, "test")), json);
  EXPECT_EQ(sink_next_offsets(json, "test").at(Partition(10)), Offset(3));
  EXPECT_THROW(parse_progress(R"({"0":{"next_offset":"five"}})", "table db.t"), Error);
}

TEST(OffsetGapTest, AStartPastTheFirstOffsetOrBeyondTheEndIsAGapNamingTheMissingOffsets) {
  EXPECT_FALSE(gap_at_start(Offset(10), {Offset(0), Offset(20)}));
  EXPECT_FALSE(gap_at_start(Offset(10), {Offset(10), Offset(10)})) << "caught up, older records deleted: no gap";
  const auto deleted = gap_at_start(Offset(10), {Offset(15), Offset(20)});
  ASSERT_TRUE(deleted);
  EXPECT_EQ(deleted->kind, OffsetGap::Kind::kDeleted);
  EXPECT_EQ(deleted->from, Offset(10));
  EXPECT_EQ(deleted->to, Offset(15));
  const std::string message = deleted->describe("cdc.shop.orders", Partition(2));
  EXPECT_NE(message.find("topic cdc.shop.orders [2]: offsets 10..14 were deleted"), std::string::npos) << message;
  // A table with no progress needs the partition from its first record.
  EXPECT_TRUE(gap_at_start(Offset(0), {Offset(3), Offset(20)}));
  EXPECT_FALSE(gap_at_start(Offset(0), {Offset(0), Offset(0)}));
  const auto recreated = gap_at_start(Offset(10), {Offset(0), Offset(4)});
  ASSERT_TRUE(recreated);
  EXPECT_EQ(recreated->kind, OffsetGap::Kind::kRecreated);
  EXPECT_NE(recreated->describe("t", Partition(0)).find("ends at offset 4 but the tables applied it up to offset 10"),
            std::string::npos);
}

TEST(OffsetGapTest, ASkipOverTransactionMarkersIsNoGapOneOverDeletedRecordsIs) {
  EXPECT_FALSE(gap_in_delivery(Offset(10), Offset(10), Offset(10), Offset(0)));
  EXPECT_FALSE(gap_in_delivery(Offset(10), Offset(10), Offset(12), Offset(0))) << "a marker and an aborted record";
  EXPECT_FALSE(gap_in_delivery(Offset(10), Offset(10), Offset(12), Offset(10)));
  const auto gap = gap_in_delivery(Offset(10), Offset(10), Offset(40), Offset(30));
  ASSERT_TRUE(gap);
  EXPECT_EQ(gap->from, Offset(10));
  EXPECT_EQ(gap->to, Offset(30));
}

// Seed 29 of the sink simulation with lab::Prng: a re-read from offset 1 of a partition whose
// table holds it up to offset 6 met the partition starting at 6 (retention); that was called a
// gap, the table stopped and a transaction reached its two tables in two commits.
TEST(OffsetGapTest, DeletedRecordsBelowWhatTheTableHoldsAreNoGapThoseAboveAre) {
  EXPECT_FALSE(gap_in_delivery(Offset(1), Offset(6), Offset(6), Offset(6)));
  EXPECT_FALSE(gap_in_delivery(Offset(1), Offset(6), Offset(4), Offset(4))) << "still re-reading";
  const auto gap = gap_in_delivery(Offset(1), Offset(6), Offset(9), Offset(8));
  ASSERT_TRUE(gap) << "offsets 6 and 7 were deleted before the table applied them";
  EXPECT_EQ(gap->from, Offset(6));
  EXPECT_EQ(gap->to, Offset(8));
}

TEST(SessionStateTest, TheReaderSkippingAheadOfAPartitionsNextOffsetIsReported) {
  SessionState state("g", SessionMode::kSink);
  state.expect({"t", 0}, Offset(5));
  EXPECT_FALSE(state.delivered({"t", 0}, Offset(5)));
  EXPECT_FALSE(state.delivered({"t", 0}, Offset(6)));
  EXPECT_EQ(state.delivered({"t", 0}, Offset(9)), Offset(7));
  EXPECT_FALSE(state.delivered({"t", 0}, Offset(10)));
  EXPECT_FALSE(state.delivered({"t", 0}, Offset(3))) << "a record below is redelivered, not skipped";
  EXPECT_FALSE(state.delivered({"t", 0}, Offset(11)));
}

TEST(OwnershipTest, ASinkClaimsATableAtTheNextEpochHoldsItThereAndIsFencedByANewerOne) {
  Ownership ownership({"a", "b"}, "sink-1", Scaling::kAlone);
  EXPECT_TRUE(ownership.writes("a"));
  const Claim claim = ownership.judge("a", Epoch(3), "sink-0");
  EXPECT_EQ(claim.kind, Claim::Kind::kClaim);
  EXPECT_EQ(claim.epoch, Epoch(4));
  ownership.committed("a", claim.epoch);
  EXPECT_EQ(ownership.judge("a", Epoch(4), "sink-1").kind, Claim::Kind::kHold);
  EXPECT_EQ(ownership.judge("a", Epoch(5), "sink-2").kind, Claim::Kind::kFenced);
  EXPECT_EQ(ownership.judge("a", Epoch(4), "sink-2").kind, Claim::Kind::kFenced) << "same epoch, other writer";
}

TEST(OwnershipTest, AFencedSharedTableIsClaimedAgainOnceItsFenceEnds) {
  Ownership ownership({"a", "b"}, "sink-1", Scaling::kShared);
  EXPECT_TRUE(ownership.assign({1}));
  EXPECT_FALSE(ownership.assign({1})) << "nothing changed";
  ownership.committed("b", Epoch(1));
  const auto now = std::chrono::steady_clock::time_point(std::chrono::hours(1));
  ownership.fence("b", now + std::chrono::seconds(10));
  EXPECT_FALSE(ownership.writes("b"));
  EXPECT_FALSE(ownership.lift_fences(now));
  EXPECT_TRUE(ownership.lift_fences(now + std::chrono::seconds(10)));
  EXPECT_EQ(ownership.judge("b", Epoch(2), "sink-2").kind, Claim::Kind::kClaim);
}

TEST(OwnershipDeathTest, AWriterEpochNeverGoesBack) {
  Ownership ownership({"a"}, "sink-1", Scaling::kAlone);
  ownership.committed("a", Epoch(4));
  EXPECT_DEATH(ownership.committed("a", Epoch(3)), "committed at writer epoch 3 after holding it at 4");
}

TEST(OpenTransactionsTest, ATransactionIsWholeOnceEveryPartitionHoldsWhatItsFootprintLists) {
  OpenTransactions open;
  const envelope::Footprint footprint = {{{"t", 0}, 2}, {{"t", 1}, 1}};
  EXPECT_FALSE(open.count({"t", 0}, mark("x", kAt100), kEveryPartition));
  EXPECT_FALSE(open.count({"t", 1}, mark("x", kAt100, footprint), kEveryPartition));
  EXPECT_TRUE(open.partly_in("t"));
  EXPECT_FALSE(open.whole());
  EXPECT_TRUE(open.count({"t", 0}, mark("x", kAt100, footprint), kEveryPartition));
  EXPECT_TRUE(open.whole());
}

TEST(OpenTransactionsTest, ANewerTransactionBehindOneThatNeverEndedInItsPartitionAbandonsIt) {
  OpenTransactions open;
  open.count({"t", 0}, mark("x", kAt100), kEveryPartition);
  EXPECT_EQ(open.abandoned_by({"t", 0}, mark("x", kAt100)), std::nullopt) << "its own record";
  EXPECT_EQ(open.abandoned_by({"t", 0}, mark("w", {"bin.000001", 50})), std::nullopt) << "an older one: a redelivery";
  EXPECT_EQ(open.abandoned_by({"t", 1}, mark("y", kAt200)), std::nullopt) << "another partition";
  EXPECT_EQ(open.abandoned_by({"t", 0}, mark("y", kAt200)), "x");
}

ReadRecord record_in(const std::string& topic, std::int32_t partition, std::int64_t offset) {
  ReadRecord read;
  read.record.topic = topic;
  read.record.partition = partition;
  read.record.offset = offset;
  return read;
}

TEST(DrainTest, WhileDrainingANewerTransactionWaitsAndEverythingBehindIt) {
  OpenTransactions open;
  open.count({"t", 0}, mark("x", kAt200), kEveryPartition);
  Drain drain;
  EXPECT_FALSE(drain.waits({"t", 1}, mark("y", {"bin.000001", 300}), open)) << "not draining";
  drain.begin(open);
  EXPECT_FALSE(drain.waits({"t", 1}, mark("x", kAt200), open)) << "an open one is let in";
  EXPECT_FALSE(drain.waits({"t", 1}, mark("w", kAt100), open)) << "an older one is let in";
  EXPECT_TRUE(drain.waits({"t", 1}, mark("y", {"bin.000001", 300}), open));
  drain.wait(record_in("t", 1, 7), mark("y", {"bin.000001", 300}));
  EXPECT_TRUE(drain.waits({"t", 1}, mark("w", kAt100), open)) << "behind a waiting record";
  EXPECT_FALSE(drain.take_ready(open)) << "it still waits";
  drain.end();
  const std::optional<ReadRecord> ready = drain.take_ready(open);
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->record.partition, 1);
  EXPECT_FALSE(drain.anything_waits());
}

// Issue 25: a transaction after a schema change reached the other tables before the table of the
// statement was committed alone, and so two catalog commits. From the statement's first partition
// on, every record after it waits, in every topic; those before it go on.
TEST(DrainTest, BehindASchemaBarrierEveryTransactionAfterTheStatementWaitsInEveryTopic) {
  OpenTransactions open;
  Drain drain;
  drain.raise_barrier("t", kAt200);
  EXPECT_FALSE(drain.draining());
  EXPECT_FALSE(drain.waits({"u", 0}, mark("w", kAt100), open)) << "before the statement";
  EXPECT_FALSE(drain.waits({"u", 0}, TransactionMark{}, open)) << "no source position: begins no transaction";
  EXPECT_TRUE(drain.waits({"u", 0}, mark("y", {"bin.000001", 300}), open));
  drain.raise_barrier("v", {"bin.000001", 150});
  EXPECT_EQ(drain.barrier(), mysql::BinlogPosition("bin.000001", 150)) << "the lowest holds";
  EXPECT_TRUE(drain.waits({"u", 0}, mark("x", {"bin.000001", 170}), open));
  drain.lift_barrier("v");
  EXPECT_FALSE(drain.waits({"u", 0}, mark("x", {"bin.000001", 170}), open));
}

TEST(DrainTest, RecordsBehindABarrierAreHandedBackInTheirPartitionsOrderOnceItIsLifted) {
  OpenTransactions open;
  Drain drain;
  drain.raise_barrier("t", kAt200);
  drain.wait(record_in("u", 0, 4), mark("y", {"bin.000001", 300}));
  drain.wait(record_in("u", 0, 5), mark("w", kAt100));  // behind it: an older transaction produced again
  drain.wait(record_in("u", 1, 9), mark("z", {"bin.000001", 400}));
  EXPECT_FALSE(drain.anything_ready(open));
  drain.wait(record_in("u", 0, 4), mark("y", {"bin.000001", 300}), /*handed_back=*/true);  // first again
  EXPECT_EQ(drain.waiting(), 4u);
  drain.lift_barrier("t");
  std::vector<std::int64_t> offsets;
  while (const std::optional<ReadRecord> ready = drain.take_ready(open)) offsets.push_back(ready->record.offset);
  EXPECT_EQ(offsets, (std::vector<std::int64_t>{4, 4, 5, 9}));
  EXPECT_FALSE(drain.anything_waits());
}

RecordFacts facts_of(const std::string& topic, std::int32_t partition, TransactionMark txn) {
  RecordFacts facts;
  facts.partition = {topic, partition};
  facts.txn = std::move(txn);
  return facts;
}

// A schema change met in one partition of t's topic: a record after it waits in u's topic too, one
// before it goes on, and a record that shows an open transaction was abandoned still rolls back
// (waiting, it would hold back the commit that waits for that transaction). Once the statement is
// applied, what waited is handed back.
TEST(SessionStateTest, BehindASchemaChangeMetInOnePartitionRecordsAfterItWaitInEveryTopic) {
  SessionState state("group", SessionMode::kSink);
  TableState& t = state.add_table("t");
  TableState& u = state.add_table("u");
  for (const std::int32_t partition : {0, 1}) {
    t.progress_of(Partition(partition));
    u.progress_of(Partition(partition));
  }
  const Ownership ownership({"t", "u"}, "sink-1", Scaling::kAlone);
  const mysql::BinlogPosition at300{"bin.000001", 300};
  state.count(u, facts_of("u", 1, mark("w", kAt100)));  // before the statement, not whole
  SchemaChangeRecord statement;
  statement.txn = "0-1-2";
  statement.position = kAt200;
  statement.partitions = {Partition(0), Partition(1)};
  kafka::ConsumedRecord at;
  at.topic = "t";
  at.offset = 3;
  EXPECT_FALSE(state.meet(t, statement, at));
  EXPECT_FALSE(state.schema_change_due());
  EXPECT_EQ(state.route(u, record_in("u", 0, 0), facts_of("u", 0, mark("y", at300)), Arrival::kRead, ownership),
            Route::kWaits);
  EXPECT_EQ(state.route(u, record_in("u", 0, 0), facts_of("u", 0, mark("v", kAt100)), Arrival::kRead, ownership),
            Route::kChange)
      << "before the statement";
  EXPECT_EQ(state.route(t, record_in("t", 0, 4), facts_of("t", 0, mark("v", kAt100)), Arrival::kRead, ownership),
            Route::kHeld)
      << "behind the statement in its partition";
  EXPECT_EQ(state.route(u, record_in("u", 1, 0), facts_of("u", 1, mark("y", at300)), Arrival::kRead, ownership),
            Route::kAbandons)
      << "w never ended in u [1]";
  state.wait(record_in("u", 0, 5), facts_of("u", 0, mark("y", at300)), Arrival::kRead);
  EXPECT_FALSE(state.take_ready());
  at.partition = 1;
  EXPECT_TRUE(state.meet(t, statement, at));
  EXPECT_TRUE(state.schema_change_due());
  MetSchemaChange met = std::move(*t.schema_change);
  t.schema_change.reset();
  state.schema_change_applied(t, met);
  const std::optional<ReadRecord> ready = state.take_ready();
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->record.offset, 5);
}

TEST(OpenTransactionsTest, ATransactionAfterAPositionIsFoundWhileOpen) {
  OpenTransactions open;
  open.count({"u", 0}, mark("w", kAt100), kEveryPartition);
  EXPECT_EQ(open.open_after(kAt100), std::nullopt);
  open.count({"u", 0}, mark("y", {"bin.000001", 300}), kEveryPartition);
  EXPECT_EQ(open.open_after(kAt200), "y");
}

// A record of no source transaction (an outside producer's, undecodable) in the middle of an open
// transaction's records: waiting, it held back the rest of that transaction in its partition, the
// drain waited for it for ever and the sink never committed again (the poison-dlq drill, in CI).
TEST(DrainTest, ARecordOfNoTransactionNeverHoldsAnOpenOneBack) {
  OpenTransactions open;
  const envelope::Footprint footprint = {{{"t", 0}, 2}};
  open.count({"t", 0}, mark("x", kAt200), kEveryPartition);
  Drain drain;
  drain.begin(open);
  EXPECT_FALSE(drain.waits({"t", 0}, TransactionMark{}, open)) << "no transaction, no position";
  EXPECT_FALSE(drain.waits({"t", 0}, mark("x", kAt200, footprint), open));
  EXPECT_TRUE(open.count({"t", 0}, mark("x", kAt200, footprint), kEveryPartition));
  EXPECT_TRUE(open.whole());
}

ChangeEvent change_of(std::int64_t key, std::uint64_t position, std::string event_id) {
  auto schema = std::make_shared<TableSchema>();
  schema->database = "db";
  schema->table = "t";
  schema->columns.resize(1);
  schema->columns[0].name = "id";
  schema->primary_key = {0};
  ChangeEvent event;
  event.op = Op::kCreate;
  event.schema = schema;
  event.after = RowImage{Value(key)};
  event.source.file = "bin.000001";
  event.source.end_pos = position;
  event.event_id = std::move(event_id);
  return event;
}

TEST(ReplayJudgementTest, ARepeatIsADuplicateANewerChangeOfItsKeySupersedesItElseItApplies) {
  const RecordOrigin origin{"t", 0, 3};
  const ChangeEvent replayed = change_of(7, 100, "e1");
  const HistoryRecord other_key{{}, change_of(8, 300, "e2")}, same_key_later{{}, change_of(7, 300, "e3")};
  const HistoryRecord undecodable{{}, std::nullopt};
  const HistoryRecord replayed_before{{{std::string(kReplayOfHeader), origin.to_string()}}, change_of(7, 100, "e1")};
  EXPECT_EQ(judge_replay({other_key, undecodable}, replayed, origin), ReplayVerdict::kApply);
  EXPECT_EQ(judge_replay({other_key, same_key_later}, replayed, origin), ReplayVerdict::kSuperseded);
  EXPECT_EQ(judge_replay({replayed_before, same_key_later}, replayed, origin), ReplayVerdict::kDuplicate);
  EXPECT_EQ(judge_replay({HistoryRecord{{}, change_of(7, 100, "e1")}}, replayed, origin), ReplayVerdict::kDuplicate)
      << "its clean copy was applied";
}

// Issue 25, item 6: a key schema change moves a key to another partition, so the newer change of
// the key a replay must not undo can be in any partition; one partition's verdict decides.
TEST(ReplayJudgementTest, ANewerChangeOfItsKeyInAnyPartitionSupersedesIt) {
  const RecordOrigin origin{"t", 0, 3};
  const ChangeEvent replayed = change_of(7, 100, "e1");
  const HistoryRecord other_key{{}, change_of(8, 300, "e2")}, same_key_later{{}, change_of(7, 300, "e3")};
  const HistoryRecord replayed_before{{{std::string(kReplayOfHeader), origin.to_string()}}, change_of(7, 100, "e1")};
  using Partitions = std::vector<std::vector<HistoryRecord>>;
  EXPECT_EQ(judge_replay_across(Partitions{{other_key}, {}, {other_key}}, replayed, origin), ReplayVerdict::kApply);
  EXPECT_EQ(judge_replay_across(Partitions{{other_key}, {}, {same_key_later}}, replayed, origin),
            ReplayVerdict::kSuperseded);
  EXPECT_EQ(judge_replay_across(Partitions{{same_key_later}, {replayed_before}}, replayed, origin),
            ReplayVerdict::kDuplicate);
}

TEST(SessionStateDeathTest, APartitionsOffsetNeverMovesBack) {
  SessionState state("group", SessionMode::kSink);
  TableState& table = state.add_table("t");
  kafka::ConsumedRecord record;
  record.topic = "t";
  record.offset = 9;
  state.advance(table, record);
  EXPECT_EQ(table.progress.at(Partition(0)).next_offset, Offset(10));
  record.offset = 4;
  EXPECT_DEATH(state.advance(table, record), "the next offset moves back from 10 to 5");
}

TEST(SessionStateDeathTest, ACommitIsNeverCutInTheMiddleOfATransaction) {
  SessionState state("group", SessionMode::kSink);
  state.add_table("t");
  state.check_cut(CommitScope::kAll, nullptr);
  state.transactions().count({"t", 0}, mark("x", kAt100), kEveryPartition);
  EXPECT_DEATH(state.check_cut(CommitScope::kAll, nullptr), "a commit is cut while transaction x is open");
}

// A table is committed alone only for its schema change: every transaction before the statement was
// committed whole, in every table, just before.
TEST(SessionStateDeathTest, ATableIsCommittedAloneOnlyWhenNoTransactionIsOpenAndNoOtherTableHoldsChanges) {
  SessionState state("group", SessionMode::kSink);
  TableState& t = state.add_table("t");
  TableState& u = state.add_table("u");
  state.check_cut(CommitScope::kOneTable, &t);
  u.dirty = true;
  EXPECT_DEATH(state.check_cut(CommitScope::kOneTable, &t),
               "topic t: its table is committed alone while table u holds changes not committed");
  u.dirty = false;
  state.transactions().count({"u", 0}, mark("w", kAt100), kEveryPartition);
  EXPECT_DEATH(state.check_cut(CommitScope::kOneTable, &t),
               "topic t: its table is committed alone while transaction w is open");
}

}  // namespace
}  // namespace binberg::sink
