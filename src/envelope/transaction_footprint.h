#pragma once

// Where a source transaction's records went: how many records it has in each topic partition.
// The last record of a transaction in each partition carries the whole footprint (header
// kTransactionEndHeader), so a consumer that holds a transaction's records knows when it holds
// all of them, across every topic and partition — and can apply the transaction whole.
//
// Text form: "<topic>/<partition>=<records>" joined by ',' in topic, partition order (Kafka topic
// names hold only [a-zA-Z0-9._-]).

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>

namespace binberg::envelope {

// Every record: the transaction's id (its GTID, else "<file>:<pos>"; "snapshot:<file>:<pos>" for
// an initial snapshot). The last record of the transaction in each partition: its footprint.
inline constexpr std::string_view kTransactionHeader = "binberg.txn";
inline constexpr std::string_view kTransactionEndHeader = "binberg.txn_end";

using TopicPartition = std::pair<std::string, std::int32_t>;
using Footprint = std::map<TopicPartition, std::uint32_t>;

std::string format_footprint(const Footprint& footprint);
// Throws Error naming the problem for text that is not a footprint.
Footprint parse_footprint(std::string_view text);

}  // namespace binberg::envelope
