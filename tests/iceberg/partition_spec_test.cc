// Partition specs and sort orders: the JSON form of spec Appendix C and their binding to a schema.

#include "iceberg/partition_spec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.h"
#include "iceberg/sort_order.h"

namespace binberg::iceberg {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

Schema events_schema() {
  return Schema(
      0, {NestedField{1, "id", true, long_type(), {}}, NestedField{2, "name", false, string_type(), {}},
          NestedField{3, "price", false, decimal_type(9, 2), {}}, NestedField{4, "ts", true, timestamptz_type(), {}},
          NestedField{5, "tags", false, list_type(6, true, string_type()), {}},
          NestedField{7, "score", false, double_type(), {}}});
}

PartitionSpec events_spec() {
  return PartitionSpec(2, {{4, 1000, "ts_day", Transform::day()},
                           {1, 1001, "id_bucket", Transform::bucket(16)},
                           {2, 1002, "name_trunc", Transform::truncate(3)},
                           {1, 1003, "id", Transform::identity()},
                           {3, 1004, "price_void", Transform::always_null()},
                           {4, 1005, "ts_hour", Transform::hour()},
                           {4, 1006, "ts_month", Transform::month()},
                           {4, 1007, "ts_year", Transform::year()}});
}

TEST(PartitionSpecTest, JsonRoundTripInTheSpecLayout) {
  const Json json = partition_spec_to_json(events_spec());
  EXPECT_EQ(json["spec-id"], 2);
  EXPECT_EQ(json["fields"][0].dump(), R"({"source-id":4,"field-id":1000,"name":"ts_day","transform":"day"})");
  EXPECT_EQ(json["fields"][1]["transform"], "bucket[16]");
  EXPECT_EQ(partition_spec_from_json(json), events_spec());
  EXPECT_EQ(events_spec().last_assigned_field_id(), 1007);
  EXPECT_EQ(PartitionSpec::unpartitioned().last_assigned_field_id(), 999);
}

TEST(PartitionSpecTest, KeepsUnknownTransformsReadable) {
  const auto spec = partition_spec_from_json(
      Json::parse(R"({"spec-id":1,"fields":[{"source-id":1,"field-id":1000,"name":"z","transform":"zorder"}]})"));
  EXPECT_TRUE(spec.has_unknown_transform());
  EXPECT_NO_THROW(spec.validate_against(events_schema()));
  EXPECT_EQ(partition_spec_to_json(spec)["fields"][0]["transform"], "zorder");
}

TEST(PartitionSpecTest, ValidatesSourcesAgainstTheSchema) {
  const Schema schema = events_schema();
  EXPECT_NO_THROW(events_spec().validate_against(schema));
  EXPECT_THAT(
      [&] {
        PartitionSpec(0, {{9, 1000, "x", Transform::identity()}}).validate_against(schema);
      },
      ThrowsMessage<Error>(HasSubstr("partition spec 0 field 1000 (\"x\"): source field 9 is not in schema 0")));
  EXPECT_THAT(
      [&] {
        PartitionSpec(0, {{5, 1000, "x", Transform::identity()}}).validate_against(schema);
      },
      ThrowsMessage<Error>(HasSubstr("source field 5 is a list<6: element: required string>, not a primitive")));
  EXPECT_THAT(
      [&] {
        PartitionSpec(0, {{6, 1000, "x", Transform::identity()}}).validate_against(schema);
      },
      ThrowsMessage<Error>(HasSubstr("nested in a list or map")));
  EXPECT_THAT(
      [&] {
        PartitionSpec(0, {{7, 1000, "x", Transform::bucket(4)}}).validate_against(schema);
      },
      ThrowsMessage<Error>(HasSubstr("transform bucket[4] cannot apply to source field 7 of type double")));
  EXPECT_THAT(
      [&] {
        PartitionSpec(0, {{1, 1000, "name", Transform::bucket(4)}}).validate_against(schema);
      },
      ThrowsMessage<Error>(HasSubstr("name conflicts with schema field 2")));
}

TEST(PartitionSpecTest, RejectsDuplicateFieldsAndBadJson) {
  EXPECT_THAT(
      [] {
        PartitionSpec(0, {{1, 1000, "a", Transform::identity()}, {2, 1000, "b", Transform::identity()}});
      },
      ThrowsMessage<Error>(HasSubstr("partition spec 0 has field id 1000 twice")));
  EXPECT_THAT(
      [] {
        PartitionSpec(0, {{1, 1000, "a", Transform::identity()}, {2, 1001, "a", Transform::identity()}});
      },
      ThrowsMessage<Error>(HasSubstr("two fields named \"a\"")));
  EXPECT_THAT(
      [] {
        partition_spec_from_json(
            Json::parse(R"({"spec-id":0,"fields":[{"source-id":1,"name":"a","transform":"day"}]})"));
      },
      ThrowsMessage<Error>(HasSubstr("partition spec 0 field is missing required field \"field-id\"")));
  EXPECT_THAT(
      [] {
        partition_spec_from_json(Json::parse(
            R"({"spec-id":0,"fields":[{"source-id":1,"field-id":1000,"name":"a","transform":"bucket[0]"}]})"));
      },
      ThrowsMessage<Error>(HasSubstr("partition spec 0 1000: transform \"bucket[0]\"")));
}

TEST(PartitionSpecTest, ComputesThePartitionTuple) {
  const Schema schema = events_schema();
  const std::int64_t ts = 1510871468000000;  // 2017-11-16T22:31:08Z
  const auto values = events_spec().partition_values(schema, [&](std::int32_t source_id) -> Literal {
    switch (source_id) {
      case 1:
        return std::int64_t{34};
      case 2:
        return std::string("iceberg");
      case 3:
        return Decimal{1065};
      default:
        return ts;
    }
  });
  const std::vector<Literal> expected{std::int32_t{17486}, std::int32_t{3},  std::string("ice"),
                                      std::int64_t{34},    std::monostate{}, std::int32_t{17486 * 24 + 22},
                                      std::int32_t{574},   std::int32_t{47}};
  EXPECT_EQ(values, expected);
  EXPECT_THAT([&] { events_spec().partition_values(schema, [](std::int32_t) -> Literal { return std::int32_t{1}; }); },
              ThrowsMessage<Error>(HasSubstr(
                  "partition spec 2 field 1000 (\"ts_day\"): day: a timestamptz value cannot be held as int32")));
}

TEST(SortOrderTest, JsonRoundTripInTheSpecLayout) {
  const SortOrder order(1, {{Transform::identity(), 2, SortDirection::kAsc, NullOrder::kNullsFirst},
                            {Transform::bucket(4), 1, SortDirection::kDesc, NullOrder::kNullsLast}});
  const Json json = sort_order_to_json(order);
  EXPECT_EQ(
      json.dump(),
      R"({"order-id":1,"fields":[{"transform":"identity","source-id":2,"direction":"asc","null-order":"nulls-first"},)"
      R"({"transform":"bucket[4]","source-id":1,"direction":"desc","null-order":"nulls-last"}]})");
  EXPECT_EQ(sort_order_from_json(json), order);
  EXPECT_NO_THROW(order.validate_against(events_schema()));
  EXPECT_EQ(sort_order_from_json(sort_order_to_json(SortOrder::unsorted())), SortOrder::unsorted());
}

TEST(SortOrderTest, RejectsInvalidOrders) {
  EXPECT_THAT(
      [] {
        SortOrder(0, {{Transform::identity(), 1, SortDirection::kAsc, NullOrder::kNullsFirst}});
      },
      ThrowsMessage<Error>(HasSubstr("sort order id 0 is reserved for the unsorted order")));
  EXPECT_THAT([] { SortOrder(3, {}); }, ThrowsMessage<Error>(HasSubstr("sort order 3 has no fields")));
  EXPECT_THAT(
      [] {
        sort_order_from_json(Json::parse(
            R"({"order-id":1,"fields":[{"transform":"identity","source-id":1,"direction":"up","null-order":"nulls-first"}]})"));
      },
      ThrowsMessage<Error>(HasSubstr("sort order 1 field: direction must be \"asc\" or \"desc\", got \"up\"")));
  EXPECT_THAT(
      [] {
        sort_order_from_json(Json::parse(
            R"({"order-id":1,"fields":[{"transform":"identity","source-id":1,"direction":"asc","null-order":"first"}]})"));
      },
      ThrowsMessage<Error>(HasSubstr("null-order must be")));
  EXPECT_THAT(
      [] {
        SortOrder(1, {{Transform::hour(), 1, SortDirection::kAsc, NullOrder::kNullsFirst}})
            .validate_against(events_schema());
      },
      ThrowsMessage<Error>(HasSubstr("sort order 1: transform hour cannot apply to source field 1 of type long")));
}

}  // namespace
}  // namespace binberg::iceberg
