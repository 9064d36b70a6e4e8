// The SQL catalog on the stack's PostgreSQL: the same contract as SQLite, plus a wrong password
// being a ConnectionError that does not repeat the password.

#include <gmock/gmock.h>

#include "catalog_test_body.h"
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

}  // namespace
}  // namespace binberg::iceberg
