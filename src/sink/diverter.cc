#include "sink/diverter.h"

#include "sink/dead_letters.h"
#include "sink/kafka_sink.h"

namespace binberg::sink {

Diverter::Diverter(SinkInput& input, KafkaSinkStats& stats, SinkMetrics& metrics)
    : input_(input), stats_(stats), metrics_(metrics) {}

void Diverter::dead_letter(const kafka::ConsumedRecord& record, const std::string& reason) {
  divert(record, kDeadLetterSuffix, reason);
  ++stats_.dead_letters;
  metrics_.dead_letters.add();
}

void Diverter::quarantine(const kafka::ConsumedRecord& record, const std::string& reason) {
  divert(record, kQuarantineSuffix, reason);
  ++stats_.quarantined;
  metrics_.quarantined.add();
}

void Diverter::divert(const kafka::ConsumedRecord& record, std::string_view suffix, const std::string& reason) {
  if (input_.divert(record, suffix, reason) == Diverted::kTruncated) {
    ++stats_.truncated_diversions;
    metrics_.dead_letters_truncated.add();
  }
}

}  // namespace binberg::sink
