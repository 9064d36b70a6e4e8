#include "support/schema_change_steps.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "iceberg/schema.h"

namespace binberg::testing {

std::string add_tier_and_memo(const std::string& accounts) {
  return fmt::format(
      "ALTER TABLE {} ADD COLUMN tier INT NOT NULL DEFAULT 3, ADD COLUMN memo VARCHAR(20) NULL AFTER owner", accounts);
}

void widen_rename_add_and_drop(mysql::Connection& db, const std::string& accounts, const std::string& orders) {
  db.execute(
      fmt::format("ALTER TABLE {} MODIFY quantity BIGINT NOT NULL, MODIFY amount DECIMAL(16,2) NOT NULL", orders));
  db.execute(fmt::format("UPDATE {} SET quantity = quantity + 5000000000 WHERE id % 3 = 0", orders));
  db.execute(fmt::format("ALTER TABLE {} RENAME COLUMN memo TO remark, RENAME COLUMN TIER TO grade", accounts));
  db.execute(fmt::format("UPDATE {} SET grade = grade + 10 WHERE id % 7 = 0", accounts));
  db.execute(fmt::format("ALTER TABLE {} ADD COLUMN scratch INT NULL", orders));
  db.execute(fmt::format("UPDATE {} SET scratch = 1 WHERE id % 2 = 0", orders));
  db.execute(fmt::format("ALTER TABLE {} DROP COLUMN Scratch", orders));  // any case names the column
}

void expect_evolved_tables(iceberg::Catalog& catalog, const std::string& ns, const std::string& accounts,
                           const std::string& orders) {
  const auto load = [&](const std::string& table) { return catalog.load_table(iceberg::TableIdentifier{ns, table}); };
  const iceberg::LoadedTable state = load(accounts);
  const iceberg::Schema& schema = state.metadata.current_schema();
  ASSERT_NE(schema.find_field("grade"), nullptr);
  ASSERT_NE(schema.find_field("remark"), nullptr);
  EXPECT_EQ(schema.find_field("memo"), nullptr);
  EXPECT_EQ(schema.find_field("tier"), nullptr);
  EXPECT_GT(schema.find_field("grade")->id, state.metadata.schemas.front().highest_field_id());
  EXPECT_EQ(load(orders).metadata.current_schema().find_field("quantity")->type->to_string(), "long");
  EXPECT_EQ(load(orders).metadata.current_schema().find_field("scratch"), nullptr);
  const iceberg::Schema history = load(orders + "_changelog").metadata.current_schema();
  EXPECT_NE(history.find_field("scratch"), nullptr)
      << "the changelog dropped a column's history: " << iceberg::schema_to_json(history).dump();
}

}  // namespace binberg::testing
