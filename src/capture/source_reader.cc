#include "capture/source_reader.h"

#include <spdlog/spdlog.h>

#include "core/failpoint.h"

namespace binberg::capture {

SourcePosition position_after(const SourcePosition& before, const TransactionBatch& batch) {
  SourcePosition after = before;
  after.binlog = batch.position;
  if (!batch.txn->gtid.empty()) {
    const mysql::Gtid gtid = mysql::Gtid::parse(batch.txn->gtid);
    if (!after.gtid.contains(gtid)) after.gtid.advance(gtid);
  }
  return after;
}

SourceReaderMetrics::SourceReaderMetrics(metrics::Registry& registry)
    : queued_events(
          registry.gauge("binberg_replicate_queued_events", "Decoded row events queued for the applier").gauge()),
      queue_capacity(
          registry.gauge("binberg_replicate_queue_capacity_events", "Capacity of the applier's queue").gauge()),
      backpressure_seconds(registry
                               .counter("binberg_replicate_backpressure_seconds_total",
                                        "Time the binlog reader waited for room in the applier's queue")
                               .counter()),
      spilled_transactions(registry
                               .counter("binberg_replicate_spilled_transactions_total",
                                        "Transactions larger than the in-memory buffer, read through a spill file")
                               .counter()),
      reconnects(registry.counter("binberg_replicate_source_reconnects_total", "Reconnections to the binlog source")
                     .counter()) {}

SourceReader::SourceReader(mysql::StreamOptions stream, mysql::CharsetNames charsets, SourceReaderOptions options,
                           SourceReaderMetrics& metrics)
    : reader_(std::move(stream), std::move(charsets), {}, options.spool),
      options_(std::move(options)),
      metrics_(metrics),
      queue_(options_.queue_events) {
  metrics_.queue_capacity.set(static_cast<double>(queue_.capacity()));
  reader_.cancel_when([this] { return stopping_.load(); });
  thread_ = std::thread([this] { run(); });
}

SourceReader::~SourceReader() {
  stopping_ = true;
  queue_.close();
  thread_.join();
}

std::optional<TransactionBatch> SourceReader::next(std::chrono::milliseconds timeout) {
  std::optional<TransactionBatch> batch = queue_.pop(timeout);
  metrics_.queued_events.set(static_cast<double>(queue_.held()));
  return batch;
}

bool SourceReader::push(TransactionBatch batch) {
  const std::size_t cost = std::max<std::size_t>(1, batch.events.size());
  std::chrono::steady_clock::duration waited{};
  const bool pushed = queue_.push(std::move(batch), cost, waited);
  metrics_.backpressure_seconds.add(std::chrono::duration<double>(waited).count());
  metrics_.queued_events.set(static_cast<double>(queue_.held()));
  return pushed;
}

void SourceReader::run() {
  try {
    std::uint64_t reconnects = 0;
    while (!stopping_) {
      std::optional<mysql::EncodedTransaction> encoded = reader_.next_encoded();
      if (reader_.reconnects() != reconnects) {
        metrics_.reconnects.add(static_cast<double>(reader_.reconnects() - reconnects));
        reconnects = reader_.reconnects();
      }
      if (!encoded) {
        if (!push(TransactionBatch{})) return;
        continue;
      }
      if (encoded->rows.spilled()) {
        metrics_.spilled_transactions.add();
        spdlog::info("transaction {} at {}: {} rows events ({} bytes encoded) read through a spill file",
                     encoded->header.gtid, reader_.position().to_string(), encoded->rows.events(),
                     encoded->rows.encoded_bytes());
      }
      auto header = std::make_shared<const SourceTransaction>(encoded->header);
      // One batch of look-ahead, so the last batch is known to be last.
      std::vector<ChangeEvent> batch = reader_.decode(*encoded, options_.batch_events);
      for (;;) {
        std::vector<ChangeEvent> following =
            batch.empty() ? std::vector<ChangeEvent>{} : reader_.decode(*encoded, options_.batch_events);
        const bool last = following.empty();
        if (!push(TransactionBatch{header, std::move(batch), last, reader_.position()})) return;
        if (last) break;
        failpoint::hit("source.between_batches");  // a slow decode of a wide or spilled transaction
        batch = std::move(following);
      }
    }
  } catch (...) {
    queue_.fail(std::current_exception());
  }
}

}  // namespace binberg::capture
