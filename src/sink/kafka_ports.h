#pragma once

// The sink's ports on the real world: the system clock, Kafka (librdkafka) and the schema registry.

#include <memory>

#include "sink/sink_ports.h"

namespace binberg::sink {

std::unique_ptr<SinkEnvironment> kafka_environment();

}  // namespace binberg::sink
