// How source tables map to Iceberg tables: exact types, identifier fields, values, changelog rows.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/error.h"
#include "tables/table_mapping.h"

namespace binberg::tables {
namespace {

Column column(std::string name, SourceType type, bool is_unsigned = false, std::uint32_t precision = 0,
              std::uint32_t scale = 0) {
  Column c;
  c.name = std::move(name);
  c.type = type;
  c.is_unsigned = is_unsigned;
  c.precision = precision;
  c.scale = scale;
  return c;
}

TableSchema orders() {
  TableSchema table;
  table.database = "shop";
  table.table = "orders";
  table.columns = {column("id", SourceType::kBigInt), column("qty", SourceType::kInt, true),
                   column("total", SourceType::kDecimal, false, 12, 2), column("note", SourceType::kText)};
  table.primary_key = {0};
  return table;
}

TEST(TableMappingTest, TypesAreExactOrRefused) {
  const TableSchema table = orders();
  EXPECT_EQ(iceberg_type(table, column("a", SourceType::kInt), {})->to_string(), "int");
  EXPECT_EQ(iceberg_type(table, column("a", SourceType::kInt, true), {})->to_string(), "long");
  EXPECT_EQ(iceberg_type(table, column("a", SourceType::kBigInt, true), {})->to_string(), "decimal(20,0)");
  EXPECT_EQ(iceberg_type(table, column("a", SourceType::kBit, false, 64), {})->to_string(), "decimal(20,0)");
  EXPECT_EQ(iceberg_type(table, column("a", SourceType::kTimestamp), {})->to_string(), "timestamptz");
  EXPECT_EQ(iceberg_type(table, column("a", SourceType::kDateTime), {})->to_string(), "timestamp");
  try {
    iceberg_type(table, column("wide", SourceType::kDecimal, false, 65, 4), {});
    FAIL() << "DECIMAL(65,4) was mapped";
  } catch (const UnmappableTable& error) {
    EXPECT_NE(std::string(error.what()).find("table shop.orders column wide (DECIMAL(65,4))"), std::string::npos)
        << error.what();
    EXPECT_NE(std::string(error.what()).find("[types] wide_decimal = \"string\""), std::string::npos) << error.what();
  }
}

TableSchema ledger() {
  TableSchema table;
  table.database = "bank";
  table.table = "ledger";
  table.columns = {column("entry", SourceType::kDecimal, false, 50, 0),
                   column("amount", SourceType::kDecimal, false, 65, 30),
                   column("fee", SourceType::kDecimal, false, 10, 2)};
  table.primary_key = {0};
  return table;
}

TEST(TableMappingTest, WideDecimalsAreRefusedByDefaultAndKeptAsTheirExactTextWhenConfigured) {
  EXPECT_THROW(check_mappable(ledger(), {}), UnmappableTable);
  const TypeMapping as_text{WideDecimal::kString};
  EXPECT_NO_THROW(check_mappable(ledger(), as_text));
  const iceberg::Schema state = current_state_schema(ledger(), as_text);
  const iceberg::Schema changelog = changelog_schema(ledger(), as_text);
  EXPECT_EQ(state.fields()[0].type->to_string(), "string");  // a string key: text equality is value equality
  EXPECT_EQ(state.identifier_field_ids(), std::vector<std::int32_t>{1});
  EXPECT_EQ(state.fields()[1].type->to_string(), "string");
  EXPECT_EQ(state.fields()[2].type->to_string(), "decimal(10,2)");  // 38 digits or fewer: a decimal still
  EXPECT_EQ(changelog.find_field("_before_amount")->type->to_string(), "string");
  // Reconcile maps rows with the default mapping: the tables say they hold text, whatever [types] says.
  const RowMapping mapping(std::make_shared<TableSchema>(ledger()), &state, &changelog);
  const std::string huge = "-99999999999999999999999999999999999.999999999999999999999999999999";
  const iceberg::Row row = mapping.state_row(
      RowImage{Decimal{"12345678901234567890123456789012345678901234567890"}, Decimal{huge}, Decimal{"-0.50"}});
  EXPECT_EQ(std::get<std::string>(row[0]), "12345678901234567890123456789012345678901234567890");
  EXPECT_EQ(std::get<std::string>(row[1]), huge);
  EXPECT_EQ(std::get<iceberg::Decimal>(row[2]).unscaled, -50);
  // One text per value: leading zeros and a negative zero are canonicalized, other scales refused.
  const Column amount = ledger().columns[1];
  const auto text = [&](const std::string& digits) {
    return std::get<std::string>(to_literal(amount, *state.fields()[1].type, Decimal{digits}));
  };
  const std::string zeros(30, '0');
  EXPECT_EQ(text("007." + zeros), "7." + zeros);
  EXPECT_EQ(text("-0." + zeros), "0." + zeros);
  EXPECT_EQ(text("-00." + zeros), "0." + zeros);
  for (const std::string& bad :
       std::vector<std::string>{"7.5", "7", "7." + zeros + "0", "", "-", "x." + zeros, "--7." + zeros}) {
    EXPECT_THROW(text(bad), Error) << bad;
  }
  EXPECT_EQ(mapping_held(amount, *state.fields()[1].type, {}).wide_decimal, WideDecimal::kString);
  EXPECT_EQ(mapping_held(amount, *iceberg::decimal_type(38, 30), as_text).wide_decimal, WideDecimal::kString);
}

TEST(TableMappingTest, FloatingPointPrimaryKeysAreRefusedNamingTheColumnAndWhatToDo) {
  for (const SourceType type : {SourceType::kFloat, SourceType::kDouble}) {
    TableSchema table = orders();
    table.columns[0] = column("id", type);
    EXPECT_NO_THROW(changelog_schema(table, {}));  // the changelog has no key
    try {
      check_mappable(table, {});
      FAIL() << to_string(type) << " key was mapped";
    } catch (const UnmappableTable& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find(fmt::format("table shop.orders column id ({})", to_string(type))), std::string::npos)
          << message;
      EXPECT_NE(message.find("[capture] exclude"), std::string::npos) << message;
    }
    table.columns[0] = column("id", SourceType::kBigInt);
    table.columns[1] = column("qty", type);
    EXPECT_NO_THROW(check_mappable(table, {})) << "a " << to_string(type) << " column that is not a key";
  }
}

TEST(TableMappingTest, PrimaryKeyBecomesRequiredIdentifierFields) {
  const iceberg::Schema schema = current_state_schema(orders(), {});
  ASSERT_EQ(schema.fields().size(), 4U);
  EXPECT_EQ(schema.identifier_field_ids(), std::vector<std::int32_t>{1});
  EXPECT_TRUE(schema.fields()[0].required);
  EXPECT_FALSE(schema.fields()[3].required);
}

TEST(TableMappingTest, RowsMapByNameOntoEvolvedTables) {
  const iceberg::Schema state = current_state_schema(orders(), {});
  const iceberg::Schema changelog = changelog_schema(orders(), {});
  // The same columns in another order map by name.
  auto reordered = std::make_shared<TableSchema>(orders());
  std::swap(reordered->columns[1], reordered->columns[3]);
  const RowMapping mapping(reordered, &state, &changelog);
  const iceberg::Row row = mapping.state_row(RowImage{std::int64_t{7}, Text{"n"}, Decimal{"1.00"}, std::uint64_t{3}});
  EXPECT_EQ(std::get<std::int64_t>(row[1]), 3);
  EXPECT_EQ(std::get<std::string>(row[3]), "n");
  // A promoted field takes the narrower source type (int -> long, float -> double).
  auto narrow = std::make_shared<TableSchema>(orders());
  narrow->columns[1] = column("qty", SourceType::kSmallInt);
  EXPECT_EQ(
      std::get<std::int64_t>(RowMapping(narrow, &state, nullptr)
                                 .state_row(RowImage{std::int64_t{1}, std::int64_t{-2}, Decimal{"0.00"}, Text{""}})[1]),
      -2);
  // A type the field cannot hold, a column the table lacks, a field the source lacks: refused.
  auto changed = std::make_shared<TableSchema>(orders());
  changed->columns[1] = column("qty", SourceType::kVarchar);
  EXPECT_THROW(RowMapping(changed, &state, &changelog), Error);
  auto added = std::make_shared<TableSchema>(orders());
  added->columns.push_back(column("extra", SourceType::kInt));
  EXPECT_THROW(RowMapping(added, &state, nullptr), Error);
  EXPECT_THROW(RowMapping(added, nullptr, &changelog), Error);
  auto dropped = std::make_shared<TableSchema>(orders());
  dropped->columns.pop_back();
  EXPECT_THROW(RowMapping(dropped, &state, nullptr), Error);
  // The changelog keeps a dropped column: it reads null from then on.
  ChangeEvent event;
  event.op = Op::kCreate;
  event.schema = dropped;
  event.after = RowImage{std::int64_t{1}, std::uint64_t{2}, Decimal{"0.10"}};
  const iceberg::Row history = RowMapping(dropped, nullptr, &changelog).changelog_row(event);
  EXPECT_EQ(std::get<std::uint64_t>(event.after->at(1)), 2U);
  EXPECT_EQ(std::get<std::int64_t>(history[kChangelogMetadataColumns + 1]), 2);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(history[kChangelogMetadataColumns + 3]));
}

TEST(TableMappingTest, ValuesConvertExactly) {
  const TableSchema table = orders();
  const iceberg::Schema schema = current_state_schema(table, {});
  const iceberg::Row row = RowMapping(std::make_shared<TableSchema>(table), &schema, nullptr)
                               .state_row(RowImage{std::int64_t{-5}, std::uint64_t{4'000'000'000}, Decimal{"-12.50"},
                                                   Value{std::monostate{}}});
  EXPECT_EQ(std::get<std::int64_t>(row[0]), -5);
  EXPECT_EQ(std::get<std::int64_t>(row[1]), 4'000'000'000);
  EXPECT_EQ(std::get<iceberg::Decimal>(row[2]).unscaled, -1250);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(row[3]));
}

TEST(TableMappingTest, DecimalsWithAnotherScaleAreRefusedNotRescaled) {
  const TableSchema table = orders();
  const iceberg::Schema schema = current_state_schema(table, {});
  const RowMapping mapping(std::make_shared<TableSchema>(table), &schema, nullptr);
  for (const char* digits : {"12.5", "12.500", "12", "1.2.3", "-", "", "1e5", "--1.00"}) {
    EXPECT_THROW(mapping.state_row(RowImage{std::int64_t{1}, std::uint64_t{1}, Decimal{digits}, Text{"x"}}), Error)
        << digits;
  }
}

TEST(TableMappingTest, ChangelogRowCarriesSourceAndBothImages) {
  auto table = std::make_shared<TableSchema>(orders());
  const iceberg::Schema schema = changelog_schema(*table, {});
  ASSERT_EQ(schema.fields().size(), kChangelogMetadataColumns + 2 * table->columns.size());
  EXPECT_EQ(schema.fields()[kChangelogMetadataColumns + 4].name, "_before_id");
  ChangeEvent event;
  event.op = Op::kUpdate;
  event.schema = table;
  event.before = RowImage{std::int64_t{1}, std::uint64_t{2}, Decimal{"0.10"}, Text{"old"}};
  event.after = RowImage{std::int64_t{1}, std::uint64_t{3}, Decimal{"0.20"}, Text{"new"}};
  event.source.gtid = "0-1-9";
  event.source.file = "binlog.000002";
  event.source.end_pos = 900;
  event.source.row_index = 4;
  event.source.commit_ts_ms = 1'700'000'000'123;
  event.event_id = make_event_id(event.source, event.op);
  const iceberg::Row row = RowMapping(table, nullptr, &schema).changelog_row(event);
  EXPECT_EQ(std::get<std::string>(row[0]), "0-1-9#4");
  EXPECT_EQ(std::get<std::string>(row[1]), "u");
  EXPECT_EQ(std::get<std::int64_t>(row[4]), 900);
  EXPECT_EQ(std::get<std::int64_t>(row[6]), 1'700'000'000'123'000);
  EXPECT_EQ(std::get<std::string>(row[kChangelogMetadataColumns + 3]), "new");
  EXPECT_EQ(std::get<std::string>(row[kChangelogMetadataColumns + 4 + 3]), "old");
}

TEST(TableMappingTest, ColumnNamesCollidingWithTheChangelogAreRefused) {
  TableSchema table = orders();
  table.columns.push_back(column("_op", SourceType::kInt));
  EXPECT_THROW(changelog_schema(table, {}), UnmappableTable);
  EXPECT_THROW(check_mappable(table, {}), UnmappableTable);
  table.columns.back() = column("_before_id", SourceType::kInt);
  EXPECT_THROW(changelog_schema(table, {}), UnmappableTable);
  table.columns.back() = column("_before_nothing", SourceType::kInt);
  EXPECT_NO_THROW(check_mappable(table, {}));
}

}  // namespace
}  // namespace binberg::tables
