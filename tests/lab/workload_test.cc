// The workload generator: its PRNG against known answers (from an independent transcription of
// the reference xoshiro256** and SplitMix64 in Python), determinism of the SQL it produces, and a
// shadow model that replays every statement and checks the generator only touches live keys,
// counts the events each statement logs exactly, and follows the mix and hot-key options.

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>
#include <string_view>

#include "core/canonical.h"
#include "core/error.h"
#include "lab/prng.h"
#include "lab/runner.h"
#include "lab/workload.h"

namespace binberg::lab {
namespace {

TEST(PrngTest, MatchesReferenceSequence) {
  Prng one(1);
  EXPECT_EQ(one.next(), 0xb3f2af6d0fc710c5ULL);
  EXPECT_EQ(one.next(), 0x853b559647364ceaULL);
  EXPECT_EQ(one.next(), 0x92f89756082a4514ULL);
  EXPECT_EQ(one.next(), 0x642e1c7bc266a3a7ULL);
  Prng zero(0);
  EXPECT_EQ(zero.next(), 0x99ec5f36cb75f2b4ULL);
  EXPECT_EQ(zero.next(), 0xbf6e1f784956452aULL);
}

TEST(PrngTest, BoundedDrawsStayInRangeAndCoverIt) {
  Prng random(7);
  std::vector<int> seen(10);
  for (int i = 0; i < 10'000; ++i) {
    const std::uint64_t value = random.below(10);
    ASSERT_LT(value, 10u);
    ++seen[value];
  }
  for (int count : seen) EXPECT_NEAR(count, 1000, 150);
  for (int i = 0; i < 1000; ++i) {
    const std::int64_t value = random.between(-3, 3);
    ASSERT_GE(value, -3);
    ASSERT_LE(value, 3);
  }
  EXPECT_THROW(random.below(0), Error);
}

std::string plan(const WorkloadOptions& options, int transactions) {
  Generator generator(options, std::vector<TableKeys>(kTableCount));
  std::string text;
  for (int i = 0; i < transactions; ++i) text += transaction_text(generator.next());
  return text;
}

TEST(GeneratorTest, SameSeedSameStatementsOtherSeedOthers) {
  WorkloadOptions options;
  options.seed = 42;
  EXPECT_EQ(plan(options, 300), plan(options, 300));
  WorkloadOptions other = options;
  other.seed = 43;
  EXPECT_NE(plan(options, 300), plan(other, 300));
}

TEST(GeneratorTest, PlanDigestIsTheSha256OfThePrintedSql) {
  WorkloadOptions options;
  Generator a(options, std::vector<TableKeys>(kTableCount)), b(options, std::vector<TableKeys>(kTableCount));
  RunLimits limits;
  limits.transactions = 50;
  std::string printed;
  const RunSummary first =
      run_workload(a, limits, [&](const Transaction&, const std::string& text) { printed += text; });
  const RunSummary second = run_workload(b, limits, [](const Transaction&, const std::string&) {});
  EXPECT_EQ(first.plan_digest, second.plan_digest);
  EXPECT_EQ(first.plan_digest, sha256_hex(printed));
  EXPECT_EQ(first.transactions, 50u);
}

// Replays the generator's statements on sets of keys, as the server would.
class ShadowModel {
 public:
  explicit ShadowModel(const std::string& prefix) : prefix_(prefix) {}

  // Applies STATEMENT; returns the row events the server logs for it.
  EventCounts apply(const std::string& statement) {
    // Parsed by hand: std::regex recurses per character (too deep for a bulk INSERT) and trips
    // GCC 12's maybe-uninitialized warning under the sanitizers.
    EventCounts events;
    const auto table_after = [&](std::string_view head) {
      const std::size_t end = statement.find(' ', head.size());
      return statement.substr(head.size(), end - head.size());
    };
    if (statement.starts_with("INSERT INTO ")) {
      std::set<std::int64_t>& keys = tables_[table_after("INSERT INTO ")];
      // Generated values hold no '(', so each '(' after VALUES opens a row and its id follows.
      for (std::size_t at = statement.find('(', statement.find(" VALUES ")); at != std::string::npos;
           at = statement.find('(', at + 1)) {
        const std::int64_t id = std::stoll(statement.substr(at + 1));
        EXPECT_TRUE(keys.insert(id).second) << "duplicate key " << id << " in " << statement.substr(0, 80);
        ++events.inserts;
      }
    } else if (statement.starts_with("UPDATE ") && statement.find(" SET id = ") != std::string::npos) {
      std::set<std::int64_t>& keys = tables_[table_after("UPDATE ")];
      const std::int64_t new_id = std::stoll(statement.substr(statement.find(" SET id = ") + 10));
      const std::int64_t old_id = std::stoll(statement.substr(statement.rfind(" WHERE id = ") + 12));
      EXPECT_EQ(keys.erase(old_id), 1u) << statement;
      EXPECT_TRUE(keys.insert(new_id).second) << statement;
      ++events.updates;
    } else if (statement.starts_with("UPDATE ")) {
      std::set<std::int64_t>& keys = tables_[table_after("UPDATE ")];
      for (std::int64_t id : in_list(statement)) {
        EXPECT_TRUE(keys.contains(id)) << "update of a missing key " << id;
        ++events.updates;
      }
    } else if (statement.starts_with("DELETE FROM ")) {
      std::set<std::int64_t>& keys = tables_[table_after("DELETE FROM ")];
      for (std::int64_t id : in_list(statement)) {
        EXPECT_EQ(keys.erase(id), 1u) << "delete of a missing key " << id;
        ++events.deletes;
      }
    } else if (statement.starts_with("ALTER TABLE ")) {
      EXPECT_TRUE(tables_.contains(table_after("ALTER TABLE ")) || statement.find(prefix_) != std::string::npos)
          << statement;
      ++schema_changes_;  // no row events
    } else {
      ADD_FAILURE() << "unexpected statement " << statement.substr(0, 120);
    }
    return events;
  }

  const std::set<std::int64_t>& keys(std::size_t table) { return tables_[prefix_ + kTableSuffixes[table]]; }
  std::uint64_t schema_changes() const { return schema_changes_; }

 private:
  // The keys of "... WHERE id IN (a, b, ...)", each listed once.
  static std::vector<std::int64_t> in_list(const std::string& statement) {
    const std::size_t open = statement.rfind("WHERE id IN (") + 13;
    const std::string list = statement.substr(open, statement.find(')', open) - open);
    std::vector<std::int64_t> out;
    std::set<std::int64_t> distinct;
    std::istringstream in(list);
    std::string item;
    while (std::getline(in, item, ',')) {
      out.push_back(std::stoll(item));
      EXPECT_TRUE(distinct.insert(out.back()).second) << "key listed twice: " << list;
    }
    return out;
  }

  std::string prefix_;
  std::map<std::string, std::set<std::int64_t>> tables_;
  std::uint64_t schema_changes_ = 0;
};

TEST(GeneratorTest, TouchesOnlyLiveKeysAndCountsEveryEvent) {
  WorkloadOptions options;
  options.seed = 5;
  options.rows_per_statement = 7;
  options.key_change_share = 0.1;
  options.large_every = 97;
  options.large_rows = 2500;
  Generator generator(options, std::vector<TableKeys>(kTableCount));
  ShadowModel shadow(options.prefix);
  EventCounts generated, replayed;
  int large = 0;
  for (int t = 0; t < 2000; ++t) {
    const Transaction txn = generator.next();
    EventCounts counted;
    for (const std::string& statement : txn.statements) counted += shadow.apply(statement);
    EXPECT_EQ(counted.inserts, txn.events.inserts) << "transaction " << txn.number;
    EXPECT_EQ(counted.updates, txn.events.updates) << "transaction " << txn.number;
    EXPECT_EQ(counted.deletes, txn.events.deletes) << "transaction " << txn.number;
    if (txn.events.inserts == options.large_rows && txn.statements.size() == 3) ++large;
    generated += txn.events;
  }
  EXPECT_EQ(large, 2000 / 97);
  for (std::size_t table = 0; table < kTableCount; ++table) {
    const std::vector<std::int64_t>& live = generator.keys()[table].live;
    EXPECT_EQ(std::set<std::int64_t>(live.begin(), live.end()), shadow.keys(table));
  }
  EXPECT_GT(generated.updates, 0u);
  EXPECT_GT(generated.deletes, 0u);
}

TEST(GeneratorTest, SchemaChangesCycleThroughAddsAndWideningAndCarryNoRowEvents) {
  WorkloadOptions options;
  options.seed = 3;
  options.ddl_every = 10;
  Generator generator(options, std::vector<TableKeys>(kTableCount));
  ShadowModel shadow(options.prefix);
  std::vector<std::string> changes;
  for (int t = 0; t < 300; ++t) {
    const Transaction txn = generator.next();
    for (const std::string& statement : txn.statements) shadow.apply(statement);
    EXPECT_EQ(txn.schema_change, txn.statements.front().starts_with("ALTER TABLE "));
    if (txn.schema_change) {
      EXPECT_EQ(txn.number % 10, 0U);
      EXPECT_EQ(txn.events.total(), 0U);
      ASSERT_EQ(txn.statements.size(), 1U);
      changes.push_back(txn.statements.front());
    }
  }
  ASSERT_EQ(changes.size(), 30U);
  EXPECT_EQ(shadow.schema_changes(), 30U);
  EXPECT_EQ(changes[0], "ALTER TABLE gen_accounts ADD COLUMN IF NOT EXISTS ddl_3_0_n INT NULL");
  EXPECT_EQ(changes[1],
            "ALTER TABLE gen_accounts ADD COLUMN IF NOT EXISTS ddl_3_0_d VARCHAR(24) NOT NULL DEFAULT 'c0'");
  EXPECT_EQ(changes[2], "ALTER TABLE gen_accounts MODIFY COLUMN IF EXISTS ddl_3_0_n BIGINT NULL");
  EXPECT_EQ(changes[3], "ALTER TABLE gen_orders ADD COLUMN IF NOT EXISTS ddl_3_1_n INT NULL");
}

TEST(GeneratorTest, FollowsTheMix) {
  WorkloadOptions options;
  options.seed = 9;
  options.mix = Mix{60, 30, 10};
  Generator generator(options, std::vector<TableKeys>(kTableCount));
  EventCounts events;
  for (int t = 0; t < 10'000; ++t) events += generator.next().events;
  const double total = static_cast<double>(events.total());
  EXPECT_NEAR(events.inserts / total, 0.60, 0.02);
  EXPECT_NEAR(events.updates / total, 0.30, 0.02);
  EXPECT_NEAR(events.deletes / total, 0.10, 0.02);
}

TEST(GeneratorTest, HotSetTakesItsShareOfUpdates) {
  WorkloadOptions options;
  options.seed = 11;
  options.mix = Mix{0, 1, 0};
  options.hot_keys = 5;
  options.hot_share = 1.0;
  options.key_change_share = 0;
  std::vector<TableKeys> keys(kTableCount);
  for (TableKeys& table : keys) {
    for (std::int64_t id = 1; id <= 1000; ++id) table.live.push_back(id);
    table.next_id = 1001;
  }
  Generator generator(options, keys);
  for (int t = 0; t < 500; ++t) {
    for (const std::string& statement : generator.next().statements) {
      const std::size_t at = statement.rfind("WHERE id IN (");
      ASSERT_NE(at, std::string::npos) << statement;
      EXPECT_LE(std::stoll(statement.substr(at + 13)), 5) << "a cold key with hot_share 1";
    }
  }
}

TEST(GeneratorTest, RejectsAnEmptyMix) {
  WorkloadOptions options;
  options.mix = Mix{0, 0, 0};
  EXPECT_THROW(Generator(options, std::vector<TableKeys>(kTableCount)), ConfigError);
}

}  // namespace
}  // namespace binberg::lab
