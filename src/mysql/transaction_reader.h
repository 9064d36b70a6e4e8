#pragma once

// Groups binlog events into whole source transactions (GTID ... XID/COMMIT) and hands each one
// out only once it is complete: its rows events held encoded (RowsSpool: bounded memory, spilled
// to a file beyond it), decoded afterwards in batches, so a transaction of any size fits. After a dropped connection or
// a server restart it reconnects with backoff and resumes right after the last whole transaction it returned,
// discarding any half-read one, so nothing is lost, duplicated or split.

#include <chrono>
#include <functional>
#include <map>
#include <optional>

#include "core/backoff.h"
#include "core/source_transaction.h"
#include "mysql/binlog_stream.h"
#include "mysql/charset.h"
#include "mysql/row_decoder.h"
#include "mysql/rows_spool.h"
#include "mysql/table_map.h"

namespace binberg::mysql {

struct ReconnectPolicy {
  std::chrono::milliseconds first_delay{100};
  std::chrono::milliseconds max_delay = Backoff::kMost;
  std::chrono::seconds give_up_after{300};
};

// A whole source transaction with its rows still encoded: everything of SourceTransaction but the
// events, which TransactionReader::decode() produces.
struct EncodedTransaction {
  SourceTransaction header;
  RowsSpool rows;
  std::uint32_t next_row_index = 0;
};

class TransactionReader {
 public:
  TransactionReader(StreamOptions options, CharsetNames charsets, ReconnectPolicy reconnect = {},
                    SpoolOptions spool = {});

  // The next whole transaction; nullopt at the end of the binlog in non-blocking mode, and in
  // blocking mode when a heartbeat shows the source idle between transactions (so a caller can
  // act on time; calling again continues the stream).
  std::optional<EncodedTransaction> next_encoded();
  // The change events of the next rows events of TXN, in order: at least MAX_EVENTS (whole rows
  // events, so a few more) unless fewer are left; empty once all are decoded.
  std::vector<ChangeEvent> decode(EncodedTransaction& txn, std::size_t max_events);
  // next_encoded() with every event decoded.
  std::optional<SourceTransaction> next();

  // While reconnecting, CANCELLED is asked between attempts; when it returns true, next_encoded()
  // gives up waiting and returns nullopt (the reader stays usable).
  void cancel_when(std::function<bool()> cancelled) { cancelled_ = std::move(cancelled); }

  // Where the binlog continues after the last transaction returned.
  const BinlogPosition& position() const { return position_; }
  // The GTID position including the last transaction returned.
  const GtidPosition& gtid_position() const { return gtid_position_; }
  std::uint64_t reconnects() const { return reconnects_; }

 private:
  std::optional<EncodedTransaction> read_transaction();
  void connect();
  void add_rows(EncodedTransaction& txn, BinlogEvent& event);
  void finish(SourceTransaction& txn, const BinlogEvent& commit);

  StreamOptions options_;
  CharsetNames charsets_;
  ReconnectPolicy reconnect_;
  SpoolOptions spool_;
  std::function<bool()> cancelled_;
  std::optional<BinlogStream> stream_;
  std::map<std::uint64_t, std::shared_ptr<const TableMap>> tables_;
  RowDecoder decoder_;
  BinlogPosition position_;
  GtidPosition gtid_position_;
  std::uint64_t reconnects_ = 0;
};

// True for statements that change table definitions (CREATE/ALTER/DROP/RENAME/TRUNCATE ...).
bool is_schema_change(std::string_view statement);

}  // namespace binberg::mysql
