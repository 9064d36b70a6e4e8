#include "mysql/rows_spool.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "core/error.h"

namespace binberg::mysql {
namespace {

// What an event costs in memory beyond its bytes (the struct, strings, the map pointer).
constexpr std::size_t kEventOverhead = sizeof(EncodedRows) + 64;

std::size_t memory_of(const EncodedRows& rows) {
  return kEventOverhead + rows.rows.rows.size() + rows.rows.columns_before.size() + rows.rows.columns_after.size() +
         rows.end.file.size();
}

}  // namespace

void RowsSpool::FileCloser::operator()(std::FILE* file) const { std::fclose(file); }

RowsSpool::RowsSpool(SpoolOptions options) : options_(std::move(options)) {
  if (options_.directory.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    options_.directory = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  }
}

RowsSpool::RowsSpool(RowsSpool&&) noexcept = default;
RowsSpool& RowsSpool::operator=(RowsSpool&&) noexcept = default;
RowsSpool::~RowsSpool() = default;

std::uint32_t RowsSpool::table_ordinal(const std::shared_ptr<const TableMap>& table) {
  for (std::size_t i = tables_.size(); i-- > 0;) {
    if (tables_[i] == table) return static_cast<std::uint32_t>(i);
  }
  tables_.push_back(table);
  return static_cast<std::uint32_t>(tables_.size() - 1);
}

void RowsSpool::add(EncodedRows rows) {
  if (reading_) fail("rows spool: add() after next()");
  ++events_;
  encoded_bytes_ += rows.rows.rows.size();
  if (file_) {
    write_record(rows);
    return;
  }
  memory_bytes_ += memory_of(rows);
  in_memory_.push_back(std::move(rows));
  if (memory_bytes_ > options_.memory_limit) spill();
}

void RowsSpool::spill() {
  std::string path = options_.directory + "/binberg-spool-XXXXXX";
  const int fd = ::mkstemp(path.data());  // mode 0600
  if (fd < 0) {
    fail("rows spool: cannot create a file in {} for a transaction over {} bytes: {}", options_.directory,
         options_.memory_limit, std::strerror(errno));
  }
  ::unlink(path.c_str());  // gone with the process, whatever happens
  file_.reset(::fdopen(fd, "w+b"));
  if (!file_) {
    ::close(fd);
    fail("rows spool: {}: {}", path, std::strerror(errno));
  }
  path_ = std::move(path);
  for (const EncodedRows& rows : in_memory_) write_record(rows);
  in_memory_.clear();
  in_memory_.shrink_to_fit();
  memory_bytes_ = 0;
}

namespace {

template <typename T>
void put(std::FILE* file, const T& value) {
  std::fwrite(&value, sizeof value, 1, file);
}

void put_string(std::FILE* file, const std::string& text) {
  put<std::uint64_t>(file, text.size());
  std::fwrite(text.data(), 1, text.size(), file);
}

template <typename T>
T get(std::FILE* file, const std::string& path) {
  T value{};
  if (std::fread(&value, sizeof value, 1, file) != 1) fail("rows spool {}: read failed or truncated", path);
  return value;
}

std::string get_string(std::FILE* file, const std::string& path) {
  std::string text(get<std::uint64_t>(file, path), '\0');
  if (!text.empty() && std::fread(text.data(), 1, text.size(), file) != text.size()) {
    fail("rows spool {}: read failed or truncated", path);
  }
  return text;
}

}  // namespace

void RowsSpool::write_record(const EncodedRows& rows) {
  std::FILE* file = file_.get();
  put<std::uint32_t>(file, table_ordinal(rows.table));
  put<std::uint8_t>(file, static_cast<std::uint8_t>(rows.rows.kind));
  put<std::uint64_t>(file, rows.rows.table_id);
  put<std::uint32_t>(file, rows.rows.column_count);
  put<std::uint32_t>(file, rows.server_id);
  put<std::uint64_t>(file, rows.end.offset);
  put_string(file, rows.end.file);
  put_string(file, rows.rows.columns_before);
  put_string(file, rows.rows.columns_after);
  put_string(file, rows.rows.rows);
  if (std::ferror(file)) {
    fail("rows spool {} (in {}): write failed: {}", path_, options_.directory, std::strerror(errno));
  }
}

std::optional<EncodedRows> RowsSpool::next() {
  if (!reading_) {
    reading_ = true;
    if (file_ && (std::fflush(file_.get()) != 0 || std::fseek(file_.get(), 0, SEEK_SET) != 0)) {
      fail("rows spool {}: {}", path_, std::strerror(errno));
    }
  }
  if (next_ == events_) return std::nullopt;
  ++next_;
  if (!file_) return std::move(in_memory_[next_ - 1]);
  std::FILE* file = file_.get();
  EncodedRows rows;
  const auto ordinal = get<std::uint32_t>(file, path_);
  if (ordinal >= tables_.size()) fail("rows spool {}: table ordinal {} out of range", path_, ordinal);
  rows.table = tables_[ordinal];
  const auto kind = get<std::uint8_t>(file, path_);
  if (kind > static_cast<std::uint8_t>(RowsKind::kDelete)) fail("rows spool {}: bad rows kind {}", path_, kind);
  rows.rows.kind = static_cast<RowsKind>(kind);
  rows.rows.table_id = get<std::uint64_t>(file, path_);
  rows.rows.column_count = get<std::uint32_t>(file, path_);
  rows.server_id = get<std::uint32_t>(file, path_);
  rows.end.offset = get<std::uint64_t>(file, path_);
  rows.end.file = get_string(file, path_);
  rows.rows.columns_before = get_string(file, path_);
  rows.rows.columns_after = get_string(file, path_);
  rows.rows.rows = get_string(file, path_);
  return rows;
}

}  // namespace binberg::mysql
