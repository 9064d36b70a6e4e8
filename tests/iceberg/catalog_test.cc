// The SQL catalog on SQLite: the shared contract, the file's permissions, bad URIs, durable
// commits, and pyiceberg opening the same catalog file in both directions. And the durability
// settings each catalog database must report (sql_connection.h).

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <sys/stat.h>

#include <fstream>

#include "catalog_test_body.h"
#include "iceberg/sql_connection.h"
#include "support/temp_dir.h"
#include "support/test_services.h"

namespace binberg::iceberg {
namespace {

struct Sqlite {
  static CatalogOptions options(const std::filesystem::path& dir) {
    CatalogOptions options;
    options.uri = "sqlite:///" + dir.string() + "/catalog.db";
    options.warehouse = dir.string() + "/warehouse";
    return options;
  }
};

INSTANTIATE_TYPED_TEST_SUITE_P(Sqlite, CatalogContract, ::testing::Types<Sqlite>);

using SqliteCatalogTest = CatalogContract<Sqlite>;

TEST_F(SqliteCatalogTest, CatalogFileIsPrivateToItsOwner) {
  struct stat info {};
  ASSERT_EQ(::stat((dir_.path() / "catalog.db").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 077, 0u);
}

TEST_F(SqliteCatalogTest, SessionsSyncTheJournalsRemovalAndKeepARollbackJournal) {
  auto db = open_sqlite(options().uri, CatalogDurability::kRequired);
  EXPECT_EQ(db->query("PRAGMA synchronous").at(0).at(0), std::optional<std::string>("3")) << "EXTRA";
  EXPECT_EQ(db->query("PRAGMA journal_mode").at(0).at(0), std::optional<std::string>("delete"));
}

TEST(CatalogDurabilityTest, SqliteNeedsAJournalAndSynchronousExtraOrFullInWalMode) {
  EXPECT_TRUE(sqlite_durability_problems("delete", "3").empty());
  EXPECT_TRUE(sqlite_durability_problems("WAL", "2").empty());
  EXPECT_TRUE(sqlite_durability_problems("wal", "3").empty());
  EXPECT_THAT(sqlite_durability_problems("delete", "2"),
              ::testing::ElementsAre(::testing::HasSubstr("synchronous is 2 (journal mode delete needs 3, EXTRA")));
  EXPECT_THAT(sqlite_durability_problems("wal", "1"), ::testing::ElementsAre(::testing::HasSubstr("synchronous is 1")));
  EXPECT_THAT(sqlite_durability_problems("memory", "3"),
              ::testing::ElementsAre(::testing::HasSubstr("journal_mode is memory")));
  EXPECT_EQ(sqlite_durability_problems("off", "0").size(), 2u);
}

TEST(CatalogDurabilityTest, PostgresNeedsFsyncFullPageWritesAndACommitFlushedBeforeItIsAcknowledged) {
  const std::map<std::string, std::string> durable = {
      {"fsync", "on"}, {"full_page_writes", "on"}, {"synchronous_commit", "local"}};
  EXPECT_TRUE(postgres_durability_problems(durable).empty());
  auto settings = durable;
  settings["fsync"] = "off";
  EXPECT_THAT(postgres_durability_problems(settings),
              ::testing::ElementsAre(::testing::AllOf(::testing::HasSubstr("fsync = off"),
                                                      ::testing::HasSubstr("ALTER SYSTEM SET fsync = on"))));
  settings = durable;
  settings["full_page_writes"] = "off";
  EXPECT_THAT(postgres_durability_problems(settings),
              ::testing::ElementsAre(::testing::HasSubstr("full_page_writes = off")));
  settings = durable;
  settings["synchronous_commit"] = "off";
  EXPECT_THAT(postgres_durability_problems(settings),
              ::testing::ElementsAre(::testing::HasSubstr("synchronous_commit is off")));
  EXPECT_EQ(postgres_durability_problems({}).size(), 3u) << "a setting not reported is not assumed durable";
}

TEST(CatalogDurabilityTest, ANonDurableCatalogIsAConfigErrorUnlessAllowed) {
  EXPECT_NO_THROW(require_durable("sqlite:////x.db", {}, CatalogDurability::kRequired));
  EXPECT_THAT(
      [] {
        require_durable("postgresql://h:1/db", {"fsync = off", "x"}, CatalogDurability::kRequired);
      },
      ::testing::ThrowsMessage<ConfigError>(::testing::AllOf(
          ::testing::HasSubstr("catalog postgresql://h:1/db would not keep its commits durable: fsync = off; x"),
          ::testing::HasSubstr("[iceberg] allow_non_durable_catalog = true"))));
  EXPECT_NO_THROW(require_durable("postgresql://h:1/db", {"fsync = off"}, CatalogDurability::kNotRequired));
}

TEST(SqliteCatalogUriTest, BadUrisAreConfigErrorsNamingTheUri) {
  CatalogOptions options;
  options.uri = "sqlite://relative.db";
  EXPECT_THAT([&] { open_catalog(options); },
              ::testing::ThrowsMessage<ConfigError>(::testing::HasSubstr("four slashes")));
  options.uri = "mysql://x";
  EXPECT_THAT([&] { open_catalog(options); }, ::testing::ThrowsMessage<ConfigError>(::testing::HasSubstr("mysql://x")));
  options.uri = "redis://user:secret@h";
  EXPECT_THAT([&] { open_catalog(options); },
              ::testing::ThrowsMessage<ConfigError>(::testing::Not(::testing::HasSubstr("secret"))));
}

// A catalog written with the JDBC V0 schema (no iceberg_type) is upgraded in place: its tables
// stay loadable, and tables created after the upgrade are marked 'TABLE'.
TEST(SqliteCatalogUpgradeTest, V0CatalogGetsTheIcebergTypeColumn) {
  binberg::testing::TempDir dir;
  const CatalogOptions options = Sqlite::options(dir.path());
  {
    auto db = open_sqlite(options.uri, CatalogDurability::kRequired);
    db->execute(
        "CREATE TABLE iceberg_tables (catalog_name VARCHAR(255) NOT NULL, table_namespace VARCHAR(255) NOT NULL, "
        "table_name VARCHAR(255) NOT NULL, metadata_location VARCHAR(1000), previous_metadata_location "
        "VARCHAR(1000), PRIMARY KEY (catalog_name, table_namespace, table_name))");
  }
  const Schema schema(0, {NestedField{1, "id", true, long_type(), std::nullopt}});
  {
    auto catalog = open_catalog(options);
    catalog->create_namespace("ns", {});
    catalog->create_table(TableIdentifier{"ns", "t"}, schema, PartitionSpec::unpartitioned(), SortOrder::unsorted(),
                          {});
  }
  auto db = open_sqlite(options.uri, CatalogDurability::kRequired);
  const auto rows = db->query("SELECT iceberg_type FROM iceberg_tables WHERE table_name = 't'");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0], std::optional<std::string>("TABLE"));
  db->execute("UPDATE iceberg_tables SET iceberg_type = NULL");  // as a V0 writer leaves it
  EXPECT_NO_THROW(open_catalog(options)->load_table(TableIdentifier{"ns", "t"}));
  db->execute("UPDATE iceberg_tables SET iceberg_type = 'VIEW'");
  EXPECT_THROW(open_catalog(options)->load_table(TableIdentifier{"ns", "t"}), NoSuchTable) << "a view is no table";
}

TEST_F(SqliteCatalogTest, PyicebergSharesTheCatalogBothWays) {
  const LoadedTable ours = create("from_binberg");
  const std::string script = fmt::format(R"(
import sys
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.schema import Schema
from pyiceberg.types import NestedField, LongType
catalog = SqlCatalog("binberg", uri=sys.argv[1], warehouse=sys.argv[2])
ns = sys.argv[3]
print(catalog.load_table(ns + ".from_binberg").metadata_location)
catalog.create_table(ns + ".from_pyiceberg", Schema(NestedField(1, "id", LongType(), required=True)))
print(catalog.load_table(ns + ".from_pyiceberg").metadata_location)
)");
  const std::string script_path = (dir_.path() / "shared.py").string();
  std::ofstream(script_path) << script;
  const std::string output = binberg::testing::run_command(fmt::format(
      "'{}' '{}' '{}' '{}' '{}' 2>/dev/null", BINBERG_PYTHON, script_path, options().uri, options().warehouse, ns_));
  const auto newline = output.find('\n');
  ASSERT_NE(newline, std::string::npos) << output;
  EXPECT_EQ(output.substr(0, newline), ours.metadata_location) << "pyiceberg sees binberg's table";
  const std::string theirs = output.substr(newline + 1, output.find('\n', newline + 1) - newline - 1);
  const LoadedTable loaded = catalog_->load_table(TableIdentifier{ns_, "from_pyiceberg"});
  EXPECT_EQ(loaded.metadata_location, theirs) << "binberg sees pyiceberg's table";
  // And binberg's commit to pyiceberg's table is what pyiceberg then loads.
  const std::string next = next_metadata(loaded);
  catalog_->commit({TableCommit{loaded.id, loaded.metadata_location, next}});
  const std::string reload = binberg::testing::run_command(
      fmt::format("'{}' -c \"from pyiceberg.catalog.sql import SqlCatalog; print(SqlCatalog('binberg', uri='{}', "
                  "warehouse='{}').load_table('{}.from_pyiceberg').metadata_location)\" 2>/dev/null",
                  BINBERG_PYTHON, options().uri, options().warehouse, ns_));
  EXPECT_EQ(reload.substr(0, reload.find('\n')), next);
}

}  // namespace
}  // namespace binberg::iceberg
