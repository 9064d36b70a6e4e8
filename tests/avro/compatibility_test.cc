#include "avro/compatibility.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace binberg::avro {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

Schema record(std::string_view fields) {
  return Schema::parse(fmt::format(R"({{"type": "record", "name": "r", "fields": [{}]}})", fields));
}

const Schema kV1 = record(R"({"name": "a", "type": "int"})");
const Schema kWithDefault = record(R"({"name": "a", "type": "int"}, {"name": "b", "type": "string", "default": ""})");
const Schema kWithoutDefault = record(R"({"name": "a", "type": "int"}, {"name": "b", "type": "string"})");

TEST(AvroCompatibility, ParsesAndNamesLevels) {
  for (const auto* name :
       {"NONE", "BACKWARD", "FORWARD", "FULL", "BACKWARD_TRANSITIVE", "FORWARD_TRANSITIVE", "FULL_TRANSITIVE"}) {
    const auto level = parse_compatibility(name);
    ASSERT_TRUE(level) << name;
    EXPECT_EQ(compatibility_name(*level), name);
  }
  EXPECT_FALSE(parse_compatibility("backward"));
}

TEST(AvroCompatibility, AddingAFieldWithADefaultIsFullyCompatible) {
  const std::vector<Schema> history{kV1};
  for (const auto level : {Compatibility::kBackward, Compatibility::kForward, Compatibility::kFull}) {
    EXPECT_THAT(check_compatibility(kWithDefault, history, level), IsEmpty());
  }
}

TEST(AvroCompatibility, AddingAFieldWithoutADefaultBreaksBackward) {
  const std::vector<Schema> history{kV1};
  EXPECT_THAT(check_compatibility(kWithoutDefault, history, Compatibility::kBackward),
              ElementsAre(HasSubstr("backward, version 1: /fields/b: reader field 'b' has no default")));
  EXPECT_THAT(check_compatibility(kWithoutDefault, history, Compatibility::kForward), IsEmpty());
  EXPECT_THAT(check_compatibility(kWithoutDefault, history, Compatibility::kFull), testing::SizeIs(1));
  EXPECT_THAT(check_compatibility(kWithoutDefault, history, Compatibility::kNone), IsEmpty());
}

TEST(AvroCompatibility, RemovingAFieldWithoutADefaultBreaksForward) {
  const std::vector<Schema> history{kWithoutDefault};
  EXPECT_THAT(check_compatibility(kV1, history, Compatibility::kBackward), IsEmpty());
  EXPECT_THAT(check_compatibility(kV1, history, Compatibility::kForward),
              ElementsAre(HasSubstr("forward, version 1: /fields/b: reader field 'b' has no default")));
}

TEST(AvroCompatibility, ChangingATypeNamesThePath) {
  const std::vector<Schema> history{record(R"({"name": "price", "type": "int"})")};
  EXPECT_THAT(check_compatibility(record(R"({"name": "price", "type": "string"})"), history, Compatibility::kFull),
              ElementsAre("backward, version 1: /fields/price/type: reader type string not compatible with writer "
                          "type int",
                          "forward, version 1: /fields/price/type: reader type int not compatible with writer type "
                          "string"));
  // Widening int to long reads old data but old readers cannot read the new data.
  const Schema widened = record(R"({"name": "price", "type": "long"})");
  EXPECT_THAT(check_compatibility(widened, history, Compatibility::kBackward), IsEmpty());
  EXPECT_THAT(check_compatibility(widened, history, Compatibility::kForward), testing::SizeIs(1));
}

TEST(AvroCompatibility, TransitiveLevelsCheckEveryVersion) {
  // v2 added b with a default; the candidate drops the default: fine against v2, not against v1.
  const std::vector<Schema> history{kV1, kWithDefault};
  EXPECT_THAT(check_compatibility(kWithoutDefault, history, Compatibility::kBackward), IsEmpty());
  EXPECT_THAT(check_compatibility(kWithoutDefault, history, Compatibility::kBackwardTransitive),
              ElementsAre(HasSubstr("backward, version 1: /fields/b")));
  EXPECT_THAT(check_compatibility(kWithoutDefault, history, Compatibility::kFullTransitive),
              ElementsAre(HasSubstr("backward, version 1: /fields/b")));
  EXPECT_THAT(
      check_compatibility(kV1, std::vector<Schema>{kWithoutDefault, kWithDefault}, Compatibility::kForwardTransitive),
      ElementsAre(HasSubstr("forward, version 1: /fields/b")));
  EXPECT_THAT(check_compatibility(kWithoutDefault, {}, Compatibility::kFullTransitive), IsEmpty());
}

}  // namespace
}  // namespace binberg::avro
