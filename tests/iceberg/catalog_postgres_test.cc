// The SQL catalog on the stack's PostgreSQL: the same contract as SQLite, a wrong password being a
// ConnectionError that does not repeat the password, and the durability a catalog relies on: a
// session asking for asynchronous commits gets synchronous ones, and a server running with
// fsync = off is refused unless the operator allowed it.

#include <gmock/gmock.h>

#include <chrono>
#include <thread>

#include "catalog_test_body.h"
#include "iceberg/metadata_file.h"
#include "iceberg/sql_connection.h"
#include "support/temp_dir.h"
#include "support/test_services.h"

namespace binberg::iceberg {
namespace {

CatalogOptions postgres_options(const std::string& warehouse) {
  CatalogOptions options;
  options.uri = binberg::testing::postgres_catalog_uri();
  options.password = binberg::testing::postgres_catalog_password();
  options.warehouse = warehouse;
  return options;
}

struct Postgres {
  static CatalogOptions options(const std::filesystem::path& dir) {
    return postgres_options(dir.string() + "/warehouse");
  }
};

INSTANTIATE_TYPED_TEST_SUITE_P(Postgres, CatalogContract, ::testing::Types<Postgres>);

TEST(PostgresCatalogConnectionTest, UnreachableOrRefusedIsAConnectionErrorWithoutThePassword) {
  CatalogOptions options = postgres_options("/tmp/unused");
  options.password = "not-the-password-xyzzy";
  try {
    open_catalog(options);
    // Trust authentication on loopback accepts any password; then the port check below still runs.
  } catch (const ConnectionError& error) {
    EXPECT_THAT(error.what(), ::testing::Not(::testing::HasSubstr("xyzzy")));
  }
  options.uri = "postgresql://nobody@127.0.0.1:1/none";
  EXPECT_THAT([&] { open_catalog(options); },
              ::testing::ThrowsMessage<ConnectionError>(
                  ::testing::AllOf(::testing::HasSubstr("127.0.0.1"), ::testing::Not(::testing::HasSubstr("xyzzy")))));
}

TEST(PostgresCatalogDurabilityTest, ASessionAskingForAsynchronousCommitsGetsSynchronousOnes) {
  CatalogOptions options = postgres_options("/tmp/unused");
  options.connection_properties["options"] = "-c client_min_messages=warning -c synchronous_commit=off";
  const auto db = open_postgres(options);
  EXPECT_EQ(db->query("SHOW synchronous_commit").at(0).at(0), std::optional<std::string>("on"));
}

// The stack's server with fsync set by ALTER SYSTEM and a reload, until destroyed (which resets it).
class ServerFsync {
 public:
  explicit ServerFsync(const std::string& value) { set("ALTER SYSTEM SET fsync = " + value, value); }
  ~ServerFsync() { set("ALTER SYSTEM RESET fsync", "on"); }
  ServerFsync(const ServerFsync&) = delete;
  ServerFsync& operator=(const ServerFsync&) = delete;

 private:
  static void set(const std::string& statement, const std::string& expected) {
    CatalogOptions options = postgres_options("/tmp/unused");
    options.durability = CatalogDurability::kNotRequired;  // whatever the server runs with now
    open_postgres(options)->execute(statement);
    open_postgres(options)->query("SELECT pg_reload_conf()");
    // The postmaster rereads its configuration asynchronously; new sessions then report the value.
    for (int attempt = 0; attempt < 600; ++attempt) {
      if (open_postgres(options)->query("SHOW fsync").at(0).at(0) == expected) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    throw Error("the stack's PostgreSQL never reported fsync = " + expected + " after " + statement +
                " (a -c fsync on its command line overrides ALTER SYSTEM: restart it with scripts/services)");
  }
};

TEST(PostgresCatalogDurabilityTest, AServerWithFsyncOffIsRefusedUnlessAllowed) {
  CatalogOptions options = postgres_options("/tmp/unused");
  ASSERT_NO_THROW(open_catalog(options)) << "the stack's server keeps commits durable";
  const ServerFsync off("off");
  EXPECT_THAT([&] { open_catalog(options); },
              ::testing::ThrowsMessage<ConfigError>(::testing::AllOf(
                  ::testing::HasSubstr("would not keep its commits durable: the server runs with fsync = off"),
                  ::testing::HasSubstr("ALTER SYSTEM SET fsync = on"),
                  ::testing::HasSubstr("[iceberg] allow_non_durable_catalog = true"))));
  options.durability = CatalogDurability::kNotRequired;
  EXPECT_NO_THROW(open_catalog(options)->list_namespaces());
}

// A catalog on the stack's PostgreSQL with a namespace of its own and one table, "t", in it.
class PostgresCatalogOutageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    catalog_ = open_catalog(postgres_options((dir_.path() / "warehouse").string()));
    ns_ = binberg::testing::unique_name("outage");
    catalog_->create_namespace(ns_);
    table_ = catalog_->create_table(TableIdentifier{ns_, "t"},
                                    Schema(0, {NestedField{1, "id", true, long_type(), std::nullopt}}, {1}),
                                    PartitionSpec::unpartitioned(), SortOrder::unsorted(), {});
  }

  // A commit of the table to a new metadata file, as a writer would make it; returns its location.
  std::string commit_next() {
    TableMetadata next = table_.metadata;
    next.record_previous_metadata_file(table_.metadata_location, table_.metadata.last_updated_ms);
    const std::string location =
        write_metadata_file(next, metadata_file_version(table_.metadata_location).value_or(0) + 1);
    catalog_->commit({TableCommit{table_.id, table_.metadata_location, location}});
    table_ = LoadedTable{table_.id, location, next};
    return location;
  }

  binberg::testing::TempDir dir_;
  std::unique_ptr<Catalog> catalog_;
  std::string ns_;
  LoadedTable table_;
};

// An administrator terminates the catalog's backend (pg_terminate_backend): the next calls find
// the connection gone, reconnect and succeed, a commit among them, which lands once.
TEST_F(PostgresCatalogOutageTest, ATerminatedBackendIsReconnectedAndTheNextCallsSucceed) {
  commit_next();
  ASSERT_GE(binberg::testing::terminate_postgres_backends(), 1) << "the catalog's backend was terminated";
  EXPECT_EQ(catalog_->metadata_location(table_.id), table_.metadata_location);
  ASSERT_GE(binberg::testing::terminate_postgres_backends(), 1);
  const std::string committed = commit_next();
  EXPECT_EQ(catalog_->load_table(table_.id).metadata_location, committed);
  EXPECT_EQ(catalog_->list_tables(ns_), (std::vector<TableIdentifier>{table_.id}));
}

// The whole server SIGKILLed and started again 3 s later: calls made meanwhile wait for it
// (reconnecting with backoff) and succeed once it is back.
TEST_F(PostgresCatalogOutageTest, ACatalogOutlivesARestartOfTheServer) {
  commit_next();
  binberg::testing::kill_service("postgres");
  std::thread restart([] {
    std::this_thread::sleep_for(std::chrono::seconds(3));
    binberg::testing::start_service("postgres");
  });
  std::string committed;
  EXPECT_NO_THROW(committed = commit_next());
  restart.join();
  EXPECT_EQ(catalog_->metadata_location(table_.id), committed);
  EXPECT_EQ(catalog_->list_tables(ns_), (std::vector<TableIdentifier>{table_.id}));
}

}  // namespace
}  // namespace binberg::iceberg
