#include "lab/endpoints.h"

#include <gtest/gtest.h>

#include <fstream>

#include "core/error.h"
#include "support/temp_dir.h"

namespace binberg::lab {
namespace {

void write(const std::filesystem::path& path, const std::string& text) { std::ofstream(path) << text; }

TEST(EndpointsTest, LoadsEveryService) {
  testing::TempDir dir;
  write(dir.path() / "services.json", R"({"dir": "x",
    "mariadb": {"host": "127.0.0.1", "port": 13406, "database": "binberg", "user": "u", "password": "p",
                "replication_user": "r", "replication_password": "rp"},
    "postgres": {"host": "127.0.0.1", "port": 15532, "database": "postgres", "user": "pu", "password": "pp"},
    "kafka": {"bootstrap_servers": "127.0.0.1:19192"},
    "registry": {"url": "http://127.0.0.1:18181/apis/ccompat/v7"}})");
  Endpoints endpoints = load(dir.path().string());
  EXPECT_EQ(endpoints.mariadb().port, 13406);
  EXPECT_EQ(endpoints.mariadb().replication_password, "rp");
  EXPECT_EQ(endpoints.postgres().user, "pu");
  EXPECT_EQ(endpoints.kafka_bootstrap_servers(), "127.0.0.1:19192");
  EXPECT_EQ(endpoints.registry_url(), "http://127.0.0.1:18181/apis/ccompat/v7");
}

TEST(EndpointsTest, AbsentServiceSaysHowToStartIt) {
  testing::TempDir dir;
  write(dir.path() / "services.json", R"({"kafka": {"bootstrap_servers": "127.0.0.1:1"}})");
  Endpoints endpoints = load(dir.path().string());
  EXPECT_EQ(endpoints.kafka_bootstrap_servers(), "127.0.0.1:1");
  try {
    endpoints.mariadb();
    FAIL() << "no error for an absent service";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'mariadb' is not running"), std::string::npos) << e.what();
  }
}

TEST(EndpointsTest, ErrorsNameFileAndKey) {
  testing::TempDir dir;
  EXPECT_THROW(load(dir.path().string()), Error);
  write(dir.path() / "services.json", "{not json");
  EXPECT_THROW(load(dir.path().string()), Error);
  write(dir.path() / "services.json", R"({"mariadb": {"host": "h"}})");
  try {
    load(dir.path().string());
    FAIL() << "accepted a mariadb entry without port";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("mariadb.port is missing"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace binberg::lab
