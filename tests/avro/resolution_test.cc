#include "avro/resolution.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.h"

namespace binberg::avro {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Value resolve(std::string_view writer, std::string_view reader, const Value& written) {
  const Schema writer_schema = Schema::parse(writer);
  return Resolver(writer_schema, Schema::parse(reader)).read(encode(writer_schema, written));
}

std::vector<std::string> problems(std::string_view writer, std::string_view reader) {
  return resolution_problems(Schema::parse(writer).root(), Schema::parse(reader).root());
}

TEST(AvroResolution, PromotesNumbersAndConvertsStringsAndBytes) {
  EXPECT_EQ(resolve(R"("int")", R"("long")", Value(std::int32_t{-5})), Value(std::int64_t{-5}));
  EXPECT_EQ(resolve(R"("int")", R"("float")", Value(std::int32_t{7})), Value(7.0f));
  EXPECT_EQ(resolve(R"("int")", R"("double")", Value(std::int32_t{7})), Value(7.0));
  EXPECT_EQ(resolve(R"("long")", R"("float")", Value(std::int64_t{1} << 40)), Value(1099511627776.0f));
  EXPECT_EQ(resolve(R"("long")", R"("double")", Value(std::int64_t{-3})), Value(-3.0));
  EXPECT_EQ(resolve(R"("float")", R"("double")", Value(0.5f)), Value(0.5));
  EXPECT_EQ(resolve(R"("string")", R"("bytes")", Value("ab")), Value(Bytes{'a', 'b'}));
  EXPECT_EQ(resolve(R"("bytes")", R"("string")", Value(Bytes{'c'})), Value("c"));
  // Promotions apply inside containers too.
  EXPECT_EQ(resolve(R"({"type": "array", "items": "int"})", R"({"type": "array", "items": "double"})",
                    Value(Array{Value(std::int32_t{1})})),
            Value(Array{Value(1.0)}));
  EXPECT_EQ(resolve(R"({"type": "map", "values": "int"})", R"({"type": "map", "values": "long"})",
                    Value(Map{{"k", Value(std::int32_t{2})}})),
            Value(Map{{"k", Value(std::int64_t{2})}}));
}

TEST(AvroResolution, RejectsDemotionsAndUnrelatedTypes) {
  EXPECT_THAT(problems(R"("long")", R"("int")"),
              ElementsAre("/: reader type int not compatible with writer type long"));
  EXPECT_FALSE(problems(R"("double")", R"("float")").empty());
  EXPECT_FALSE(problems(R"("string")", R"("int")").empty());
  EXPECT_FALSE(problems(R"("boolean")", R"("null")").empty());
  EXPECT_THROW(Resolver(Schema::parse(R"("long")"), Schema::parse(R"("int")")), Error);
}

TEST(AvroResolution, MatchesRecordFieldsByNameAndAliasWithDefaults) {
  const std::string_view writer = R"({"type": "record", "name": "r", "fields": [
      {"name": "a", "type": "int"},
      {"name": "dropped", "type": {"type": "array", "items": {"type": "map", "values": "string"}}},
      {"name": "old_name", "type": "string"},
      {"name": "c", "type": "long"}]})";
  const std::string_view reader = R"({"type": "record", "name": "r", "fields": [
      {"name": "c", "type": "long"},
      {"name": "a", "type": "long"},
      {"name": "new_name", "type": "string", "aliases": ["old_name"]},
      {"name": "added", "type": ["null", "string"], "default": null},
      {"name": "added_record", "type": {"type": "record", "name": "d", "fields": [
          {"name": "x", "type": "int", "default": 42}]}, "default": {}}]})";
  const Value written = Record{{
      Value(std::int32_t{1}),
      Value(Array{Value(Map{{"k", Value("v")}}), Value(Map{})}),
      Value("renamed"),
      Value(std::int64_t{9}),
  }};
  EXPECT_EQ(resolve(writer, reader, written), Value(Record{{
                                                  Value(std::int64_t{9}),
                                                  Value(std::int64_t{1}),
                                                  Value("renamed"),
                                                  Value(Union(0, Value())),
                                                  Value(Record{{Value(std::int32_t{42})}}),
                                              }}));
}

TEST(AvroResolution, ReaderFieldWithoutDefaultMissingFromWriterIsAnError) {
  const auto found = problems(R"({"type": "record", "name": "r", "fields": [{"name": "a", "type": "int"}]})",
                              R"({"type": "record", "name": "r", "fields": [{"name": "a", "type": "int"},
                                  {"name": "price", "type": "double"}]})");
  EXPECT_THAT(found, ElementsAre(HasSubstr("/fields/price: reader field 'price' has no default")));
}

TEST(AvroResolution, FieldTypeMismatchNamesThePath) {
  EXPECT_THAT(problems(R"({"type": "record", "name": "r", "fields": [{"name": "price", "type": "int"}]})",
                       R"({"type": "record", "name": "r", "fields": [{"name": "price", "type": "string"}]})"),
              ElementsAre("/fields/price/type: reader type string not compatible with writer type int"));
}

TEST(AvroResolution, EnumSymbolsResolveByNameOrReaderDefault) {
  const std::string_view writer = R"({"type": "enum", "name": "e", "symbols": ["A", "B", "C"]})";
  const std::string_view reader = R"({"type": "enum", "name": "e", "symbols": ["C", "A", "Z"], "default": "Z"})";
  EXPECT_EQ(resolve(writer, reader, Value(Enum{0})), Value(Enum{1}));
  EXPECT_EQ(resolve(writer, reader, Value(Enum{1})), Value(Enum{2}));  // B is unknown: the default
  EXPECT_EQ(resolve(writer, reader, Value(Enum{2})), Value(Enum{0}));
  EXPECT_THAT(problems(writer, R"({"type": "enum", "name": "e", "symbols": ["A", "C"]})"),
              ElementsAre(HasSubstr("/symbols: writer symbol 'B' is not in reader enum e")));
}

TEST(AvroResolution, ResolvesUnionsOnEitherSide) {
  // Writer union, reader not: each written branch resolves against the reader.
  EXPECT_EQ(resolve(R"(["int", "long"])", R"("double")", Value(Union(0, Value(std::int32_t{2})))), Value(2.0));
  // Reader union, writer not: the first exactly matching branch, else the first promotion.
  EXPECT_EQ(resolve(R"("int")", R"(["null", "string", "long", "int"])", Value(std::int32_t{3})),
            Value(Union(3, Value(std::int32_t{3}))));
  EXPECT_EQ(resolve(R"("int")", R"(["null", "double", "long"])", Value(std::int32_t{3})), Value(Union(1, Value(3.0))));
  // Both unions, branches reordered.
  EXPECT_EQ(resolve(R"(["null", "string"])", R"(["string", "null"])", Value(Union(1, Value("x")))),
            Value(Union(0, Value("x"))));
  // A writer branch the reader cannot hold is a problem.
  EXPECT_THAT(problems(R"(["null", "string"])", R"("string")"),
              ElementsAre("/: reader type string not compatible with writer type null"));
  EXPECT_THAT(problems(R"("boolean")", R"(["null", "string"])"),
              ElementsAre("/: reader union [null, string] has no branch for writer type boolean"));
}

TEST(AvroResolution, NamedTypesMatchByUnqualifiedNameOrAlias) {
  const std::string_view writer = R"({"type": "fixed", "name": "a.Hash", "size": 4})";
  EXPECT_TRUE(problems(writer, R"({"type": "fixed", "name": "b.Hash", "size": 4})").empty());
  EXPECT_TRUE(problems(writer, R"({"type": "fixed", "name": "Digest", "aliases": ["a.Hash"], "size": 4})").empty());
  EXPECT_THAT(problems(writer, R"({"type": "fixed", "name": "Digest", "size": 4})"),
              ElementsAre(HasSubstr("does not match the name of writer fixed a.Hash")));
  EXPECT_THAT(problems(writer, R"({"type": "fixed", "name": "Hash", "size": 8})"),
              ElementsAre(HasSubstr("/size: reader fixed Hash has size 8, writer fixed a.Hash has size 4")));
  EXPECT_EQ(
      resolve(writer, R"({"type": "fixed", "name": "H", "aliases": ["Hash"], "size": 4})", Value(Bytes{1, 2, 3, 4})),
      Value(Bytes{1, 2, 3, 4}));
  // In a reader union, a record branch is chosen by name.
  const std::string_view record_writer = R"({"type": "record", "name": "B", "fields": [{"name": "x", "type": "int"}]})";
  EXPECT_EQ(resolve(record_writer, R"([{"type": "record", "name": "A", "fields": []},
                                       {"type": "record", "name": "B", "fields": [{"name": "x", "type": "long"}]}])",
                    Value(Record{{Value(std::int32_t{1})}})),
            Value(Union(1, Value(Record{{Value(std::int64_t{1})}}))));
}

TEST(AvroResolution, ResolvesRecursiveSchemas) {
  const std::string_view writer = R"({"type": "record", "name": "List", "fields": [
      {"name": "v", "type": "int"}, {"name": "next", "type": ["null", "List"]}]})";
  const std::string_view reader = R"({"type": "record", "name": "List", "fields": [
      {"name": "next", "type": ["null", "List"]}, {"name": "v", "type": "double"}]})";
  const Value written =
      Record{{Value(std::int32_t{1}), Union(1, Value(Record{{Value(std::int32_t{2}), Union(0, Value())}}))}};
  EXPECT_EQ(resolve(writer, reader, written),
            Value(Record{{Union(1, Value(Record{{Union(0, Value()), Value(2.0)}})), Value(1.0)}}));
}

TEST(AvroResolution, ReportsEveryProblemAtOnce) {
  try {
    Resolver(Schema::parse(R"({"type": "record", "name": "r", "fields": [{"name": "a", "type": "string"}]})"),
             Schema::parse(R"({"type": "record", "name": "r", "fields": [{"name": "a", "type": "int"},
                                  {"name": "b", "type": "int"}]})"));
    ADD_FAILURE() << "incompatible schemas accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("/fields/a/type: reader type int not compatible with writer type string"));
    EXPECT_THAT(e.what(), HasSubstr("/fields/b: reader field 'b' has no default"));
  }
}

TEST(AvroResolution, ResolvedReadsRejectMalformedData) {
  const Schema writer = Schema::parse(R"({"type": "record", "name": "r", "fields": [
      {"name": "skipped", "type": "string"}, {"name": "kept", "type": ["null", "int"]}]})");
  const Resolver resolver(writer, Schema::parse(R"({"type": "record", "name": "r", "fields": [
      {"name": "kept", "type": ["null", "long"]}]})"));
  const std::string datum = encode(writer, Value(Record{{Value("abc"), Union(1, Value(std::int32_t{5}))}}));
  EXPECT_EQ(resolver.read(datum), Value(Record{{Union(1, Value(std::int64_t{5}))}}));
  for (std::size_t length = 0; length < datum.size(); ++length) {
    EXPECT_THROW(resolver.read(datum.substr(0, length)), Error) << length;
  }
  EXPECT_THROW(resolver.read(std::string("\x02"
                                         "a\x06",
                                         3)),
               Error);  // union branch 3 of 2
}

}  // namespace
}  // namespace binberg::avro
