#pragma once

// The reading side of path A, on its own thread: whole transactions from the binlog (rows kept
// encoded and spooled, mysql::RowsSpool), decoded in batches and queued for the applier in a
// queue bounded by row events. Reading and decoding thus overlap with applying and writing, and
// memory stays bounded whatever the size of a transaction: spool + queue + the writers' buffers.

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "capture/bounded_queue.h"
#include "capture/source_position.h"
#include "core/source_transaction.h"
#include "metrics/metrics.h"
#include "mysql/transaction_reader.h"

namespace binberg::capture {

// One batch of a transaction's decoded row events, in order. Every transaction ends with a batch
// marked last (a transaction without rows is that one batch); a batch without a transaction
// says the source is idle.
struct TransactionBatch {
  std::shared_ptr<const SourceTransaction> txn;  // the transaction without its events; null: idle
  std::vector<ChangeEvent> events;
  bool last = false;
  mysql::BinlogPosition position;  // last: where the binlog continues after the transaction
};

// The position after BATCH, the last of its transaction, read at BEFORE: where the binlog
// continues, with the transaction's GTID added.
SourcePosition position_after(const SourcePosition& before, const TransactionBatch& batch);

struct SourceReaderOptions {
  mysql::SpoolOptions spool;
  std::size_t queue_events = 65'536;  // decoded row events queued ahead of the applier
  std::size_t batch_events = 2'048;
};

struct SourceReaderMetrics {
  explicit SourceReaderMetrics(metrics::Registry& registry);
  metrics::Gauge& queued_events;
  metrics::Gauge& queue_capacity;
  metrics::Counter& backpressure_seconds;  // the reader waited for room in the queue
  metrics::Counter& spilled_transactions;
  metrics::Counter& reconnects;
};

class SourceReader {
 public:
  // Connects (errors surface here, in the caller's thread), then reads on a thread of its own.
  SourceReader(mysql::StreamOptions stream, mysql::CharsetNames charsets, SourceReaderOptions options,
               SourceReaderMetrics& metrics);
  // Stops the thread and waits for it.
  ~SourceReader();
  SourceReader(const SourceReader&) = delete;
  SourceReader& operator=(const SourceReader&) = delete;

  // The next batch, waiting up to TIMEOUT (nullopt then). Rethrows the reading thread's failure
  // once the batches read before it are taken.
  std::optional<TransactionBatch> next(std::chrono::milliseconds timeout);

 private:
  void run();
  bool push(TransactionBatch batch);

  mysql::TransactionReader reader_;
  SourceReaderOptions options_;
  SourceReaderMetrics& metrics_;
  BoundedQueue<TransactionBatch> queue_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace binberg::capture
