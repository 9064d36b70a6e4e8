#include "publish/learned_columns.h"

#include <gtest/gtest.h>

namespace binberg::publish {
namespace {

using Names = std::vector<std::string>;
using EarlierNames = decltype(LearnedColumns::earlier_names);

void learn(LearnedColumns& learned, const std::string& clauses, const TableSchema* registered = nullptr) {
  learned.learn(mysql::parse_ddl("ALTER TABLE t " + clauses, "db"), registered);
}

Column column(std::string name, SourceType type, bool nullable) {
  Column c;
  c.name = std::move(name);
  c.type = type;
  c.nullable = nullable;
  return c;
}

// The table as its records describe it: id and tier, both NOT NULL.
TableSchema id_and_tier() {
  TableSchema table;
  table.database = "db";
  table.table = "t";
  table.columns = {column("id", SourceType::kInt, false), column("tier", SourceType::kInt, false)};
  return table;
}

TEST(LearnedColumnsTest, RenamesChainAndKeepTheDefaultWhileModifyDropsIt) {
  LearnedColumns learned;
  learn(learned, "ADD COLUMN tier INT NOT NULL DEFAULT 3");
  learn(learned, "RENAME COLUMN tier TO grade");
  learn(learned, "RENAME COLUMN grade TO level");
  EXPECT_EQ(learned.earlier_names, (EarlierNames{{"level", {"grade", "tier"}}}));
  ASSERT_TRUE(learned.defaults.contains("level")) << "a rename keeps the rows' values, so their default";
  EXPECT_EQ(learned.defaults.at("level").text, "3");
  EXPECT_EQ(learned.defaults.size(), 1u);

  learn(learned, "CHANGE level rank BIGINT NOT NULL");  // a new definition under a new name
  EXPECT_EQ(learned.earlier_names, (EarlierNames{{"rank", {"level", "grade", "tier"}}}));
  EXPECT_TRUE(learned.defaults.empty()) << "a redefined column's rows no longer hold what its ADD gave them";

  learn(learned, "DROP COLUMN rank");
  EXPECT_TRUE(learned.empty());
}

TEST(LearnedColumnsTest, ANameTakenAgainIsNoLongerAnAlias) {
  LearnedColumns learned;
  learn(learned, "RENAME COLUMN owner TO holder");
  learn(learned, "ADD COLUMN owner VARCHAR(10) NULL");  // a new column, not the renamed one
  EXPECT_TRUE(learned.earlier_names.empty());

  learn(learned, "RENAME COLUMN a TO tmp, RENAME COLUMN b TO a, RENAME COLUMN tmp TO b");  // a swap
  EXPECT_EQ(learned.earlier_names, (EarlierNames{{"b", {"tmp"}}}))
      << "Avro matches a and b by name: a swap cannot be told with aliases";

  learn(learned, "RENAME COLUMN b TO c, RENAME COLUMN c TO b");  // and back
  EXPECT_EQ(learned.earlier_names, (EarlierNames{{"b", {"c", "tmp"}}}));
}

TEST(LearnedColumnsTest, AnAddOfAPresentColumnChangesNothing) {
  const TableSchema registered = id_and_tier();
  LearnedColumns learned;
  learn(learned, "ADD COLUMN IF NOT EXISTS tier INT NOT NULL DEFAULT 9", &registered);
  EXPECT_TRUE(learned.empty());
  learn(learned, "ADD COLUMN IF NOT EXISTS code INT NOT NULL", &registered);
  ASSERT_TRUE(learned.defaults.contains("code"));
  EXPECT_EQ(learned.defaults.at("code").kind, mysql::ExistingRowsValue::Kind::kImplicit);
}

TEST(LearnedColumnsTest, HistoryGivesValuesForNotNullColumnsAndAliasesForPresentOnes) {
  LearnedColumns learned;
  learn(learned, "ADD COLUMN tier INT NOT NULL DEFAULT 3, ADD COLUMN note VARCHAR(9) NULL DEFAULT 'x'");
  learn(learned, "RENAME COLUMN tier TO grade");
  TableSchema table;
  table.database = "db";
  table.table = "t";
  table.columns = {column("id", SourceType::kInt, false), column("grade", SourceType::kInt, false),
                   column("note", SourceType::kVarchar, true)};
  const envelope::ColumnHistory history = learned.history(table);
  EXPECT_EQ(history.defaults, (std::map<std::string, Value>{{"grade", std::int64_t{3}}}))
      << "a nullable column needs no default besides null";
  EXPECT_EQ(history.earlier_names, (std::map<std::string, Names>{{"grade", {"tier"}}}));
}

// DDL may spell a column in another case than its definition, as MySQL allows: the learned names
// are the column's all the same, and an earlier name is spelled as the records spell it (an Avro
// alias matches a field name exactly).
TEST(LearnedColumnsTest, ColumnsNamedInAnotherCaseAreTheSameColumns) {
  const TableSchema registered = id_and_tier();
  LearnedColumns learned;
  learn(learned, "RENAME COLUMN TIER TO Grade", &registered);
  EXPECT_EQ(learned.earlier_names, (EarlierNames{{"Grade", {"tier"}}}));
  learn(learned, "ADD COLUMN Code INT NOT NULL DEFAULT 4", &registered);
  learn(learned, "RENAME COLUMN grade TO level, RENAME COLUMN CODE TO code2", &registered);
  EXPECT_EQ(learned.earlier_names, (EarlierNames{{"level", {"Grade", "tier"}}, {"code2", {"Code"}}}));
  EXPECT_TRUE(learned.defaults.contains("CODE2"));
  learn(learned, "RENAME COLUMN level TO LEVEL", &registered);  // only the case changes: still a new field name
  EXPECT_EQ(learned.earlier_names.at("level"), (Names{"level", "Grade", "tier"}));
  EXPECT_EQ(learned.earlier_names.begin()->first, "code2");
  EXPECT_EQ(std::next(learned.earlier_names.begin())->first, "LEVEL");
  learn(learned, "DROP COLUMN Level, DROP COLUMN Code2", &registered);
  EXPECT_TRUE(learned.empty());
}

}  // namespace
}  // namespace binberg::publish
