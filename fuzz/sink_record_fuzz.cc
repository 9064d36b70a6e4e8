// libFuzzer target over the sink's record handling: a record's key, value and headers through what
// the sink's reader and session do with them (tests/sink/record_fuzzing.h), without Kafka or a
// registry. Any exception or broken invariant is a find: the sink must judge every record.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "record_fuzzing.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  binberg::sink::fuzzing::handle(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
