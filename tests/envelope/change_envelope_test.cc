#include "envelope/change_envelope.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <tuple>

#include "avro/compatibility.h"
#include "avro/container.h"
#include "avro/encoding.h"
#include "avro/resolution.h"
#include "core/error.h"
#include "support/temp_dir.h"
#include "support/test_services.h"

namespace binberg::envelope {
namespace {

Column column(std::string name, SourceType type, bool nullable = true) {
  Column c;
  c.name = std::move(name);
  c.type = type;
  c.nullable = nullable;
  return c;
}

// One column of every kind the source reader produces.
std::shared_ptr<const TableSchema> every_type_table() {
  auto table = std::make_shared<TableSchema>();
  table->database = "shop";
  table->table = "orders";
  table->columns = {column("id", SourceType::kInt, false),
                    column("big", SourceType::kBigInt),
                    column("amount", SourceType::kDecimal),
                    column("wide", SourceType::kDecimal),
                    column("day", SourceType::kDate),
                    column("at", SourceType::kDateTime),
                    column("ts", SourceType::kTimestamp),
                    column("dur", SourceType::kTime),
                    column("name", SourceType::kVarchar),
                    column("data", SourceType::kBlob),
                    column("f", SourceType::kFloat),
                    column("d", SourceType::kDouble),
                    column("flags", SourceType::kBit),
                    column("weird name-1", SourceType::kVarchar),
                    column("yr", SourceType::kYear),
                    column("tiny", SourceType::kTinyInt),
                    column("uint", SourceType::kInt),
                    column("doc", SourceType::kJson),
                    column("region", SourceType::kVarchar, false)};
  table->columns[1].is_unsigned = true;
  table->columns[2].precision = 12;
  table->columns[2].scale = 2;
  table->columns[3].precision = 60;
  table->columns[3].scale = 20;
  table->columns[5].precision = 6;
  table->columns[6].precision = 6;
  table->columns[8].charset = "utf8mb4";
  table->columns[8].max_bytes = 400;
  table->columns[12].precision = 3;
  table->columns[15].is_unsigned = true;
  table->columns[16].is_unsigned = true;
  table->primary_key = {18, 0};  // (region, id): key order differs from column order
  return table;
}

RowImage full_row(std::int64_t id) {
  return {id,
          std::uint64_t{18446744073709551615u},
          Decimal{"-1234.50"},
          Decimal{"12345678901234567890123456789012345678.12345678901234567890"},
          Date{19000},
          DateTime{1'700'000'000'123'456},
          Timestamp{1'700'000'000'123'456},
          TimeOfDay{-(838LL * 3600 + 59 * 60 + 59) * 1'000'000},
          Text{"grüße"},
          Bytes{std::string("\x00\xff\x10", 3)},
          1.5f,
          -2.25,
          std::uint64_t{5},
          Text{"w"},
          std::int64_t{2024},
          std::uint64_t{255},
          std::uint64_t{4294967295u},
          Text{"{\"a\": 1}"},
          Text{"eu"}};
}

RowImage sparse_row(std::int64_t id) {
  RowImage row(19, Value{std::monostate{}});
  row[0] = id;
  row[18] = Text{"us"};
  return row;
}

ChangeEvent event(Op op, std::optional<RowImage> before, std::optional<RowImage> after, std::uint32_t row_index) {
  ChangeEvent e;
  e.op = op;
  e.schema = every_type_table();
  e.before = std::move(before);
  e.after = std::move(after);
  e.source = SourceInfo{1, "0-1-42", "mariadb-bin.000003", 98765, row_index, 1'700'000'000'000, "shop", "orders"};
  e.event_id = make_event_id(e.source, op);
  return e;
}

std::vector<ChangeEvent> sample_events() {
  return {event(Op::kCreate, std::nullopt, full_row(1), 0), event(Op::kUpdate, full_row(1), sparse_row(1), 1),
          event(Op::kDelete, sparse_row(1), std::nullopt, 2), event(Op::kSnapshot, std::nullopt, sparse_row(2), 3)};
}

void expect_same_event(const ChangeEvent& got, const ChangeEvent& want) {
  EXPECT_EQ(got.op, want.op);
  EXPECT_EQ(got.before, want.before);
  EXPECT_EQ(got.after, want.after);
  EXPECT_EQ(got.event_id, want.event_id);
  EXPECT_EQ(got.source.gtid, want.source.gtid);
  EXPECT_EQ(got.source.file, want.source.file);
  EXPECT_EQ(got.source.end_pos, want.source.end_pos);
  EXPECT_EQ(got.source.row_index, want.source.row_index);
  EXPECT_EQ(got.source.commit_ts_ms, want.source.commit_ts_ms);
  EXPECT_EQ(got.source.server_id, want.source.server_id);
  EXPECT_EQ(got.source.database, want.source.database);
  EXPECT_EQ(got.source.table, want.source.table);
}

TEST(ChangeEnvelopeTest, EventsRoundTripThroughTheirAvroBytes) {
  const auto table = every_type_table();
  const EnvelopeSchemas schemas = envelope_schemas(*table, "cdc.shop.orders");
  // A consumer that has only the registered schema text gets the same table shape back.
  const auto rebuilt =
      std::make_shared<const TableSchema>(table_schema_of(avro::Schema::parse(schemas.value.to_json())));
  ASSERT_EQ(rebuilt->columns.size(), table->columns.size());
  for (std::size_t i = 0; i < table->columns.size(); ++i) {
    EXPECT_EQ(rebuilt->columns[i].name, table->columns[i].name);
    EXPECT_EQ(rebuilt->columns[i].type, table->columns[i].type);
    EXPECT_EQ(rebuilt->columns[i].nullable, table->columns[i].nullable);
    EXPECT_EQ(rebuilt->columns[i].is_unsigned, table->columns[i].is_unsigned);
    EXPECT_EQ(rebuilt->columns[i].precision, table->columns[i].precision);
    EXPECT_EQ(rebuilt->columns[i].scale, table->columns[i].scale);
  }
  EXPECT_EQ(rebuilt->primary_key, table->primary_key);
  EXPECT_EQ(rebuilt->qualified_name(), "shop.orders");
  for (const ChangeEvent& want : sample_events()) {
    const std::string bytes = avro::encode(schemas.value, envelope_datum(want, "cdc", 1'700'000'000'500));
    expect_same_event(change_event_from_datum(avro::decode(schemas.value, bytes), rebuilt), want);
    const RowImage key = primary_key_of(*table, want.after ? *want.after : *want.before);
    const std::string key_bytes = avro::encode(*schemas.key, key_datum(*table, key));
    EXPECT_EQ(key_from_datum(*rebuilt, avro::decode(*schemas.key, key_bytes)), key);
  }
}

// A column added NOT NULL gets, as its Avro default, the value the rows written before it hold in
// it: a reader of the new schema reads the old records as the source table has those rows now,
// and the change passes a BACKWARD check. Without the default it would not.
TEST(ChangeEnvelopeTest, AddedNotNullColumnsDefaultToTheValueOfExistingRows) {
  const auto before = every_type_table();
  auto after = std::make_shared<TableSchema>(*before);
  after->columns.push_back(column("tier", SourceType::kInt, false));
  after->columns.push_back(column("code", SourceType::kVarchar, false));
  after->columns.push_back(column("price", SourceType::kDecimal, false));
  after->columns.back().precision = 12;
  after->columns.back().scale = 2;
  after->columns.push_back(column("tag", SourceType::kVarbinary, false));
  after->columns.push_back(column("memo", SourceType::kVarchar));  // nullable: null by default anyway
  const std::map<std::string, Value> defaults = {{"tier", std::int64_t{3}},
                                                 {"code", Text{"c1"}},
                                                 {"price", Decimal{"5.00"}},
                                                 {"tag", Bytes{std::string("\x00\xff", 2)}},
                                                 {"memo", Text{"m"}}};
  const EnvelopeSchemas old_schemas = envelope_schemas(*before, "cdc.shop.orders");
  const EnvelopeSchemas new_schemas = envelope_schemas(*after, "cdc.shop.orders", ColumnHistory{defaults, {}});
  const std::vector<avro::Schema> history = {old_schemas.value};
  EXPECT_EQ(avro::check_compatibility(new_schemas.value, history, avro::Compatibility::kBackward),
            std::vector<std::string>{});
  EXPECT_FALSE(avro::check_compatibility(envelope_schemas(*after, "cdc.shop.orders").value, history,
                                         avro::Compatibility::kBackward)
                   .empty());
  const ChangeEvent old_event = event(Op::kCreate, std::nullopt, full_row(1), 0);
  const avro::Resolver resolver(old_schemas.value, new_schemas.value);
  const ChangeEvent read = change_event_from_datum(
      resolver.read(avro::encode(old_schemas.value, envelope_datum(old_event, "cdc", 1))), after);
  RowImage expected = full_row(1);
  for (const auto& value : {Value{std::int64_t{3}}, Value{Text{"c1"}}, Value{Decimal{"5.00"}},
                            Value{Bytes{std::string("\x00\xff", 2)}}, Value{std::monostate{}}}) {
    expected.push_back(value);
  }
  EXPECT_EQ(read.after, expected);
}

// A renamed column's earlier names are its fields' aliases, in the key and the value: a reader of
// the new schemas finds the renamed fields in old records, and the change passes a BACKWARD check
// even for NOT NULL and key columns (which have no default to fall back on). An earlier name that
// a present column has is no alias: Avro matches that column by name first.
TEST(ChangeEnvelopeTest, RenamedColumnsKeepTheirEarlierNamesAsAliases) {
  const auto before = every_type_table();
  auto after = std::make_shared<TableSchema>(*before);
  after->columns[18].name = "zone";      // the key's first column, NOT NULL
  after->columns[13].name = "odd name";  // nullable, with a name Avro changes
  after->columns[3].name = "region";     // takes the key column's old name
  const ColumnHistory history{{}, {{"zone", {"region", "area"}}, {"odd name", {"weird name-1"}}, {"region", {"wide"}}}};
  const EnvelopeSchemas old_schemas = envelope_schemas(*before, "cdc.shop.orders");
  const EnvelopeSchemas new_schemas = envelope_schemas(*after, "cdc.shop.orders", history);

  const auto aliases_in = [](const avro::Node& record, const std::string& field) {
    return record.find_field(field)->aliases;
  };
  const avro::Node& row = *new_schemas.value.root().find_field("after")->type->branches[1];
  EXPECT_EQ(aliases_in(row, "zone"), (std::vector<std::string>{"area"})) << "region is a present column's name";
  EXPECT_EQ(aliases_in(row, "odd_name"), (std::vector<std::string>{"weird_name_1"}));
  EXPECT_EQ(aliases_in(row, "region"), (std::vector<std::string>{"wide"}));
  EXPECT_EQ(aliases_in(new_schemas.key->root(), "zone"), (std::vector<std::string>{"area"}));

  // Without the swap of names the aliases carry the key column: BACKWARD holds with them only.
  auto renamed = std::make_shared<TableSchema>(*before);
  renamed->columns[18].name = "zone";
  const ColumnHistory renames{{}, {{"zone", {"region"}}}};
  const EnvelopeSchemas with = envelope_schemas(*renamed, "cdc.shop.orders", renames);
  const EnvelopeSchemas without = envelope_schemas(*renamed, "cdc.shop.orders");
  for (const auto& [old_schema, new_with, new_without] : {std::tuple(old_schemas.value, with.value, without.value),
                                                          std::tuple(*old_schemas.key, *with.key, *without.key)}) {
    const std::vector<avro::Schema> history_of = {old_schema};
    EXPECT_EQ(avro::check_compatibility(new_with, history_of, avro::Compatibility::kBackward),
              std::vector<std::string>{});
    EXPECT_FALSE(avro::check_compatibility(new_without, history_of, avro::Compatibility::kBackward).empty());
  }
  const ChangeEvent old_event = event(Op::kCreate, std::nullopt, full_row(1), 0);
  const avro::Resolver resolver(old_schemas.value, with.value);
  const ChangeEvent read = change_event_from_datum(
      resolver.read(avro::encode(old_schemas.value, envelope_datum(old_event, "cdc", 1))), renamed);
  EXPECT_EQ(read.after, full_row(1)) << "the renamed key column read from its old name";
  const avro::Resolver key_resolver(*old_schemas.key, *with.key);
  EXPECT_EQ(key_from_datum(*renamed, key_resolver.read(avro::encode(
                                         *old_schemas.key, key_datum(*before, {Text{"eu"}, std::int64_t{1}})))),
            (RowImage{Text{"eu"}, std::int64_t{1}}));
}

TEST(ChangeEnvelopeTest, FastavroReadsTheEnvelopeWithItsLogicalTypes) {
  const auto table = every_type_table();
  const EnvelopeSchemas schemas = envelope_schemas(*table, "cdc.shop.orders");
  binberg::testing::TempDir dir;
  const auto path = dir.path() / "events.avro";
  {
    std::ofstream out(path, std::ios::binary);
    avro::ContainerWriter writer(out, schemas.value);
    for (const ChangeEvent& e : sample_events()) writer.append(envelope_datum(e, "cdc", 1'700'000'000'500));
    writer.close();
  }
  const auto records = nlohmann::json::parse(binberg::testing::run_command(
      fmt::format("'{}' '{}/envelope_reader.py' '{}'", BINBERG_PYTHON, BINBERG_ENVELOPE_TEST_DIR, path.string())));
  ASSERT_EQ(records.size(), 4u);
  const auto& created = records[0];
  EXPECT_EQ(created["op"], "c");
  EXPECT_TRUE(created["before"].is_null());
  const auto& after = created["after"];
  EXPECT_EQ(after["id"], 1);
  EXPECT_EQ(after["big"], "18446744073709551615");
  EXPECT_EQ(after["amount"], "-1234.50");
  EXPECT_EQ(after["wide"], "12345678901234567890123456789012345678.12345678901234567890");
  EXPECT_EQ(after["day"], "2022-01-08");
  EXPECT_EQ(after["at"], "2023-11-14T22:13:20.123456");
  EXPECT_EQ(after["ts"], "2023-11-14T22:13:20.123456+00:00");
  EXPECT_EQ(after["dur"], -3'020'399'000'000LL);  // -838:59:59
  EXPECT_EQ(after["name"], "grüße");
  EXPECT_EQ(after["data"], "hex:00ff10");
  EXPECT_EQ(after["f"], 1.5);
  EXPECT_EQ(after["flags"], 5);
  EXPECT_EQ(after["weird_name_1"], "w");
  EXPECT_EQ(after["uint"], 4294967295LL);
  EXPECT_EQ(created["source"]["gtid"], "0-1-42");
  EXPECT_EQ(created["source"]["file"], "mariadb-bin.000003");
  EXPECT_EQ(created["source"]["pos"], 98765);
  EXPECT_EQ(created["source"]["snapshot"], "false");
  EXPECT_EQ(created["source"]["db"], "shop");
  EXPECT_EQ(records[1]["op"], "u");
  EXPECT_TRUE(records[1]["after"]["amount"].is_null());
  EXPECT_EQ(records[1]["before"]["amount"], "-1234.50");
  EXPECT_EQ(records[2]["op"], "d");
  EXPECT_TRUE(records[2]["after"].is_null());
  EXPECT_EQ(records[3]["source"]["snapshot"], "true");
}

TEST(ChangeEnvelopeTest, EnvelopesThatBreakTheRulesAreRefused) {
  const auto table = every_type_table();
  const EnvelopeSchemas schemas = envelope_schemas(*table, "cdc.shop.orders");
  const auto refused = [&](const avro::Value& datum, const std::string& expected) {
    try {
      (void)change_event_from_datum(datum, table);
      ADD_FAILURE() << "accepted; wanted " << expected;
    } catch (const Error& error) {
      EXPECT_NE(std::string(error.what()).find(expected), std::string::npos) << error.what();
    }
  };
  avro::Value bad_op = envelope_datum(sample_events()[0], "cdc", 0);
  bad_op.as<avro::Record>().fields[3] = std::string("x");
  refused(bad_op, "unknown op 'x'");
  ChangeEvent delete_with_after = sample_events()[2];
  delete_with_after.after = sparse_row(1);
  refused(envelope_datum(delete_with_after, "cdc", 0), "op 'd' with a before image and an after image");
  ChangeEvent update_without_before = sample_events()[1];
  update_without_before.before.reset();
  refused(envelope_datum(update_without_before, "cdc", 0), "op 'u' with no before image");
  // NOT NULL columns cannot carry null.
  ChangeEvent null_region = sample_events()[0];
  (*null_region.after)[18] = std::monostate{};
  EXPECT_THROW((void)envelope_datum(null_region, "cdc", 0), Error);
}

TEST(ChangeEnvelopeTest, SchemasNameTheirProblems) {
  TableSchema clash;
  clash.database = "shop";
  clash.table = "t";
  clash.columns = {column("a-b", SourceType::kInt), column("a_b", SourceType::kInt)};
  try {
    (void)envelope_schemas(clash, "cdc.shop.t");
    FAIL() << "no error";
  } catch (const ConfigError& error) {
    EXPECT_STREQ(error.what(), "table shop.t: columns a-b and a_b both become the Avro field name a_b");
  }
  const TableSchema keyless_table{"shop", "k", {column("v", SourceType::kInt)}, {}};
  const auto keyless = envelope_schemas(keyless_table, "cdc.shop.k");
  EXPECT_FALSE(keyless.key.has_value());
  EXPECT_THROW((void)table_schema_of(avro::Schema::parse(R"({"type":"record","name":"X","fields":[]})")), Error);
  // Topic names with characters Avro names cannot hold still give valid namespaces.
  EXPECT_EQ(envelope_schemas(*every_type_table(), "cdc.my-shop.2024").value.root().name, "cdc.my_shop._2024.Envelope");
}

}  // namespace
}  // namespace binberg::envelope
