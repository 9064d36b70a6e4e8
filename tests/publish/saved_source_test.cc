// What a save of the source writes (kafka_source.h, to_save), and the assertion it keeps: what a
// table holds in Kafka only grows, so a save never moves a table's position back (invariant 1).

#include <gtest/gtest.h>

#include "publish/change_producer.h"
#include "publish/kafka_source.h"

namespace binberg::publish {
namespace {

capture::SourcePosition at(std::uint64_t offset) {
  return capture::SourcePosition{mysql::BinlogPosition{"mysql-bin.000001", offset}, {}};
}

std::unique_ptr<PublishedTable> table(const std::string& name, std::optional<capture::SourcePosition> saved,
                                      std::optional<capture::SourcePosition> position) {
  auto published = std::make_unique<PublishedTable>();
  published->source = capture::CapturedTable{"shop", name};
  published->saved = std::move(saved);
  published->position = std::move(position);
  return published;
}

TEST(SavedSourceTest, ASaveHoldsEveryTablesPositionAndTheCopyBegun) {
  std::vector<std::unique_ptr<PublishedTable>> tables;
  tables.push_back(table("orders", at(100), at(400)));
  tables.push_back(table("items", std::nullopt, std::nullopt));  // not copied yet: no position to save
  const SavedSource saved = to_save(tables, std::nullopt);
  ASSERT_EQ(saved.positions.size(), 1u);
  EXPECT_EQ(saved.positions.at("shop.orders").to_string(), at(400).to_string());
  EXPECT_FALSE(saved.copy.has_value());
}

TEST(SavedSourceDeathTest, ASaveNeverMovesATablesPositionBack) {
  std::vector<std::unique_ptr<PublishedTable>> tables;
  tables.push_back(table("orders", at(400), at(100)));
  EXPECT_DEATH(to_save(tables, std::nullopt),
               "table shop.orders: saving mysql-bin.000001:100 after "
               "mysql-bin.000001:400 was saved");
}

TEST(SavedSourceDeathTest, ASaveNeverForgetsATablesSavedPosition) {
  std::vector<std::unique_ptr<PublishedTable>> tables;
  tables.push_back(table("orders", at(400), std::nullopt));
  EXPECT_DEATH(to_save(tables, std::nullopt), "table shop.orders: saving no position after");
}

}  // namespace
}  // namespace binberg::publish
