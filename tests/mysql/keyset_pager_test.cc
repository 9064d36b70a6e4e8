// The queries of keyset paging, as text: literals that compare as the server orders each key type
// (what they mean to the server is tested on the real one by the key matrix in
// snapshot_reader_test.cc), and the tables the pager refuses.

#include "mysql/keyset_pager.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "core/error.h"

namespace binberg::mysql {
namespace {

Column column(std::string name, SourceType type, std::string charset = "", std::vector<std::string> symbols = {}) {
  Column c;
  c.name = std::move(name);
  c.type = type;
  c.nullable = false;
  c.charset = std::move(charset);
  c.symbols = std::move(symbols);
  return c;
}

std::shared_ptr<const TableSchema> table(std::vector<Column> key_columns) {
  auto schema = std::make_shared<TableSchema>();
  schema->database = "db";
  schema->table = "t";
  for (std::size_t i = 0; i < key_columns.size(); ++i) schema->primary_key.push_back(i);
  schema->columns = std::move(key_columns);
  schema->columns.push_back(column("v", SourceType::kInt));
  return schema;
}

std::vector<KeyPart> parts(const TableSchema& schema, const std::string& collation = "utf8mb4_unicode_ci") {
  std::vector<KeyPart> key;
  for (std::size_t index : schema.primary_key)
    key.push_back(KeyPart{schema.columns[index].name, std::nullopt, collation});
  return key;
}

TEST(KeysetPagerTest, FloatLiteralIsTheFloatsExactValueNotItsShortestText) {
  // 0.1f is 0.100000001490116119384765625; the literal 0.1 would be a smaller double, and the
  // row 0.1f would compare after it and be read again.
  EXPECT_EQ(KeysetPager::literal(column("k", SourceType::kFloat), "", Value{0.1f}), "1.00000001490116119e-01");
  EXPECT_EQ(KeysetPager::literal(column("k", SourceType::kDouble), "", Value{0.30000000000000004}),
            "3.00000000000000044e-01");
  const std::string smallest = KeysetPager::literal(column("k", SourceType::kDouble), "", Value{5e-324});
  EXPECT_EQ(std::strtod(smallest.c_str(), nullptr), 5e-324) << smallest;
}

TEST(KeysetPagerTest, TemporalLiteralsAreTypedWithEveryMicrosecond) {
  EXPECT_EQ(KeysetPager::literal(column("k", SourceType::kDateTime), "", Value{DateTime{1}}),
            "TIMESTAMP'1970-01-01 00:00:00.000001'");
  EXPECT_EQ(KeysetPager::literal(column("k", SourceType::kTimestamp), "", Value{Timestamp{86'400'500'000}}),
            "TIMESTAMP'1970-01-02 00:00:00.500000'");
  EXPECT_EQ(KeysetPager::literal(column("k", SourceType::kTime), "", Value{TimeOfDay{-500'000}}),
            "TIME'-00:00:00.500000'");
  EXPECT_EQ(KeysetPager::literal(column("k", SourceType::kTime), "", Value{TimeOfDay{3'020'399'000'000}}),
            "TIME'838:59:59'");
  EXPECT_EQ(KeysetPager::literal(column("k", SourceType::kDate), "", Value{Date{0}}), "DATE'1970-01-01'");
}

TEST(KeysetPagerTest, TextLiteralIsTheColumnsCharacterSetUnderItsCollation) {
  EXPECT_EQ(KeysetPager::literal(column("k", SourceType::kVarchar, "latin1"), "latin1_general_ci",
                                 Value{Text{"a'\\ \xc3\xa9"}}),
            "CONVERT(_utf8mb4 X'61275C20C3A9' USING latin1) COLLATE latin1_general_ci");
  EXPECT_EQ(KeysetPager::literal(column("k", SourceType::kVarchar, "utf8mb4"), "utf8mb4_bin", Value{Text{""}}),
            "CONVERT(_utf8mb4 X'' USING utf8mb4) COLLATE utf8mb4_bin");
  EXPECT_EQ(KeysetPager::literal(column("k", SourceType::kVarbinary), "", Value{Bytes{std::string("\0a", 2)}}),
            "X'0061'");
}

TEST(KeysetPagerTest, EnumFollowsByIndexAndSetByBitMask) {
  const auto schema = table({column("e", SourceType::kEnum, "utf8mb4", {"z", "a", "m"}),
                             column("s", SourceType::kSet, "utf8mb4", {"x", "y"})});
  auto pager = KeysetPager::for_table(schema, parts(*schema));
  ASSERT_TRUE(pager);
  pager->advance({Text{"z"}, Text{""}, std::int64_t{1}}, {Text{"z"}, Text{"y"}, std::int64_t{1}});
  const std::string literal_z = "CONVERT(_utf8mb4 X'7A' USING utf8mb4) COLLATE utf8mb4_unicode_ci";
  EXPECT_EQ(*pager->next_query(7),
            "SELECT `e`, `s`, `v` FROM `db`.`t` FORCE INDEX (PRIMARY) WHERE (`e` IN (2, 3)) OR (`e` = " + literal_z +
                " AND `s` > 2) ORDER BY `e`, `s` LIMIT 7");
  // 'm' is the last index and 'x,y' the full mask: no key can follow.
  pager->advance({Text{"m"}, Text{"x"}, std::int64_t{1}}, {Text{"m"}, Text{"x,y"}, std::int64_t{1}});
  EXPECT_FALSE(pager->next_query(7));
}

TEST(KeysetPagerTest, EmptyEnumErrorValueIsNamedByItsIndex) {
  const auto schema = table({column("e", SourceType::kEnum, "utf8mb4", {"a"}), column("n", SourceType::kInt)});
  auto pager = KeysetPager::for_table(schema, parts(*schema));
  ASSERT_TRUE(pager);
  pager->advance({Text{""}, std::int64_t{1}, std::int64_t{0}}, {Text{""}, std::int64_t{5}, std::int64_t{0}});
  EXPECT_NE(pager->next_query(2)->find("WHERE (`e` IN (1)) OR (`e` = 0 AND `n` > 5)"), std::string::npos)
      << *pager->next_query(2);
}

TEST(KeysetPagerTest, TablesTheServerCannotPageByKeyAreRefused) {
  const auto keyless = std::make_shared<TableSchema>(TableSchema{"db", "t", {column("v", SourceType::kInt)}, {}});
  EXPECT_FALSE(KeysetPager::for_table(keyless, {}));
  const auto text = table({column("k", SourceType::kVarchar, "utf8mb4")});
  auto prefix = parts(*text);
  prefix[0].prefix_length = 10;
  EXPECT_FALSE(KeysetPager::for_table(text, prefix)) << "a key on a prefix: ORDER BY sorts whole values";
  const auto fixed = table({column("k", SourceType::kChar, "utf8mb4")});
  EXPECT_FALSE(KeysetPager::for_table(fixed, parts(*fixed, "utf8mb4_nopad_bin")))
      << "CHAR under NO PAD: the server orders 'a\\0' before 'a' but compares it after";
  EXPECT_TRUE(KeysetPager::for_table(fixed, parts(*fixed, "utf8mb4_bin")));
  EXPECT_TRUE(KeysetPager::for_table(text, parts(*text, "utf8mb4_nopad_bin")));
}

TEST(KeysetPagerTest, KeyThatChangedSinceTheSchemaWasReadIsAnError) {
  const auto schema = table({column("k", SourceType::kInt)});
  EXPECT_THROW(KeysetPager::for_table(schema, {KeyPart{"other", std::nullopt, ""}}), Error);
  EXPECT_THROW(KeysetPager::for_table(schema, {}), Error);
}

TEST(KeysetPagerTest, CompositeKeyFollowsPartByPart) {
  const auto schema =
      table({column("a", SourceType::kInt), column("b", SourceType::kDecimal), column("c", SourceType::kVarbinary)});
  auto pager = KeysetPager::for_table(schema, parts(*schema));
  ASSERT_TRUE(pager);
  EXPECT_EQ(*pager->next_query(3),
            "SELECT `a`, `b`, `c`, `v` FROM `db`.`t` FORCE INDEX (PRIMARY) ORDER BY `a`, `b`, `c` LIMIT 3");
  pager->advance({std::int64_t{1}, Decimal{"0.5"}, Bytes{""}, std::int64_t{0}},
                 {std::int64_t{2}, Decimal{"-1.5"}, Bytes{"\x01"}, std::int64_t{0}});
  EXPECT_EQ(*pager->next_query(3),
            "SELECT `a`, `b`, `c`, `v` FROM `db`.`t` FORCE INDEX (PRIMARY) WHERE (`a` > 2) OR (`a` = 2 AND `b` > -1.5) "
            "OR (`a` = 2 AND `b` = -1.5 AND `c` > X'01') ORDER BY `a`, `b`, `c` LIMIT 3");
}

// A chunk that starts at the key the chunk before ended with means the query compared otherwise
// than the server orders: a broken invariant, not an error to retry.
TEST(KeysetPagerDeathTest, AChunkStartingAgainAtTheLastKeyReadAborts) {
  const auto schema = table({column("k", SourceType::kInt)});
  auto pager = KeysetPager::for_table(schema, parts(*schema));
  ASSERT_TRUE(pager);
  pager->advance({std::int64_t{1}, std::int64_t{0}}, {std::int64_t{2}, std::int64_t{0}});
  EXPECT_DEATH(pager->advance({std::int64_t{2}, std::int64_t{0}}, {std::int64_t{3}, std::int64_t{0}}),
               "starts again at the key");
}

}  // namespace
}  // namespace binberg::mysql
