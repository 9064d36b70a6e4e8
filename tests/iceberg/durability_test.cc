// The durability rule of iceberg/detail/durable_file.h, on real commits: table_tool creates a
// partitioned table, commits batches that spill and delete, and compacts, all under strace. The
// trace is replayed into a model of names, files and directories, and for every catalog
// transaction it must show that each file the metadata it publishes references (the metadata
// file, the manifest list, the manifests, the data and delete files) had its contents and its
// directory entry fsynced, and each directory created on the way to it its entry in its parent,
// before the transaction wrote anything to the catalog. The SQLite catalog's own commit must be
// durable as well: journal and database fsynced, and the journal's removal (the commit point in
// rollback-journal mode) made durable by an fsync of its directory.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "iceberg/detail/table_files.h"
#include "iceberg/metadata_file.h"
#include "support/temp_dir.h"
#include "support/test_services.h"
#include "table_test_support.h"

namespace binberg::iceberg {
namespace {

// The file-system history of a process tree traced by `strace -f -y`: the names files got and
// when, each file's last write and fsync, the fsyncs of directories, the directories made, and the
// calls that wrote the catalog's files. Positions are the trace's line numbers: the order in which
// the calls completed.
class FileSystemTrace {
 public:
  // The system calls the model needs, for strace -e trace=.
  static constexpr const char* kSyscalls =
      "open,openat,creat,write,pwrite64,writev,pwritev,fsync,fdatasync,rename,renameat,renameat2,link,linkat,"
      "unlink,unlinkat,mkdir,mkdirat";

  FileSystemTrace(const std::string& text, std::string catalog_path) : catalog_path_(std::move(catalog_path)) {
    std::map<std::string, std::string> unfinished;  // by pid
    std::istringstream in(text);
    std::string line;
    for (std::size_t at = 1; std::getline(in, line); ++at) {
      std::string pid;
      if (!line.empty() && std::isdigit(static_cast<unsigned char>(line[0]))) {
        pid = line.substr(0, line.find(' '));
        line.erase(0, line.find_first_not_of(' ', pid.size()));
      }
      if (line.starts_with("+++") || line.starts_with("---")) continue;
      if (constexpr std::string_view kUnfinished = " <unfinished ...>"; line.ends_with(kUnfinished)) {
        unfinished[pid] = line.substr(0, line.size() - kUnfinished.size());
        continue;
      }
      if (line.starts_with("<... ")) {
        line = unfinished[pid] + line.substr(line.find(" resumed>") + 9);
        unfinished.erase(pid);
      }
      apply(line, at);
    }
  }

  struct File {
    std::optional<std::size_t> named_at;  // when the name it has now was given to it
    std::optional<std::size_t> last_write;
    std::optional<std::size_t> last_sync;
  };

  // The file PATH names at the end of the trace; nullopt if it was not created while traced.
  std::optional<File> file(const std::string& path) const {
    const auto it = names_.find(path);
    if (it == names_.end() || !it->second.named_at) return std::nullopt;
    File file = files_[it->second.file];
    file.named_at = it->second.named_at;
    return file;
  }
  std::optional<std::size_t> made_directory_at(const std::string& path) const {
    const auto it = made_directories_.find(path);
    return it == made_directories_.end() ? std::nullopt : std::optional(it->second);
  }
  bool synced_between(const std::string& path, std::size_t after, std::size_t before) const {
    const auto it = syncs_.find(path);
    if (it == syncs_.end()) return false;
    const auto first = it->second.upper_bound(after);
    return first != it->second.end() && *first < before;
  }
  // The first write to the catalog's files (database, journal, WAL) after AFTER.
  std::optional<std::size_t> catalog_write_after(std::size_t after) const {
    const auto it = catalog_writes_.upper_bound(after);
    return it == catalog_writes_.end() ? std::nullopt : std::optional(*it);
  }
  // Each rollback-journal transaction of the catalog: the journal's creation and its removal.
  const std::vector<std::pair<std::size_t, std::size_t>>& catalog_transactions() const { return transactions_; }
  // Every name created while traced.
  std::vector<std::string> created_names() const {
    std::vector<std::string> created;
    for (const auto& [name, entry] : names_) {
      if (entry.named_at) created.push_back(name);
    }
    return created;
  }

 private:
  struct Name {
    std::size_t file = 0;
    std::optional<std::size_t> named_at;  // nullopt: the file existed before the trace began
  };

  // "<path>" annotations strace -y adds to descriptors, in order.
  static std::vector<std::string> annotated_paths(std::string_view text) {
    std::vector<std::string> paths;
    for (std::size_t open = text.find('<'); open != std::string_view::npos; open = text.find('<', open + 1)) {
      if (open == 0 || !std::isalnum(static_cast<unsigned char>(text[open - 1])) || text[open + 1] != '/') continue;
      paths.emplace_back(text.substr(open + 1, text.find('>', open) - open - 1));
    }
    return paths;
  }
  static std::vector<std::string> quoted(std::string_view text) {
    std::vector<std::string> strings;
    for (std::size_t open = text.find('"'); open != std::string_view::npos;) {
      const std::size_t close = text.find('"', open + 1);
      strings.emplace_back(text.substr(open + 1, close - open - 1));
      open = text.find('"', close + 1);
    }
    for (const std::string& path : strings) {
      if (!path.starts_with('/')) fail("trace: a relative path {} the model cannot place", path);
    }
    return strings;
  }

  Name& name(const std::string& path) {
    auto [it, added] = names_.try_emplace(path);
    if (added) {
      it->second.file = files_.size();
      files_.emplace_back();
    }
    return it->second;
  }

  bool is_catalog(const std::string& path) const { return path.starts_with(catalog_path_); }

  void apply(const std::string& call, std::size_t at) {
    // NAME(ARGUMENTS) = RESULT, with spaces before '=' that strace adds to align short lines.
    const std::size_t paren = call.find('(');
    const std::size_t result = call.rfind(" = ");
    const std::size_t close = call.find_last_not_of(' ', result);
    if (paren == std::string::npos || result == std::string::npos || call[close] != ')' ||
        call.compare(result + 3, 2, "-1") == 0) {
      return;
    }
    const std::string syscall = call.substr(0, paren);
    const std::string_view arguments = std::string_view(call).substr(paren + 1, close - paren - 1);
    if (syscall == "open" || syscall == "openat" || syscall == "creat") {
      const auto opened = annotated_paths(std::string_view(call).substr(result));
      if (opened.empty() || (syscall != "creat" && arguments.find("O_CREAT") == std::string_view::npos)) return;
      Name& created = name(opened[0]);
      if (!created.named_at) created.named_at = at;
      if (opened[0] == catalog_path_ + "-journal" || opened[0] == catalog_path_ + "-wal") {
        catalog_writes_.insert(at);
        if (opened[0].ends_with("-journal")) transactions_.emplace_back(at, 0);
      }
    } else if (syscall.starts_with("write") || syscall.starts_with("pwrite")) {
      const auto paths = annotated_paths(arguments);  // none for pipes and sockets
      if (paths.empty()) return;
      files_[name(paths[0]).file].last_write = at;
      if (is_catalog(paths[0])) catalog_writes_.insert(at);
    } else if (syscall == "fsync" || syscall == "fdatasync") {
      const auto paths = annotated_paths(arguments);
      if (paths.empty()) return;
      files_[name(paths[0]).file].last_sync = at;
      syncs_[paths[0]].insert(at);
    } else if (syscall.starts_with("rename") || syscall.starts_with("link")) {
      const auto paths = quoted(arguments);
      const std::size_t file = name(paths.at(0)).file;
      names_[paths.at(1)] = Name{file, at};
      if (syscall.starts_with("rename")) names_.erase(paths.at(0));
    } else if (syscall.starts_with("unlink")) {
      const std::string path = quoted(arguments).at(0);
      names_.erase(path);
      if (path == catalog_path_ + "-journal" && !transactions_.empty()) {
        transactions_.back().second = at;
        catalog_writes_.insert(at);
      }
    } else if (syscall.starts_with("mkdir")) {
      made_directories_.emplace(quoted(arguments).at(0), at);
    }
  }

  std::string catalog_path_;
  std::map<std::string, Name> names_;
  std::vector<File> files_;
  std::map<std::string, std::set<std::size_t>> syncs_;
  std::map<std::string, std::size_t> made_directories_;
  std::set<std::size_t> catalog_writes_;
  std::vector<std::pair<std::size_t, std::size_t>> transactions_;
};

std::string kind_of(const std::string& path) {
  if (path.ends_with(".metadata.json")) return "metadata file";
  if (path.ends_with("-deletes.parquet")) return "position delete file";
  if (path.ends_with(".parquet")) return "data file";
  if (std::filesystem::path(path).filename().string().starts_with("snap-")) return "manifest list";
  return "manifest";
}

// What was not durable when the catalog transaction at position COMMIT, which published
// METADATA_PATH, began: each problem names the file or directory. Adds the kinds of files and the
// new directories it checked to CHECKED.
std::vector<std::string> not_durable_before(const FileSystemTrace& trace, const std::string& metadata_path,
                                            std::size_t commit, std::set<std::string>& checked) {
  const TableMetadata metadata = read_metadata_file(metadata_path);
  std::set<std::string> referenced{metadata_path};
  if (const Snapshot* snapshot = metadata.current_snapshot()) {
    for (const std::string& location : files_of_snapshots({snapshot}, EntryFilter::kLive)) {
      referenced.insert(local_path(location).string());
    }
  }
  std::vector<std::string> problems;
  std::map<std::filesystem::path, std::size_t> new_directories;  // and when each was made
  for (const std::string& path : referenced) {
    const std::string kind = kind_of(path);
    checked.insert(kind);
    const auto file = trace.file(path);
    if (!file) {
      problems.push_back(fmt::format("{} {}: not created by the traced process", kind, path));
      continue;
    }
    if (!file->last_sync || *file->last_sync >= commit || (file->last_write && *file->last_sync < *file->last_write)) {
      problems.push_back(fmt::format("{} {}: contents not fsynced after their last write", kind, path));
    }
    const std::filesystem::path directory = std::filesystem::path(path).parent_path();
    if (!trace.synced_between(directory, *file->named_at, commit)) {
      problems.push_back(
          fmt::format("{} {}: its entry (line {}) not fsynced in its directory", kind, path, *file->named_at));
    }
    for (std::filesystem::path at = directory; at != at.parent_path(); at = at.parent_path()) {
      if (const auto made = trace.made_directory_at(at)) new_directories.emplace(at, *made);
    }
  }
  for (const auto& [directory, made] : new_directories) {
    checked.insert("new directory " + directory.string());
    if (!trace.synced_between(directory.parent_path(), made, commit)) {
      problems.push_back(
          fmt::format("new directory {}: its entry (line {}) not fsynced in its parent", directory.string(), made));
    }
  }
  return problems;
}

class DurabilityTest : public ::testing::Test {
 protected:
  // One traced run for the suite (strace and ASan make it slow); each test fails if it failed.
  static void SetUpTestSuite() {
    dir_ = new binberg::testing::TempDir();
    try {
      const CatalogOptions options = test_tables::sqlite_catalog_options(dir_->path().string());
      open_catalog(options)->create_namespace("db");
      catalog_path_ = options.uri.substr(std::string_view("sqlite:///").size());
      const std::string trace_path = (dir_->path() / "strace.txt").string();
      // 3 batches of 300 changes over 400 keys: updates and deletes of committed rows (position
      // deletes); a 64 KiB buffer spills each batch to data files before its commit; 4 partitions.
      // LeakSanitizer cannot run under ptrace: the sanitizer build's tool runs without it here.
      binberg::testing::run_command(fmt::format(
          "ASAN_OPTIONS=detect_leaks=0 strace -f -y -qq -s 0 -o '{}' -e trace={} '{}' --uri '{}' --warehouse '{}' "
          "--table t --create bucketed "
          "--seed 7 --key-space 400 --changes 300 --batches 3 --max-buffered-bytes 65536 --maintenance compact "
          "2>&1 >/dev/null",
          trace_path, FileSystemTrace::kSyscalls, BINBERG_TABLE_TOOL, options.uri, options.warehouse));
      trace_ = new FileSystemTrace(read_file(trace_path), catalog_path_);
    } catch (const std::exception& error) {
      setup_error_ = fmt::format("the traced commits failed (strace is in deps/apt-packages.txt): {}", error.what());
    }
  }
  static void TearDownTestSuite() {
    delete trace_;
    delete dir_;
  }
  void SetUp() override { ASSERT_NE(trace_, nullptr) << setup_error_; }

  static inline binberg::testing::TempDir* dir_ = nullptr;
  static inline std::string setup_error_;
  static inline std::string catalog_path_;
  static inline FileSystemTrace* trace_ = nullptr;
};

TEST_F(DurabilityTest, EveryFileACommitReferencesAndItsDirectoryEntriesAreSyncedBeforeTheCatalogTransaction) {
  std::string report;
  std::size_t problems = 0;
  std::set<std::string> checked;
  int commits = 0;
  for (const std::string& name : trace_->created_names()) {
    if (!name.ends_with(".metadata.json")) continue;
    const auto commit = trace_->catalog_write_after(*trace_->file(name)->named_at);
    ASSERT_TRUE(commit) << "no catalog transaction after " << name << " was written";
    ++commits;
    const auto found = not_durable_before(*trace_, name, *commit, checked);
    if (found.empty()) continue;
    problems += found.size();
    report += fmt::format("the catalog transaction at trace line {} publishing {}:\n", *commit, name);
    for (const std::string& problem : found) report += "  " + problem + "\n";
  }
  // Creation, 3 batches, compaction: each kind of file and each new directory was checked.
  EXPECT_EQ(commits, 5);
  for (const char* kind : {"metadata file", "manifest list", "manifest", "data file", "position delete file"}) {
    EXPECT_TRUE(checked.contains(kind)) << "no " << kind << " was checked";
  }
  const std::string table = (dir_->path() / "warehouse" / "db.db" / "t").string();
  for (const std::string& directory : {table, table + "/metadata", table + "/data", table + "/data/id_bucket=0"}) {
    EXPECT_TRUE(checked.contains("new directory " + directory)) << directory << " was not checked";
  }
  EXPECT_EQ(problems, 0u) << "not durable before the catalog transaction that published it:\n" << report;
}

TEST_F(DurabilityTest, TheSqliteCatalogTransactionIsDurableWhenItCommits) {
  const std::string journal = catalog_path_ + "-journal";
  const std::string directory = std::filesystem::path(catalog_path_).parent_path().string();
  const auto& transactions = trace_->catalog_transactions();
  ASSERT_EQ(transactions.size(), 5u) << "one rollback-journal transaction per commit";
  for (std::size_t i = 0; i < transactions.size(); ++i) {
    const auto [begun, removed] = transactions[i];
    ASSERT_NE(removed, 0u) << "the journal of the transaction at line " << begun << " was never removed";
    EXPECT_TRUE(trace_->synced_between(journal, begun, removed)) << "journal not fsynced, line " << begun;
    EXPECT_TRUE(trace_->synced_between(catalog_path_, begun, removed)) << "catalog not fsynced, line " << begun;
    const std::size_t next = i + 1 < transactions.size() ? transactions[i + 1].first : SIZE_MAX;
    EXPECT_TRUE(trace_->synced_between(directory, removed, next))
        << "the journal's removal at line " << removed << " (the commit point) was not made durable";
  }
}

}  // namespace
}  // namespace binberg::iceberg
