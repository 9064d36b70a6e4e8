#include "envelope/column_codec.h"

#include <gtest/gtest.h>

#include <random>

#include "core/error.h"

namespace binberg::envelope {
namespace {

avro::Bytes bytes(std::initializer_list<int> values) {
  avro::Bytes out;
  for (int v : values) out.push_back(static_cast<std::uint8_t>(v));
  return out;
}

TEST(ColumnCodecTest, DecimalsAreMinimalTwosComplementBigEndian) {
  EXPECT_EQ(decimal_to_bytes("0"), bytes({0x00}));
  EXPECT_EQ(decimal_to_bytes("1.00"), bytes({0x64}));
  EXPECT_EQ(decimal_to_bytes("-1"), bytes({0xff}));
  EXPECT_EQ(decimal_to_bytes("127"), bytes({0x7f}));
  EXPECT_EQ(decimal_to_bytes("128"), bytes({0x00, 0x80}));
  EXPECT_EQ(decimal_to_bytes("-128"), bytes({0x80}));
  EXPECT_EQ(decimal_to_bytes("-129"), bytes({0xff, 0x7f}));
  EXPECT_EQ(decimal_to_bytes("18446744073709551615"), bytes({0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}));
  EXPECT_EQ(decimal_from_bytes(bytes({0x64}), 2), "1.00");
  EXPECT_EQ(decimal_from_bytes(bytes({0xff, 0x7f}), 0), "-129");
  EXPECT_EQ(decimal_from_bytes(bytes({0xff}), 3), "-0.001");
  EXPECT_EQ(decimal_from_bytes(bytes({0x00}), 2), "0.00");
  // A longer form of the same value reads the same.
  EXPECT_EQ(decimal_from_bytes(bytes({0xff, 0xff, 0x80}), 0), "-128");
  EXPECT_THROW(decimal_to_bytes("12a"), Error);
}

TEST(ColumnCodecTest, DecimalsOfAnyPrecisionRoundTrip) {
  std::mt19937_64 random(7);
  for (int round = 0; round < 2000; ++round) {
    const unsigned digits = 1 + static_cast<unsigned>(random() % 65);
    const unsigned scale = static_cast<unsigned>(random() % (std::min(digits, 30u) + 1));
    std::string text;
    for (unsigned i = 0; i < digits; ++i) text.push_back(static_cast<char>('0' + random() % 10));
    // The canonical form: no leading zeros, "0" before the point, no negative zero.
    std::string integer = text.substr(0, digits - scale);
    integer.erase(0, std::min(integer.find_first_not_of('0'), integer.size()));
    if (integer.empty()) integer = "0";
    std::string canonical = integer + (scale > 0 ? "." + text.substr(digits - scale) : "");
    const bool zero = canonical.find_first_not_of("0.") == std::string::npos;
    if (random() % 2 == 0 && !zero) canonical.insert(canonical.begin(), '-');
    ASSERT_EQ(decimal_from_bytes(decimal_to_bytes(canonical), scale), canonical) << canonical;
  }
}

TEST(ColumnCodecTest, FieldNamesAreValidAvroNames) {
  EXPECT_EQ(avro_field_name("order_id"), "order_id");
  EXPECT_EQ(avro_field_name("weird name-1"), "weird_name_1");
  EXPECT_EQ(avro_field_name("1st"), "_1st");
  EXPECT_EQ(avro_field_name(""), "_");
}

TEST(ColumnCodecTest, ValuesOfTheWrongKindNameTheColumn) {
  Column column{"amount", SourceType::kDecimal, true, false, 10, 2, 0, "", {}};
  try {
    (void)to_avro(column, Value{Text{"12"}});
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("column amount (DECIMAL)"), std::string::npos) << error.what();
  }
  Column tiny{"t", SourceType::kTinyInt, true, false, 0, 0, 0, "", {}};
  EXPECT_THROW((void)to_avro(tiny, Value{std::int64_t{1} << 40}), Error);
  Column wide{"u", SourceType::kBigInt, true, true, 0, 0, 0, "", {}};
  EXPECT_THROW((void)from_avro(wide, avro::Value(decimal_to_bytes("18446744073709551616"))), Error);
  EXPECT_THROW((void)from_avro(wide, avro::Value(decimal_to_bytes("-1"))), Error);
}

TEST(ColumnCodecTest, DescriptionsGiveTheColumnBack) {
  const Column column{"state", SourceType::kEnum, false, false, 0, 0, 4, "utf8mb4", {"new", "paid"}};
  const Column back = column_from_description(column_description(column), "test");
  EXPECT_EQ(back.name, column.name);
  EXPECT_EQ(back.type, column.type);
  EXPECT_EQ(back.nullable, column.nullable);
  EXPECT_EQ(back.max_bytes, column.max_bytes);
  EXPECT_EQ(back.charset, column.charset);
  EXPECT_EQ(back.symbols, column.symbols);
  EXPECT_THROW((void)column_from_description(avro::Json{{"name", "x"}, {"type", "NUMBER"}}, "test"), Error);
  EXPECT_THROW((void)column_from_description(avro::Json{{"type", "INT"}}, "test"), Error);
}

}  // namespace
}  // namespace binberg::envelope
