#include "sink/delivery_checks.h"

#include <spdlog/spdlog.h>

#include "sink/session_open.h"

namespace binberg::sink {

void DeliveryChecks::record(const kafka::ConsumedRecord& record) {
  const Partition partition(record.partition);
  const std::optional<Offset> expected = state_.delivered({record.topic, record.partition}, Offset(record.offset));
  if (!expected) return;
  // Usually a transaction marker: what the last fetch said is enough unless it says records are gone.
  std::optional<Offset> first = input_.known_first_offset(record.topic, partition);
  if (!first || *first > *expected) first = input_.bounds(record.topic, partition).first;
  stop_at_deleted(state_.table(record.topic), partition, *expected, Offset(record.offset), *first);
}

void DeliveryChecks::end(const kafka::PartitionEnd& end) {
  const Partition partition(end.partition);
  const Offset expected = state_.expected({end.topic, end.partition});
  const std::optional<Offset> known = input_.known_first_offset(end.topic, partition);
  if (!known || *known <= expected) return;  // the usual case: no broker call
  const Offset first = input_.bounds(end.topic, partition).first;
  stop_at_deleted(state_.table(end.topic), partition, expected, first, first);
}

void DeliveryChecks::partition_starts() {
  for (auto& [topic, table] : state_.tables()) {
    for (std::int32_t number = 0; number < table.partitions; ++number) {
      const Partition partition(number);
      std::optional<Offset> first;
      try {
        first = input_.bounds(topic, partition).first;
      } catch (const Error& error) {
        spdlog::debug("sink: {} [{}]: where it starts is not known: {}", topic, number, error.what());
        continue;
      }
      stop_at_deleted(table, partition, state_.expected({topic, number}), *first, *first);
    }
  }
}

void DeliveryChecks::stop_at_deleted(const TableState& table, Partition partition, Offset expected, Offset delivered,
                                     Offset first) {
  if (const auto gap = gap_in_delivery(expected, table.needed_from(partition), delivered, first)) {
    stop_at_gap(table, partition, *gap);
  }
}

}  // namespace binberg::sink
