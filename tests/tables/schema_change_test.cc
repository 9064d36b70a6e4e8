// The schema evolution policy: which ALTER TABLE changes evolve the Iceberg tables, how (field ids,
// promotions, values for existing rows), and which are refused.

#include <gtest/gtest.h>

#include "tables/schema_change.h"
#include "tables/table_mapping.h"

namespace binberg::tables {
namespace {

using mysql::ColumnChange;
using mysql::ExistingRowsValue;

Column column(std::string name, SourceType type, bool nullable = true, std::uint32_t max_bytes = 0) {
  Column c;
  c.name = std::move(name);
  c.type = type;
  c.nullable = nullable;
  c.max_bytes = max_bytes;
  if (max_bytes > 0) c.charset = "utf8mb4";
  return c;
}

TableSchema accounts() {
  TableSchema table;
  table.database = "bank";
  table.table = "accounts";
  table.columns = {column("id", SourceType::kBigInt, false), column("balance", SourceType::kInt),
                   column("owner", SourceType::kVarchar, true, 80)};
  table.primary_key = {0};
  return table;
}

ColumnChange add(std::string name, ExistingRowsValue::Kind kind = ExistingRowsValue::Kind::kNull,
                 std::string text = "") {
  ColumnChange change;
  change.kind = ColumnChange::Kind::kAdd;
  change.column = std::move(name);
  change.existing_rows = ExistingRowsValue{kind, std::move(text)};
  change.text = "ADD COLUMN " + change.column;
  return change;
}

ColumnChange change_of(ColumnChange::Kind kind, std::string name, std::string new_name = "") {
  ColumnChange change;
  change.kind = kind;
  change.column = name;
  change.new_name = new_name.empty() ? name : new_name;
  change.text = "change of " + name;
  return change;
}

struct Fixture {
  TableSchema before = accounts();
  TableSchema now = accounts();
  iceberg::Schema state = current_state_schema(accounts(), {});
  iceberg::Schema changelog = changelog_schema(accounts(), {});
  mysql::DdlStatement statement{mysql::DdlStatement::Kind::kAlterTable, {{"bank", "accounts"}}, {}};
  bool accepted = false;
  TypeMapping types;

  SchemaChangePlan plan() const {
    SchemaChangeInput input;
    input.statement = &statement;
    input.before = &before;
    input.now = &now;
    input.state = &state;
    input.state_last_column_id = state.highest_field_id();
    input.changelog = &changelog;
    input.changelog_last_column_id = changelog.highest_field_id();
    input.accepted = accepted;
    input.types = types;
    return plan_schema_change(input);
  }
};

const iceberg::NestedField& field(const iceberg::Schema& schema, const std::string& name) {
  const iceberg::NestedField* found = schema.find_field(name);
  if (found == nullptr) throw Error("no field " + name);
  return *found;
}

TEST(SchemaChangeTest, AddColumnGetsAFreshOptionalFieldInBothTables) {
  Fixture f;
  f.now.columns.insert(f.now.columns.begin() + 2, column("tier", SourceType::kInt, false));
  f.statement.changes = {add("tier", ExistingRowsValue::Kind::kLiteral, "3")};
  const SchemaChangePlan plan = f.plan();
  ASSERT_TRUE(plan.changes_tables);
  const iceberg::NestedField& tier = field(*plan.state, "tier");
  EXPECT_EQ(tier.id, 4);  // above every id the table had
  EXPECT_FALSE(tier.required);
  EXPECT_EQ(plan.state->fields()[2].name, "tier");  // in the source's column order
  EXPECT_EQ(field(*plan.state, "owner").id, 3);     // existing fields keep their ids
  EXPECT_EQ(plan.state->identifier_field_ids(), std::vector<std::int32_t>{1});
  EXPECT_GT(field(plan.changelog, "tier").id, f.changelog.highest_field_id());
  EXPECT_GT(field(plan.changelog, "_before_tier").id, f.changelog.highest_field_id());
  ASSERT_EQ(plan.existing_rows.size(), 1U);
  EXPECT_EQ(plan.existing_rows[0].first, "tier");
  EXPECT_EQ(std::get<std::int64_t>(plan.existing_rows[0].second), 3);
  // The plan's source schema maps onto the plan's tables: rows after the change can be written.
  EXPECT_NO_THROW(RowMapping(plan.source, &*plan.state, &plan.changelog));
}

TEST(SchemaChangeTest, AColumnALaterStatementDroppedIsAddedFromItsDeclaration) {
  Fixture f;  // binberg is behind: the source already dropped the column this ADD adds
  ColumnChange added = add("scratch", ExistingRowsValue::Kind::kLiteral, "7");
  added.type = "DECIMAL(9,3) UNSIGNED";
  f.statement.changes = {added};
  const SchemaChangePlan plan = f.plan();
  EXPECT_EQ(field(*plan.state, "scratch").type->to_string(), "decimal(9,3)");
  ASSERT_EQ(plan.existing_rows.size(), 1U);
  EXPECT_EQ(std::get<Decimal>(plan.existing_rows[0].second).digits, "7.000");
  Fixture unknown;
  ColumnChange odd = add("shape");
  odd.type = "POLYGON";
  unknown.statement.changes = {odd};
  EXPECT_THROW(unknown.plan(), SchemaChangeRefused);
}

TEST(SchemaChangeTest, ExistingRowsValuesFollowTheStatement) {
  Fixture f;
  f.now.columns.push_back(column("note", SourceType::kVarchar, true, 40));
  f.now.columns.push_back(column("points", SourceType::kInt, false));
  f.statement.changes = {add("note"), add("points", ExistingRowsValue::Kind::kImplicit)};
  const SchemaChangePlan plan = f.plan();
  ASSERT_EQ(plan.existing_rows.size(), 1U);  // NULL needs nothing; NOT NULL without DEFAULT gets 0
  EXPECT_EQ(plan.existing_rows[0].first, "points");
  EXPECT_EQ(std::get<std::int64_t>(plan.existing_rows[0].second), 0);

  Fixture computed;
  computed.now.columns.push_back(column("created", SourceType::kTimestamp, false));
  computed.statement.changes = {add("created", ExistingRowsValue::Kind::kUnknown, "CURRENT_TIMESTAMP")};
  EXPECT_THROW(computed.plan(), SchemaChangeRefused);
}

TEST(SchemaChangeTest, WideningPromotesAndNarrowingIsRefusedUnlessAccepted) {
  Fixture f;
  f.now.columns[1] = column("balance", SourceType::kBigInt);
  f.statement.changes = {change_of(ColumnChange::Kind::kModify, "balance")};
  const SchemaChangePlan plan = f.plan();
  EXPECT_EQ(field(*plan.state, "balance").type->to_string(), "long");
  EXPECT_EQ(field(*plan.state, "balance").id, 2);
  EXPECT_EQ(field(plan.changelog, "_before_balance").type->to_string(), "long");

  Fixture narrowing;
  narrowing.now.columns[1] = column("balance", SourceType::kSmallInt);
  narrowing.statement.changes = {change_of(ColumnChange::Kind::kModify, "balance")};
  EXPECT_THROW(narrowing.plan(), SchemaChangeRefused);
  narrowing.accepted = true;  // the operator knows no value was clipped: the field keeps its type
  EXPECT_EQ(field(*narrowing.plan().state, "balance").type->to_string(), "int");

  Fixture conversion;  // Iceberg cannot hold strings in an int field, accepted or not
  conversion.now.columns[1] = column("balance", SourceType::kVarchar, true, 40);
  conversion.statement.changes = {change_of(ColumnChange::Kind::kModify, "balance")};
  conversion.accepted = true;
  EXPECT_THROW(conversion.plan(), SchemaChangeRefused);
}

Column decimal(std::string name, std::uint32_t precision, std::uint32_t scale) {
  Column c = column(std::move(name), SourceType::kDecimal);
  c.precision = precision;
  c.scale = scale;
  return c;
}

// A column wider than Iceberg's 38 digits follows [types] when a statement adds it; a table keeps
// the types it holds whatever [types] says now; a decimal field never becomes a string.
TEST(SchemaChangeTest, WideDecimalsFollowTypesWhenAddedAndKeepTheTypeTheTablesHold) {
  Fixture refused;
  refused.now.columns.push_back(decimal("wide", 50, 2));
  refused.statement.changes = {add("wide")};
  try {
    refused.plan();
    FAIL() << "DECIMAL(50,2) was added under wide_decimal = refuse";
  } catch (const UnmappableTable& error) {
    EXPECT_NE(std::string(error.what()).find("[types] wide_decimal"), std::string::npos) << error.what();
  }

  Fixture as_text = refused;
  as_text.types.wide_decimal = WideDecimal::kString;
  const SchemaChangePlan plan = as_text.plan();
  EXPECT_EQ(field(*plan.state, "wide").type->to_string(), "string");
  EXPECT_EQ(field(plan.changelog, "_before_wide").type->to_string(), "string");

  Fixture held;  // tables made with wide_decimal = string, configured to refuse since
  held.before = *plan.source;
  held.state = *plan.state;
  held.changelog = plan.changelog;
  held.now = *plan.source;
  held.now.columns.back() = decimal("wide", 60, 2);
  held.statement.changes = {change_of(ColumnChange::Kind::kModify, "wide")};
  const SchemaChangePlan widened = held.plan();
  EXPECT_EQ(field(*widened.state, "wide").type->to_string(), "string");
  EXPECT_EQ(field(*widened.state, "wide").id, field(*plan.state, "wide").id);
  EXPECT_NO_THROW(RowMapping(widened.source, &*widened.state, &widened.changelog));

  Fixture past_38 = as_text;  // a decimal field cannot become a string, accepted or not
  past_38.now.columns.push_back(decimal("small", 10, 2));
  past_38.before.columns.push_back(decimal("small", 10, 2));
  past_38.state = current_state_schema(past_38.before, {});
  past_38.changelog = changelog_schema(past_38.before, {});
  past_38.now.columns.back() = decimal("small", 50, 2);
  past_38.statement.changes = {change_of(ColumnChange::Kind::kModify, "small")};
  past_38.accepted = true;
  EXPECT_THROW(past_38.plan(), SchemaChangeRefused);
}

TEST(SchemaChangeTest, RenameKeepsFieldIdsAndDropKeepsHistory) {
  Fixture f;
  f.now.columns[2].name = "holder";
  f.now.columns.erase(f.now.columns.begin() + 1);
  f.statement.changes = {change_of(ColumnChange::Kind::kRename, "owner", "holder"),
                         change_of(ColumnChange::Kind::kDrop, "balance")};
  const SchemaChangePlan plan = f.plan();
  EXPECT_EQ(field(*plan.state, "holder").id, 3);
  EXPECT_EQ(plan.state->find_field("balance"), nullptr);
  EXPECT_EQ(field(plan.changelog, "holder").id, field(f.changelog, "owner").id);
  EXPECT_EQ(field(plan.changelog, "_before_holder").id, field(f.changelog, "_before_owner").id);
  EXPECT_EQ(field(plan.changelog, "balance").id, field(f.changelog, "balance").id);  // history stays readable
  EXPECT_NO_THROW(RowMapping(plan.source, &*plan.state, &plan.changelog));
}

// MySQL compares column names without regard to case, and DDL may spell them otherwise than their
// definitions: the plan finds the columns all the same (a DROP is not taken for DROP IF EXISTS of
// an absent column) and names them as the server does now.
TEST(SchemaChangeTest, ColumnsNamedInAnotherCaseAreFoundAndSpelledAsTheServerDoes) {
  Fixture f;
  f.now.columns[2].name = "Holder";
  f.now.columns.erase(f.now.columns.begin() + 1);
  f.now.columns[0].type = SourceType::kBigInt;
  f.statement.changes = {change_of(ColumnChange::Kind::kRename, "OWNER", "Holder"),
                         change_of(ColumnChange::Kind::kDrop, "Balance"), change_of(ColumnChange::Kind::kModify, "ID")};
  const SchemaChangePlan plan = f.plan();
  EXPECT_EQ(field(*plan.state, "Holder").id, 3);
  EXPECT_EQ(plan.state->find_field("balance"), nullptr) << "the DROP found its column";
  EXPECT_EQ(field(*plan.state, "id").id, 1) << "MODIFY ID keeps the server's spelling, id";
  EXPECT_EQ(plan.state->identifier_field_ids(), std::vector<std::int32_t>{1});
  ASSERT_EQ(plan.source->columns.size(), 2u);
  EXPECT_EQ(plan.source->columns[0].name, "id");
  EXPECT_EQ(plan.source->primary_key, std::vector<std::size_t>{0});
  EXPECT_NO_THROW(RowMapping(plan.source, &*plan.state, &plan.changelog));

  Fixture key;  // the key column is found in any case, too
  key.statement.changes = {change_of(ColumnChange::Kind::kDrop, "Id")};
  EXPECT_THROW(key.plan(), SchemaChangeRefused);
  Fixture case_only;  // a rename that changes only the case is no rename onto another column
  case_only.now.columns[2].name = "OWNER";
  case_only.statement.changes = {change_of(ColumnChange::Kind::kRename, "owner", "OWNER")};
  EXPECT_EQ(field(*case_only.plan().state, "OWNER").id, 3);
}

TEST(SchemaChangeTest, AColumnAddedThenDroppedStaysInTheChangelog) {
  Fixture f;
  f.now.columns.push_back(column("scratch", SourceType::kInt));
  f.statement.changes = {add("scratch")};
  const SchemaChangePlan added = f.plan();
  Fixture g;
  g.before = *added.source;
  g.state = *added.state;
  g.changelog = added.changelog;
  g.statement.changes = {change_of(ColumnChange::Kind::kDrop, "scratch")};
  const SchemaChangePlan dropped = g.plan();
  EXPECT_EQ(dropped.state->find_field("scratch"), nullptr);
  ASSERT_NE(dropped.changelog.find_field("scratch"), nullptr);
  EXPECT_EQ(dropped.changelog.find_field("scratch")->id, added.changelog.find_field("scratch")->id);
  EXPECT_NE(dropped.changelog.find_field("_before_scratch"), nullptr);
  EXPECT_NO_THROW(RowMapping(dropped.source, &*dropped.state, &dropped.changelog));
  // A later change keeps the dropped column's history; adding the name again makes a new field.
  Fixture h;
  h.before = *dropped.source;
  h.now = *dropped.source;
  h.now.columns.push_back(column("scratch", SourceType::kVarchar, true, 40));
  h.state = *dropped.state;
  h.changelog = dropped.changelog;
  h.statement.changes = {add("scratch")};
  const SchemaChangePlan again = h.plan();
  const std::int32_t old_id = added.changelog.find_field("scratch")->id;
  ASSERT_NE(again.changelog.find_field(old_id), nullptr);
  EXPECT_EQ(again.changelog.find_field(old_id)->name, fmt::format("scratch__dropped_{}", old_id));
  EXPECT_EQ(again.changelog.find_field("scratch")->type->to_string(), "string");
  EXPECT_NE(again.changelog.find_field("scratch")->id, old_id);
  EXPECT_NO_THROW(RowMapping(again.source, &*again.state, &again.changelog));
}

TEST(SchemaChangeTest, KeyAndTableChangesAreRefused) {
  for (const ColumnChange& change :
       {change_of(ColumnChange::Kind::kDrop, "id"), change_of(ColumnChange::Kind::kPrimaryKey, ""),
        change_of(ColumnChange::Kind::kRenameTable, ""), change_of(ColumnChange::Kind::kUnknown, "")}) {
    Fixture f;
    f.statement.changes = {change};
    EXPECT_THROW(f.plan(), SchemaChangeRefused) << change.text;
  }
  Fixture options;  // index and option clauses change nothing
  options.statement.changes = {change_of(ColumnChange::Kind::kIndexOrOption, "")};
  EXPECT_FALSE(options.plan().changes_tables);
}

TEST(SchemaChangeTest, LossyChangesAreNamed) {
  const auto lossy = [](Column a, Column b) { return lossy_change(a, b).has_value(); };
  EXPECT_FALSE(lossy(column("a", SourceType::kSmallInt), column("a", SourceType::kBigInt)));
  EXPECT_TRUE(lossy(column("a", SourceType::kBigInt), column("a", SourceType::kInt)));
  EXPECT_FALSE(lossy(column("a", SourceType::kVarchar, true, 40), column("a", SourceType::kVarchar, true, 80)));
  EXPECT_TRUE(lossy(column("a", SourceType::kVarchar, true, 80), column("a", SourceType::kVarchar, true, 40)));
  EXPECT_TRUE(lossy(column("a", SourceType::kVarchar, true, 40), column("a", SourceType::kChar, true, 40)));
  EXPECT_FALSE(lossy(column("a", SourceType::kChar, true, 40), column("a", SourceType::kText, true, 65535)));
  EXPECT_TRUE(lossy(column("a", SourceType::kInt, true), column("a", SourceType::kInt, false)));
  EXPECT_FALSE(lossy(column("a", SourceType::kInt, false), column("a", SourceType::kInt, true)));
  Column unsigned_int = column("a", SourceType::kInt);
  unsigned_int.is_unsigned = true;
  EXPECT_TRUE(lossy(column("a", SourceType::kInt), unsigned_int));
  Column e1 = column("a", SourceType::kEnum), e2 = column("a", SourceType::kEnum);
  e1.symbols = {"x", "y"};
  e2.symbols = {"x", "y", "z"};
  EXPECT_FALSE(lossy(e1, e2));
  EXPECT_TRUE(lossy(e2, e1));
}

TEST(SchemaChangeTest, SourceSchemaRoundTripsThroughJson) {
  TableSchema table = accounts();
  table.columns[2].symbols = {"a"};
  const auto back = table_schema_from_json(table_schema_to_json(table));
  EXPECT_EQ(table_schema_to_json(*back), table_schema_to_json(table));
  EXPECT_EQ(back->columns[0].type, SourceType::kBigInt);
  EXPECT_FALSE(back->columns[0].nullable);
  EXPECT_THROW(table_schema_from_json(nlohmann::json{{"database", "x"}}), Error);
}

// Path B's record of a DDL statement carries the statement and the source's definition then; a
// table the server no longer had travels as null, and anything else is refused by name.
TEST(SchemaChangeTest, PublishedSchemaChangesRoundTripThroughJson) {
  const PublishedSchemaChange change{"bank", "ALTER TABLE accounts ADD COLUMN tier INT", nullptr};
  PublishedSchemaChange with_table = change;
  with_table.now = std::make_shared<const TableSchema>(accounts());
  const PublishedSchemaChange back = PublishedSchemaChange::parse(with_table.to_json());
  EXPECT_EQ(back.database, "bank");
  EXPECT_EQ(back.statement, change.statement);
  ASSERT_NE(back.now, nullptr);
  EXPECT_EQ(*back.now, accounts());
  EXPECT_EQ(PublishedSchemaChange::parse(change.to_json()).now, nullptr);
  EXPECT_THROW(PublishedSchemaChange::parse("{\"database\": \"bank\"}"), Error);
  EXPECT_THROW(PublishedSchemaChange::parse("not json"), Error);
}

}  // namespace
}  // namespace binberg::tables
