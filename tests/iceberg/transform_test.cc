// Partition transforms against the spec's own example values: Appendix B's hash test values and the
// truncate examples of "Truncate Transform Details".

#include "iceberg/transform.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.h"
#include "iceberg/hash.h"

namespace binberg::iceberg {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

constexpr std::int32_t kDays20171116 = 17486;                                    // 2017-11-16
constexpr std::int64_t kMicros223108 = (22 * 3600 + 31 * 60 + 8) * 1'000'000LL;  // 22:31:08
constexpr std::int64_t kMicros20171116T223108 = kDays20171116 * 86'400'000'000LL + kMicros223108;

TEST(BucketHashTest, MatchesTheSpecAppendixBTestValues) {
  // Every expected value below is from the "Test value" column of spec Appendix B.
  EXPECT_EQ(bucket_hash(*int_type(), std::int32_t{34}), 2017239379);
  EXPECT_EQ(bucket_hash(*long_type(), std::int64_t{34}), 2017239379);
  EXPECT_EQ(bucket_hash(*decimal_type(4, 2), Decimal{1420}), -500754589);  // 14.20
  EXPECT_EQ(bucket_hash(*date_type(), kDays20171116), -653330422);
  EXPECT_EQ(bucket_hash(*time_type(), kMicros223108), -662762989);
  EXPECT_EQ(bucket_hash(*timestamp_type(), kMicros20171116T223108), -2047944441);
  EXPECT_EQ(bucket_hash(*timestamp_type(), kMicros20171116T223108 + 1), -1207196810);
  // 2017-11-16T14:31:08-08:00 is the same instant as 22:31:08 UTC.
  EXPECT_EQ(bucket_hash(*timestamptz_type(), kMicros20171116T223108), -2047944441);
  EXPECT_EQ(bucket_hash(*timestamptz_type(), kMicros20171116T223108 + 1), -1207196810);
  EXPECT_EQ(bucket_hash(*string_type(), std::string("iceberg")), 1210000089);
  EXPECT_EQ(bucket_hash(*uuid_type(), Uuid::parse("f79c3e09-677c-4bbd-a479-3f349cb785e7")), 1488055340);
  EXPECT_EQ(bucket_hash(*fixed_type(4), Bytes{0, 1, 2, 3}), -188683207);
  EXPECT_EQ(bucket_hash(*binary_type(), Bytes{0, 1, 2, 3}), -188683207);
}

TEST(BucketHashTest, DecimalsHashTheirMinimalTwosComplementBytes) {
  EXPECT_EQ(min_big_endian_bytes(Decimal{1420}), (Bytes{0x05, 0x8C}));
  EXPECT_EQ(min_big_endian_bytes(Decimal{0}), (Bytes{0x00}));
  EXPECT_EQ(min_big_endian_bytes(Decimal{127}), (Bytes{0x7F}));
  EXPECT_EQ(min_big_endian_bytes(Decimal{128}), (Bytes{0x00, 0x80}));
  EXPECT_EQ(min_big_endian_bytes(Decimal{-1}), (Bytes{0xFF}));
  EXPECT_EQ(min_big_endian_bytes(Decimal{-128}), (Bytes{0x80}));
  EXPECT_EQ(min_big_endian_bytes(Decimal{-129}), (Bytes{0xFF, 0x7F}));
  // The hash ignores the scale, which belongs to the type (Appendix B note 2).
  EXPECT_EQ(bucket_hash(*decimal_type(10, 4), Decimal{1420}), -500754589);
}

TEST(BucketHashTest, RejectsTypesThatCannotBeBucketedAndMismatchedValues) {
  EXPECT_THAT([] { bucket_hash(*double_type(), 1.0); },
              ThrowsMessage<Error>(HasSubstr("double values cannot be bucketed")));
  EXPECT_THAT([] { bucket_hash(*long_type(), std::string("34")); },
              ThrowsMessage<Error>(HasSubstr("a long value cannot be held as string")));
  EXPECT_THAT([] { bucket_hash(*fixed_type(16), Bytes{1}); },
              ThrowsMessage<Error>(HasSubstr("must have 16 bytes, got 1")));
}

TEST(TransformTest, BucketIsTheNonNegativeHashModN) {
  const Transform bucket = Transform::bucket(16);
  // 2017239379 % 16 == 3; -653330422 & INT_MAX == 1494153226, % 16 == 10.
  EXPECT_EQ(bucket.apply(*int_type(), std::int32_t{34}), Literal(std::int32_t{3}));
  EXPECT_EQ(bucket.apply(*date_type(), kDays20171116), Literal(std::int32_t{10}));
  EXPECT_EQ(bucket.apply(*long_type(), std::monostate{}), Literal(std::monostate{}));
  EXPECT_EQ(bucket.result_type(string_type())->kind(), TypeKind::kInt);
}

TEST(TransformTest, TruncateMatchesTheSpecExamples) {
  const Transform by10 = Transform::truncate(10);
  EXPECT_EQ(by10.apply(*int_type(), std::int32_t{1}), Literal(std::int32_t{0}));
  EXPECT_EQ(by10.apply(*int_type(), std::int32_t{-1}), Literal(std::int32_t{-10}));
  EXPECT_EQ(by10.apply(*long_type(), std::int64_t{1}), Literal(std::int64_t{0}));
  EXPECT_EQ(by10.apply(*long_type(), std::int64_t{-1}), Literal(std::int64_t{-10}));
  EXPECT_EQ(Transform::truncate(50).apply(*decimal_type(9, 2), Decimal{1065}),
            Literal(Decimal{1050}));  // 10.65 -> 10.50
  EXPECT_EQ(Transform::truncate(3).apply(*string_type(), std::string("iceberg")), Literal(std::string("ice")));
  EXPECT_EQ(Transform::truncate(3).apply(*binary_type(), Bytes{1, 2, 3, 4, 5}), Literal(Bytes{1, 2, 3}));
}

TEST(TransformTest, TruncateCountsCodePointsAndRejectsOverflow) {
  // "ä" and "😀" are 2 and 4 UTF-8 bytes: truncating to 2 code points keeps whole characters.
  EXPECT_EQ(Transform::truncate(2).apply(*string_type(), std::string("\xC3\xA4\xF0\x9F\x98\x80z")),
            Literal(std::string("\xC3\xA4\xF0\x9F\x98\x80")));
  EXPECT_EQ(Transform::truncate(5).apply(*string_type(), std::string("ab")), Literal(std::string("ab")));
  EXPECT_EQ(Transform::truncate(5).apply(*binary_type(), Bytes{1}), Literal(Bytes{1}));
  EXPECT_THAT([] { Transform::truncate(10).apply(*int_type(), std::numeric_limits<std::int32_t>::min()); },
              ThrowsMessage<Error>(HasSubstr("truncate[10] of a int value overflows")));
}

TEST(TransformTest, TimeTransformsCountFromTheEpochWithFloorSemantics) {
  const std::int64_t micros = kMicros20171116T223108;
  EXPECT_EQ(Transform::year().apply(*timestamp_type(), micros), Literal(std::int32_t{47}));
  EXPECT_EQ(Transform::month().apply(*timestamp_type(), micros), Literal(std::int32_t{47 * 12 + 10}));
  EXPECT_EQ(Transform::day().apply(*timestamptz_type(), micros), Literal(kDays20171116));
  EXPECT_EQ(Transform::hour().apply(*timestamp_type(), micros), Literal(std::int32_t{kDays20171116 * 24 + 22}));
  EXPECT_EQ(Transform::year().apply(*date_type(), kDays20171116), Literal(std::int32_t{47}));
  EXPECT_EQ(Transform::month().apply(*date_type(), kDays20171116), Literal(std::int32_t{574}));
  EXPECT_EQ(Transform::day().apply(*date_type(), kDays20171116), Literal(kDays20171116));
  // One microsecond before the epoch is in 1969-12-31 23:00.
  EXPECT_EQ(Transform::year().apply(*timestamp_type(), std::int64_t{-1}), Literal(std::int32_t{-1}));
  EXPECT_EQ(Transform::month().apply(*timestamp_type(), std::int64_t{-1}), Literal(std::int32_t{-1}));
  EXPECT_EQ(Transform::day().apply(*timestamp_type(), std::int64_t{-1}), Literal(std::int32_t{-1}));
  EXPECT_EQ(Transform::hour().apply(*timestamp_type(), std::int64_t{-1}), Literal(std::int32_t{-1}));
  // 2000-02-29 (leap day) is day 11016; 1900-03-01 is day -25508.
  EXPECT_EQ(Transform::month().apply(*date_type(), std::int32_t{11016}), Literal(std::int32_t{30 * 12 + 1}));
  EXPECT_EQ(Transform::month().apply(*date_type(), std::int32_t{-25508}), Literal(std::int32_t{-70 * 12 + 2}));
  EXPECT_EQ(Transform::year().apply(*date_type(), std::int32_t{-25508}), Literal(std::int32_t{-70}));
}

TEST(TransformTest, IdentityAndVoid) {
  EXPECT_EQ(Transform::identity().apply(*string_type(), std::string("x")), Literal(std::string("x")));
  EXPECT_EQ(Transform::always_null().apply(*string_type(), std::string("x")), Literal(std::monostate{}));
  EXPECT_EQ(Transform::always_null().result_type(string_type())->kind(), TypeKind::kString);
}

TEST(TransformTest, SourceTypesFollowTheSpecTable) {
  EXPECT_FALSE(Transform::bucket(4).can_transform(*float_type()));
  EXPECT_FALSE(Transform::bucket(4).can_transform(*boolean_type()));
  EXPECT_TRUE(Transform::bucket(4).can_transform(*uuid_type()));
  EXPECT_FALSE(Transform::truncate(4).can_transform(*uuid_type()));
  EXPECT_FALSE(Transform::truncate(4).can_transform(*fixed_type(4)));
  EXPECT_FALSE(Transform::hour().can_transform(*date_type()));
  EXPECT_FALSE(Transform::day().can_transform(*time_type()));
  EXPECT_FALSE(Transform::identity().can_transform(*struct_type({})));
  EXPECT_THAT([] { Transform::hour().apply(*date_type(), std::int32_t{1}); },
              ThrowsMessage<Error>(HasSubstr("transform hour cannot apply to date")));
}

TEST(TransformTest, ParsesAndPrintsEverySpecForm) {
  for (const char* text : {"identity", "bucket[16]", "truncate[20]", "year", "month", "day", "hour", "void"}) {
    const Transform transform = Transform::parse(text);
    EXPECT_TRUE(transform.is_known()) << text;
    EXPECT_EQ(transform.to_string(), text);
  }
  EXPECT_EQ(Transform::parse("bucket[16]").parameter(), 16);
  EXPECT_EQ(Transform::parse("bucket[16]"), Transform::bucket(16));
}

TEST(TransformTest, KeepsUnknownTransformsAndRejectsBadParameters) {
  const Transform unknown = Transform::parse("zorder");
  EXPECT_FALSE(unknown.is_known());
  EXPECT_EQ(unknown.to_string(), "zorder");
  EXPECT_FALSE(unknown.can_transform(*int_type()));
  EXPECT_THAT([] { Transform::parse("bucket[0]"); },
              ThrowsMessage<Error>(HasSubstr("transform \"bucket[0]\": bucket[N] needs a positive")));
  EXPECT_THAT([] { Transform::parse("truncate[-3]"); }, ThrowsMessage<Error>(HasSubstr("needs a positive width")));
  EXPECT_THAT([] { Transform::parse("bucket[99999999999]"); },
              ThrowsMessage<Error>(HasSubstr("transform \"bucket[99999999999]\": parameter is not an int")));
}

}  // namespace
}  // namespace binberg::iceberg
