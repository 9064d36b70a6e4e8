#include "sink/sink_reader.h"

#include <fmt/format.h>
#include <pthread.h>

#include <algorithm>
#include <utility>

#include "core/error.h"
#include "envelope/change_envelope.h"
#include "sink/dead_letters.h"

namespace binberg::sink {

namespace {

// Records handed over at once: enough to make the queue's locking cheap per record, few enough
// that the sink's thread is not kept waiting for a batch to fill.
constexpr std::size_t kBatchRecords = 256;
// How long the reader waits for the first record of a batch; also how soon it sees a stop.
constexpr std::chrono::milliseconds kPollTimeout{100};

}  // namespace

ReadRecord decode_record(kafka::ConsumedRecord record, RecordDecoder& decoder, Decoding decoding) {
  ReadRecord read;
  read.headers = header_map(record);
  read.record = std::move(record);
  // A schema change record has no value: the sink reads its header, never a change.
  if (decoding == Decoding::kSkip || read.headers.contains(envelope::kSchemaChangeHeader)) return read;
  const kafka::ConsumedRecord& at = read.record;
  const auto where = [&] { return fmt::format("{} [{}] offset {}", at.topic, at.partition, at.offset); };
  try {
    with_context(where, [&] {
      if (!at.value) fail("value: none (a tombstone) is no change");
      read.event = decoder.change(*at.value);
    });
  } catch (...) {
    read.event_error = std::current_exception();
    return read;
  }
  if (read.event->schema->primary_key.empty() || !at.key) return read;
  try {
    with_context(where, [&] { read.key = decoder.key(*at.key, *read.event->schema); });
  } catch (...) {
    read.key_error = std::current_exception();
  }
  return read;
}

Headers header_map(const kafka::ConsumedRecord& record) {
  Headers headers;
  for (const auto& header : record.headers) headers[header.name] = header.value;
  return headers;
}

SinkReader::SinkReader(kafka::Consumer& consumer, const registry::RegistryOptions& registry,
                       std::map<envelope::TopicPartition, std::int64_t> skip_below, std::size_t queue_records)
    : skip_below_(std::move(skip_below)), queue_(queue_records) {
  thread_ = std::thread([this, &consumer, registry] { run(consumer, registry); });
}

SinkReader::~SinkReader() {
  stopping_ = true;
  queue_.close();  // wakes the reader if it waits for room
  thread_.join();
}

void SinkReader::run(kafka::Consumer& consumer, const registry::RegistryOptions& registry) {
  pthread_setname_np(pthread_self(), "sink-reader");  // as top and perf show it
  RecordDecoder decoder(registry);
  std::vector<ReadItem> batch;
  std::size_t records = 0;
  std::chrono::steady_clock::duration waited{};
  const auto hand_over = [&] {
    if (batch.empty()) return true;
    const bool open = queue_.push(std::move(batch), records, waited);  // partition ends cost nothing
    batch.clear();
    records = 0;
    return open;
  };
  try {
    while (!stopping_) {
      // The first item of a batch is waited for; the rest only gathered while the consumer has them.
      kafka::Polled polled = consumer.poll_event(batch.empty() ? kPollTimeout : std::chrono::milliseconds(0));
      if (auto* record = std::get_if<kafka::ConsumedRecord>(&polled)) {
        const auto skip = skip_below_.find({record->topic, record->partition});
        const bool undecoded = skip != skip_below_.end() && record->offset < skip->second;
        batch.emplace_back(decode_record(std::move(*record), decoder, undecoded ? Decoding::kSkip : Decoding::kDecode));
        ++records;
      } else if (auto* end = std::get_if<kafka::PartitionEnd>(&polled)) {
        batch.emplace_back(std::move(*end));
      }
      if ((std::holds_alternative<std::monostate>(polled) || records >= kBatchRecords) && !hand_over()) return;
    }
  } catch (...) {
    if (hand_over()) queue_.fail(std::current_exception());
  }
}

std::optional<ReadItem> SinkReader::next(std::chrono::milliseconds timeout) {
  if (next_taken_ == taken_.size()) {
    std::optional<std::vector<ReadItem>> batch = queue_.pop(timeout);
    if (!batch) return std::nullopt;
    taken_ = std::move(*batch);
    next_taken_ = 0;
  }
  return std::move(taken_[next_taken_++]);
}

std::size_t SinkReader::queued() const {
  const auto records = std::count_if(taken_.begin() + static_cast<std::ptrdiff_t>(next_taken_), taken_.end(),
                                     [](const ReadItem& item) { return std::holds_alternative<ReadRecord>(item); });
  return queue_.held() + static_cast<std::size_t>(records);
}

}  // namespace binberg::sink
