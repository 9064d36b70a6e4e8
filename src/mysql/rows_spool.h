#pragma once

// The rows events of one source transaction, kept as the binlog carried them until the whole
// transaction is read: in memory up to a bound, then in a temporary file (created 0600 and
// unlinked at once, so nothing is left behind by a crash). Encoded rows are several times smaller
// than decoded ones, and the spool makes a transaction of any size readable whole within a fixed
// memory bound — the reader decodes it in batches afterwards.

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mysql/binlog_stream.h"
#include "mysql/row_decoder.h"
#include "mysql/table_map.h"

namespace binberg::mysql {

struct SpoolOptions {
  std::string directory;                 // empty: $TMPDIR, else /tmp
  std::size_t memory_limit = 64u << 20;  // encoded bytes held in memory before spilling
};

struct EncodedRows {
  std::shared_ptr<const TableMap> table;
  RowsEventData rows;
  std::uint32_t server_id = 0;
  BinlogPosition end;  // where the event ends, for errors
};

class RowsSpool {
 public:
  explicit RowsSpool(SpoolOptions options);
  RowsSpool(RowsSpool&&) noexcept;
  RowsSpool& operator=(RowsSpool&&) noexcept;
  ~RowsSpool();

  void add(EncodedRows rows);
  // The events in the order added, once each; nullopt after the last.
  std::optional<EncodedRows> next();

  std::size_t events() const { return events_; }
  std::uint64_t encoded_bytes() const { return encoded_bytes_; }
  bool spilled() const { return file_ != nullptr; }

 private:
  struct FileCloser {
    void operator()(std::FILE* file) const;
  };
  std::uint32_t table_ordinal(const std::shared_ptr<const TableMap>& table);
  void spill();
  void write_record(const EncodedRows& rows);

  SpoolOptions options_;
  std::vector<std::shared_ptr<const TableMap>> tables_;  // of the spilled events, by ordinal
  std::vector<EncodedRows> in_memory_;                   // before any spill; read from next_
  std::unique_ptr<std::FILE, FileCloser> file_;
  std::string path_;  // for errors: the file is unlinked
  std::size_t events_ = 0;
  std::size_t memory_bytes_ = 0;
  std::uint64_t encoded_bytes_ = 0;
  std::size_t next_ = 0;
  bool reading_ = false;
};

}  // namespace binberg::mysql
