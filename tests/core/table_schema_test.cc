#include "core/table_schema.h"

#include <gtest/gtest.h>

#include <map>

namespace binberg {
namespace {

// Column names compare as MySQL compares them: without regard to (ASCII) case, else byte for byte.
TEST(TableSchemaTest, ColumnNamesCompareWithoutRegardToCase) {
  EXPECT_TRUE(same_column_name("Owner", "oWNER"));
  EXPECT_FALSE(same_column_name("owner", "owners"));
  EXPECT_FALSE(same_column_name("größe", "GRÖSSE"));
  TableSchema table;
  table.columns.resize(2);
  table.columns[0].name = "id";
  table.columns[1].name = "Owner";
  EXPECT_EQ(table.find_column("OWNER"), 1u);
  EXPECT_EQ(table.find_column("owner_"), std::nullopt);
  EXPECT_EQ(table.column_index("OWNER"), std::nullopt) << "exact: for names the server spelled";
  EXPECT_EQ(table.column_index("Owner"), 1u);
  std::map<std::string, int, ColumnNameLess> by_name = {{"Tier", 1}};
  EXPECT_EQ(by_name.count("TIER"), 1u);
  EXPECT_FALSE(by_name.emplace("tier", 2).second) << "one column, however it is spelled";
  EXPECT_EQ(by_name.begin()->first, "Tier");
}

}  // namespace
}  // namespace binberg
