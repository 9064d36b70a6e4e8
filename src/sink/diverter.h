#pragma once

// Where the records a sink cannot apply go: a record it cannot decode to its table topic's
// dead-letter topic, a record whose key contradicts its value to the quarantine topic. Both keep
// the record whole, with why and where it came from (dead_letters.h); both are counted.

#include <string>
#include <string_view>

#include "kafka/consumer.h"
#include "sink/sink_metrics.h"
#include "sink/sink_ports.h"

namespace binberg::sink {

struct KafkaSinkStats;

class Diverter {
 public:
  Diverter(SinkInput& input, KafkaSinkStats& stats, SinkMetrics& metrics);

  void dead_letter(const kafka::ConsumedRecord& record, const std::string& reason);
  void quarantine(const kafka::ConsumedRecord& record, const std::string& reason);

 private:
  void divert(const kafka::ConsumedRecord& record, std::string_view suffix, const std::string& reason);

  SinkInput& input_;
  KafkaSinkStats& stats_;
  SinkMetrics& metrics_;
};

}  // namespace binberg::sink
