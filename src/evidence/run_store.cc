#include "evidence/run_store.h"

#include <fcntl.h>
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include "core/assert.h"
#include "core/canonical.h"
#include "core/error.h"

namespace binberg::evidence {
namespace {

using nlohmann::json;

// Writes TEXT to PATH, which must not exist yet, and syncs it: evidence is never overwritten.
void write_new_file(const std::filesystem::path& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) fail("cannot create {}: {}", path.string(), std::strerror(errno));
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      const int saved = errno;
      ::close(fd);
      fail("cannot write {}: {}", path.string(), std::strerror(saved));
    }
    done += static_cast<std::size_t>(n);
  }
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  if (!synced) fail("cannot sync {}: {}", path.string(), std::strerror(errno));
}

std::string read_all(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot read {}", path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::string new_run_id() {
  const auto now = std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now());
  std::random_device random;
  return fmt::format("{:%Y%m%dT%H%M%SZ}-{:08x}", now, random());
}

RunStore RunStore::create(const std::filesystem::path& runs) {
  std::filesystem::create_directories(runs);
  for (int attempt = 0; attempt < 10; ++attempt) {
    std::string id = new_run_id();
    std::error_code error;
    if (std::filesystem::create_directory(runs / id, error)) return RunStore(id, runs / id);
    if (error) fail("cannot create the run folder {}: {}", (runs / id).string(), error.message());
  }
  fail("cannot find a new run id under {}", runs.string());
}

std::filesystem::path RunStore::logs_dir(const std::string& drill) const {
  std::filesystem::path dir = run_dir_ / drill / "logs";
  std::filesystem::create_directories(dir);
  return dir;
}

std::filesystem::path RunStore::write(const RunRecord& record) {
  BINBERG_ASSERT(!sealed_, "record of {} written after run {} was sealed", record.drill, run_id_);
  BINBERG_ASSERT(record.run_id == run_id_, "record of run {} written to run {}", record.run_id, run_id_);
  const std::string text = record.to_json().dump(1) + "\n";
  const std::string name = record.drill + ".json";
  const std::filesystem::path path = run_dir_ / name;
  write_new_file(path, text);
  written_.emplace_back(name, sha256_hex(text));
  return path;
}

std::filesystem::path RunStore::seal() {
  BINBERG_ASSERT(!sealed_, "run {} sealed twice", run_id_);
  json records = json::array();
  for (const auto& [file, sha256] : written_) records.push_back({{"file", file}, {"sha256", sha256}});
  const json manifest = {{"schema", "binberg.drill-manifest/1"}, {"run_id", run_id_}, {"records", records}};
  const std::filesystem::path path = run_dir_ / "manifest.json";
  write_new_file(path, manifest.dump(1) + "\n");
  sealed_ = true;
  return path;
}

std::vector<StoredRun> load_runs(const std::filesystem::path& runs) {
  if (!std::filesystem::is_directory(runs)) fail("{}: no such runs folder", runs.string());
  std::vector<std::filesystem::path> dirs;
  for (const auto& entry : std::filesystem::directory_iterator(runs)) {
    if (entry.is_directory() && std::filesystem::exists(entry.path() / "manifest.json")) dirs.push_back(entry.path());
  }
  std::sort(dirs.begin(), dirs.end());  // run ids begin with their UTC time
  std::vector<StoredRun> loaded;
  for (const auto& dir : dirs) {
    const std::filesystem::path manifest_path = dir / "manifest.json";
    json manifest;
    try {
      manifest = json::parse(read_all(manifest_path));
    } catch (const json::exception& error) {
      fail("{}: not JSON: {}", manifest_path.string(), error.what());
    }
    StoredRun run{dir.filename().string(), dir, {}};
    for (const json& entry : manifest.at("records")) {
      const std::filesystem::path file = dir / entry.at("file").get<std::string>();
      if (!std::filesystem::exists(file)) fail("{}: lists {}, which is missing", manifest_path.string(), file.string());
      const std::string text = read_all(file);
      const std::string sha256 = sha256_hex(text);
      if (sha256 != entry.at("sha256").get<std::string>()) {
        fail("{}: SHA-256 {} differs from {} in {}: the record was changed after it was written", file.string(), sha256,
             entry.at("sha256").get<std::string>(), manifest_path.string());
      }
      json record;
      try {
        record = json::parse(text);
      } catch (const json::exception& error) {
        fail("{}: not JSON: {}", file.string(), error.what());
      }
      const std::vector<std::string> problems = run_record_schema().validate(record);
      if (!problems.empty()) {
        fail("{}: not a valid run record (docs/run-record.schema.json): {}", file.string(), fmt::join(problems, "; "));
      }
      run.records.push_back(StoredRecord{file, sha256, std::move(record)});
    }
    loaded.push_back(std::move(run));
  }
  return loaded;
}

}  // namespace binberg::evidence
