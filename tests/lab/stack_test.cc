// The stack started by the `services` fixture: every service answers on loopback, and the file
// holding its credentials is readable by its owner only.

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <sys/stat.h>

#include <memory>

#include "mysql/connection.h"
#include "support/test_services.h"

namespace binberg::lab {
namespace {

TEST(StackTest, EndpointsAreLoopbackOnlyAndCredentialsPrivate) {
  const auto& stack = testing::stack();
  EXPECT_EQ(stack.mariadb().host, "127.0.0.1");
  EXPECT_EQ(stack.postgres().host, "127.0.0.1");
  EXPECT_EQ(stack.kafka_bootstrap_servers().rfind("127.0.0.1:", 0), 0u);
  EXPECT_EQ(stack.registry_url().rfind("http://127.0.0.1:", 0), 0u);
  struct stat info {};
  ASSERT_EQ(::stat((stack.dir + "/services.json").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
}

TEST(StackTest, PostgresAcceptsThePasswordAndRunsSql) {
  const auto& pg = testing::stack().postgres();
  const std::string conninfo = fmt::format("host={} port={} dbname={} user={} password={} connect_timeout=10", pg.host,
                                           pg.port, pg.database, pg.user, pg.password);
  std::unique_ptr<PGconn, decltype(&PQfinish)> connection(PQconnectdb(conninfo.c_str()), &PQfinish);
  ASSERT_EQ(PQstatus(connection.get()), CONNECTION_OK) << PQerrorMessage(connection.get());
  std::unique_ptr<PGresult, decltype(&PQclear)> result(PQexec(connection.get(), "SELECT 40 + 2"), &PQclear);
  ASSERT_EQ(PQresultStatus(result.get()), PGRES_TUPLES_OK) << PQerrorMessage(connection.get());
  EXPECT_STREQ(PQgetvalue(result.get(), 0, 0), "42");

  const std::string wrong = fmt::format("host={} port={} dbname={} user={} password=wrong connect_timeout=10", pg.host,
                                        pg.port, pg.database, pg.user);
  std::unique_ptr<PGconn, decltype(&PQfinish)> rejected(PQconnectdb(wrong.c_str()), &PQfinish);
  EXPECT_NE(PQstatus(rejected.get()), CONNECTION_OK) << "scram-sha-256 auth must reject a wrong password";
}

// The binary runs the stack's script without the source tree: from another directory, with
// BINBERG_HOME pointing nowhere, `binberg services status` reports the running stack.
TEST(StackTest, TheBinaryManagesTheStackWithoutTheSourceTree) {
  const std::string out = testing::run_command(
      fmt::format("cd / && env -u BINBERG_SERVICES_DIR BINBERG_HOME=/nonexistent {} services status --dir {}",
                  BINBERG_CLI, testing::stack().dir));
  for (const char* service : {"mariadb", "postgres", "kafka", "registry"}) {
    EXPECT_NE(out.find(fmt::format("{}: running", service)), std::string::npos) << out;
  }
}

// binberg reads the binlog, and so does every replica: the users the stack makes (with their
// passwords) must not be in it.
TEST(StackTest, TheUsersPasswordsAreNotInTheBinlog) {
  const auto& mariadb = testing::stack().mariadb();
  mysql::Connection db = mysql::Connection::open(testing::mariadb_admin_options());
  std::size_t events = 0;
  for (const auto& log : db.query("SHOW BINARY LOGS").rows) {
    for (const auto& event : db.query(fmt::format("SHOW BINLOG EVENTS IN '{}'", db.escape(*log[0]))).rows) {
      const std::string info = event.back().value_or("");
      ++events;
      EXPECT_EQ(info.find(mariadb.password), std::string::npos) << info;
      EXPECT_EQ(info.find(mariadb.replication_password), std::string::npos) << info;
      EXPECT_EQ(info.find("IDENTIFIED"), std::string::npos) << info;
    }
  }
  EXPECT_GT(events, 0u) << "the binlog was read";
}

}  // namespace
}  // namespace binberg::lab
