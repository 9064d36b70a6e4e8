// Runs the sink's record fuzzing harness (record_fuzzing.h) over the sample records and seeded
// mutations of them, so every `make unit-test` hands the sink hostile records under ASan/UBSan,
// without clang's libFuzzer (fuzz/sink_record_fuzz.cc runs the same harness for longer).

#include <gtest/gtest.h>

#include <random>

#include "record_fuzzing.h"
#include "sample_records.h"

namespace binberg::sink::fuzzing {
namespace {

std::string mutate(std::string input, std::mt19937& random) {
  const int edits = 1 + static_cast<int>(random() % 4);
  for (int i = 0; i < edits && !input.empty(); ++i) {
    const std::size_t at = random() % input.size();
    switch (random() % 4) {
      case 0:
        input[at] = static_cast<char>(input[at] ^ (1 << (random() % 8)));
        break;
      case 1:
        input[at] = "\x00\x01\x7f\x80\xff{\"/=@: "[random() % 12];
        break;
      case 2:
        input.resize(at);
        break;
      default:
        input.insert(at, input.substr(random() % input.size(), random() % 16));
        break;
    }
  }
  return input;
}

TEST(SinkRecordFuzzTest, SampleRecordsAndTheirMutationsNeverEscapeTheSinksJudgement) {
  std::vector<std::string> seeds;
  for (const kafka::ConsumedRecord& record : samples::records()) seeds.push_back(encode(record));
  for (const std::string& seed : seeds) {
    ASSERT_EQ(encode(decode(seed)), seed) << "the layout reads back what it wrote";
    ASSERT_NO_THROW(handle(seed));
  }
  std::mt19937 random(20261207);
  for (int round = 0; round < 4000; ++round) {
    const std::string input = mutate(seeds[random() % seeds.size()], random);
    ASSERT_NO_THROW(handle(input)) << "round " << round;
  }
}

}  // namespace
}  // namespace binberg::sink::fuzzing
