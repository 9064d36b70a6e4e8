#include "mysql/connection.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "support/test_services.h"

namespace binberg::mysql {
namespace {

TEST(ConnectionTest, WritesRowsAndReadsThemBack) {
  auto db = Connection::open(testing::mariadb_admin_options());
  const std::string table = testing::unique_name("conn");
  db.execute(
      fmt::format("CREATE TABLE {} (id BIGINT UNSIGNED PRIMARY KEY, name VARCHAR(40) CHARACTER SET utf8mb4, "
                  "amount DECIMAL(30,10), note TEXT NULL)",
                  table));
  db.execute(fmt::format(
      "INSERT INTO {} VALUES (18446744073709551615, 'gr\u00fc\u00dfe \U0001F600', -12345678901234567890.0123456789, "
      "NULL), (1, '', 0, 'x')",
      table));
  auto result = db.query(fmt::format("SELECT id, name, amount, note FROM {} ORDER BY id", table));
  ASSERT_EQ(result.columns, (std::vector<std::string>{"id", "name", "amount", "note"}));
  ASSERT_EQ(result.rows.size(), 2u);
  EXPECT_EQ(result.rows[0], (Row{"1", "", "0.0000000000", "x"}));
  EXPECT_EQ(result.rows[1], (Row{"18446744073709551615", "gr\u00fc\u00dfe \U0001F600",
                                 "-12345678901234567890.0123456789", std::nullopt}));
  EXPECT_EQ(db.scalar(fmt::format("SELECT COUNT(*) FROM {}", table)), "2");
  db.execute("DROP TABLE " + table);
}

TEST(ConnectionTest, BadPasswordNamesServerAndUser) {
  auto options = testing::mariadb_admin_options();
  options.password = "definitely-wrong";
  try {
    Connection::open(options);
    FAIL() << "connected with a wrong password";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(options.address()), std::string::npos) << message;
    EXPECT_NE(message.find("'" + options.user + "'"), std::string::npos) << message;
    EXPECT_EQ(message.find("definitely-wrong"), std::string::npos) << "password leaked: " << message;
  }
}

TEST(ConnectionTest, FailedStatementQuotesIt) {
  auto db = Connection::open(testing::mariadb_admin_options());
  try {
    db.execute("SELECT * FROM table_that_does_not_exist");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("table_that_does_not_exist"), std::string::npos) << e.what();
  }
  EXPECT_EQ(db.scalar("SELECT 1"), "1") << "connection unusable after an error";
}

TEST(ConnectionTest, ReplicationUserHasOnlyCdcPrivileges) {
  auto db = Connection::open(testing::mariadb_replication_options());
  auto grants = db.query("SHOW GRANTS");
  ASSERT_FALSE(grants.rows.empty());
  const std::string grant = *grants.rows[0][0];
  for (const char* needed : {"SELECT", "RELOAD", "REPLICATION SLAVE", "BINLOG MONITOR"}) {
    EXPECT_NE(grant.find(needed), std::string::npos) << grant;
  }
  EXPECT_EQ(grant.find("INSERT"), std::string::npos) << grant;
  EXPECT_THROW(db.execute("CREATE DATABASE not_allowed_here"), Error);
}

}  // namespace
}  // namespace binberg::mysql
