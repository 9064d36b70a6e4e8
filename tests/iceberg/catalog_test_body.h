#pragma once

// Catalog behaviour every backend must have, shared by the SQLite unit tests and the PostgreSQL
// integration tests. BACKEND has `static CatalogOptions options(const std::filesystem::path& dir)`;
// a test file instantiates the suite with INSTANTIATE_TYPED_TEST_SUITE_P.

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "core/failpoint.h"
#include "iceberg/catalog.h"
#include "iceberg/metadata_file.h"
#include "support/temp_dir.h"

namespace binberg::iceberg {

template <typename Backend>
class CatalogContract : public ::testing::Test {
 protected:
  CatalogOptions options() { return Backend::options(dir_.path()); }

  void SetUp() override {
    catalog_ = open_catalog(options());
    ns_ = "ns_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++);
    catalog_->create_namespace(ns_, {{"owner", "tests"}});
  }
  void TearDown() override { failpoint::disarm_all(); }

  static Schema schema() { return Schema(0, {NestedField{1, "id", true, long_type(), std::nullopt}}, {1}); }

  LoadedTable create(const std::string& name) {
    return catalog_->create_table(TableIdentifier{ns_, name}, schema(), PartitionSpec::unpartitioned(),
                                  SortOrder::unsorted(), {{"k", "v"}});
  }

  // A new metadata file for TABLE (the next version), as a writer would prepare it.
  std::string next_metadata(const LoadedTable& table) {
    TableMetadata next = table.metadata;
    next.record_previous_metadata_file(table.metadata_location, table.metadata.last_updated_ms);
    const auto version = metadata_file_version(table.metadata_location).value_or(0) + 1;
    return write_metadata_file(next, version);  // the file name also holds a fresh UUID
  }

  binberg::testing::TempDir dir_;
  std::unique_ptr<Catalog> catalog_;
  std::string ns_;
  static inline std::atomic<int> counter_{0};
};

TYPED_TEST_SUITE_P(CatalogContract);

TYPED_TEST_P(CatalogContract, NamespacesAndTablesAreCreatedListedAndDropped) {
  EXPECT_THROW(this->catalog_->create_namespace(this->ns_), AlreadyExists);
  EXPECT_EQ(this->catalog_->namespace_properties(this->ns_).at("owner"), "tests");
  const auto namespaces = this->catalog_->list_namespaces();
  EXPECT_NE(std::find(namespaces.begin(), namespaces.end(), this->ns_), namespaces.end());
  const LoadedTable table = this->create("t");
  EXPECT_EQ(table.metadata.properties.at("k"), "v");
  EXPECT_THROW(this->create("t"), AlreadyExists);
  EXPECT_THROW(this->catalog_->create_table(TableIdentifier{this->ns_ + "_missing", "t"}, TestFixture::schema(),
                                            PartitionSpec::unpartitioned(), SortOrder::unsorted(), {}),
               NoSuchNamespace);
  EXPECT_EQ(this->catalog_->load_table(TableIdentifier{this->ns_, "t"}).metadata_location, table.metadata_location);
  EXPECT_EQ(this->catalog_->list_tables(this->ns_), (std::vector<TableIdentifier>{{this->ns_, "t"}}));
  EXPECT_THROW(this->catalog_->drop_namespace(this->ns_), Error) << "a namespace with tables is not dropped";
  this->catalog_->drop_table(TableIdentifier{this->ns_, "t"});
  EXPECT_THROW(this->catalog_->load_table(TableIdentifier{this->ns_, "t"}), NoSuchTable);
  this->catalog_->drop_namespace(this->ns_);
  EXPECT_THROW(this->catalog_->namespace_properties(this->ns_), NoSuchNamespace);
  this->catalog_->create_namespace(this->ns_);
}

TYPED_TEST_P(CatalogContract, CommitSwapsOnlyFromTheExpectedLocation) {
  const LoadedTable table = this->create("cas");
  const std::string first = this->next_metadata(table);
  this->catalog_->commit({TableCommit{table.id, table.metadata_location, first}});
  EXPECT_EQ(this->catalog_->metadata_location(table.id), first);
  const std::string stale = this->next_metadata(table);
  EXPECT_THROW(this->catalog_->commit({TableCommit{table.id, table.metadata_location, stale}}), CommitConflict);
  EXPECT_EQ(this->catalog_->metadata_location(table.id), first) << "a lost compare-and-swap changes nothing";
}

TYPED_TEST_P(CatalogContract, MultiTableCommitIsAllOrNothing) {
  const LoadedTable a = this->create("a");
  const LoadedTable b = this->create("b");
  const std::string b_moved = this->next_metadata(b);
  this->catalog_->commit({TableCommit{b.id, b.metadata_location, b_moved}});
  const std::string a_next = this->next_metadata(a);
  const std::string b_next = this->next_metadata(b);
  EXPECT_THROW(this->catalog_->commit(
                   {TableCommit{a.id, a.metadata_location, a_next}, TableCommit{b.id, b.metadata_location, b_next}}),
               CommitConflict);
  EXPECT_EQ(this->catalog_->metadata_location(a.id), a.metadata_location) << "a moved although b conflicted";
  failpoint::arm("iceberg.catalog.before_commit", failpoint::Trigger{});
  EXPECT_THROW(
      this->catalog_->commit({TableCommit{a.id, a.metadata_location, a_next}, TableCommit{b.id, b_moved, b_next}}),
      failpoint::FailpointError);
  EXPECT_EQ(this->catalog_->metadata_location(a.id), a.metadata_location);
  EXPECT_EQ(this->catalog_->metadata_location(b.id), b_moved);
  failpoint::disarm_all();
  failpoint::arm("iceberg.catalog.after_commit", failpoint::Trigger{});
  EXPECT_THROW(
      this->catalog_->commit({TableCommit{a.id, a.metadata_location, a_next}, TableCommit{b.id, b_moved, b_next}}),
      failpoint::FailpointError);
  EXPECT_EQ(this->catalog_->metadata_location(a.id), a_next) << "committed before the reply was lost";
  EXPECT_EQ(this->catalog_->metadata_location(b.id), b_next);
}

TYPED_TEST_P(CatalogContract, RacingCommitsFromTwoConnectionsLoseNothing) {
  const LoadedTable table = this->create("race");
  std::atomic<int> successes{0};
  const auto writer = [&] {
    auto catalog = open_catalog(this->options());
    for (int i = 0; i < 20; ++i) {
      for (;;) {
        const LoadedTable current = catalog->load_table(table.id);
        try {
          catalog->commit({TableCommit{table.id, current.metadata_location, this->next_metadata(current)}});
          ++successes;
          break;
        } catch (const CommitConflict&) {
        }
      }
    }
  };
  std::thread first(writer), second(writer);
  first.join();
  second.join();
  EXPECT_EQ(successes.load(), 40);
  /* Every success is one link of the metadata log: none overwrote another. */
  EXPECT_EQ(this->catalog_->load_table(table.id).metadata.metadata_log.size(), 40u);
}

// A commit whose COMMIT reached the database but whose answer was lost with the connection: the
// catalog reconnects, finds every table at the commit's new metadata and returns normally. It
// moved once: the same commit again is a conflict.
TYPED_TEST_P(CatalogContract, ACommitWhoseAnswerWasLostIsRecognizedAndNotAppliedTwice) {
  const LoadedTable a = this->create("lost_answer_a"), b = this->create("lost_answer_b");
  const std::vector<TableCommit> commit = {TableCommit{a.id, a.metadata_location, this->next_metadata(a)},
                                           TableCommit{b.id, b.metadata_location, this->next_metadata(b)}};
  failpoint::arm("iceberg.catalog.commit_reply_lost", failpoint::Trigger{failpoint::Action::kError, {}, 1, 1});
  this->catalog_->commit(commit);
  EXPECT_EQ(failpoint::hit_count("iceberg.catalog.commit_reply_lost"), 1u) << "the answer of the COMMIT was lost";
  EXPECT_EQ(this->catalog_->metadata_location(a.id), commit[0].new_metadata_location);
  EXPECT_EQ(this->catalog_->metadata_location(b.id), commit[1].new_metadata_location);
  EXPECT_THROW(this->catalog_->commit(commit), CommitConflict);
}

// A connection lost before the COMMIT (the database rolled the transaction back): the catalog
// reconnects and runs the whole transaction again, which lands once.
TYPED_TEST_P(CatalogContract, ACallWhoseConnectionWasLostIsRunAgain) {
  const LoadedTable table = this->create("lost_connection");
  const std::string next = this->next_metadata(table);
  failpoint::arm("iceberg.catalog.connection_lost", failpoint::Trigger{failpoint::Action::kError, {}, 1, 2});
  this->catalog_->commit({TableCommit{table.id, table.metadata_location, next}});
  EXPECT_EQ(failpoint::hit_count("iceberg.catalog.connection_lost"), 3u) << "two attempts lost, the third ran";
  EXPECT_EQ(this->catalog_->metadata_location(table.id), next);
}

// A connection that stays lost for the whole retry budget ends the call with CatalogUnavailable
// naming the catalog and the call; the same catalog works again once the database is back.
TYPED_TEST_P(CatalogContract, ACatalogLostForItsWholeRetryBudgetIsUnavailableThenAnswersAgain) {
  CatalogOptions options = this->options();
  options.retry_timeout = std::chrono::milliseconds(800);
  const auto catalog = open_catalog(options);
  failpoint::arm("iceberg.catalog.connection_lost", failpoint::Trigger{failpoint::Action::kError});
  try {
    catalog->list_namespaces();
    ADD_FAILURE() << "a catalog that cannot be reached answered";
  } catch (const CatalogUnavailable& error) {
    EXPECT_NE(std::string(error.what()).find("list namespaces: no answer for 800 ms"), std::string::npos)
        << error.what();
  }
  EXPECT_GE(failpoint::hit_count("iceberg.catalog.connection_lost"), 3u) << "retried with backoff";
  failpoint::disarm_all();
  EXPECT_NO_THROW(catalog->list_namespaces());
}

REGISTER_TYPED_TEST_SUITE_P(CatalogContract, NamespacesAndTablesAreCreatedListedAndDropped,
                            CommitSwapsOnlyFromTheExpectedLocation, MultiTableCommitIsAllOrNothing,
                            RacingCommitsFromTwoConnectionsLoseNothing,
                            ACommitWhoseAnswerWasLostIsRecognizedAndNotAppliedTwice,
                            ACallWhoseConnectionWasLostIsRunAgain,
                            ACatalogLostForItsWholeRetryBudgetIsUnavailableThenAnswersAgain);

}  // namespace binberg::iceberg
