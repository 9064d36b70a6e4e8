// Runs the libFuzzer entry point over seeded pseudo-random and mutated inputs, so the decoder and the
// container reader meet hostile data under ASan/UBSan in every CI run, without clang's libFuzzer.

#include <gtest/gtest.h>

#include <random>
#include <sstream>

#include "avro/container.h"
#include "avro/encoding.h"
#include "core/error.h"
#include "fuzz_decoder.h"

namespace binberg::avro {
namespace {

void run(const std::string& input) {
  LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(input.data()), input.size());
}

std::string mutate(std::string input, std::mt19937& random) {
  const int edits = 1 + static_cast<int>(random() % 4);
  for (int i = 0; i < edits && !input.empty(); ++i) {
    const std::size_t at = 1 + random() % input.size();  // keep the selector byte
    switch (random() % 5) {
      case 0:  // flip a bit
        if (at < input.size()) input[at] = static_cast<char>(input[at] ^ (1 << (random() % 8)));
        break;
      case 1:  // set an interesting byte
        if (at < input.size()) input[at] = "\x00\x01\x7f\x80\xff\x02"[random() % 6];
        break;
      case 2:  // truncate
        input.resize(at);
        break;
      case 3:  // insert a varint-looking run
        input.insert(std::min(at, input.size()), std::string(1 + random() % 10, '\xff'));
        break;
      default:  // duplicate a slice
        input.insert(std::min(at, input.size()), input.substr(at % input.size(), random() % 8));
        break;
    }
  }
  return input;
}

std::vector<std::string> seeds() { return fuzzing::seed_inputs(); }

TEST(AvroFuzz, SeedsAreValidInputs) {
  const auto valid = seeds();
  EXPECT_GE(valid.size(), 3u + fuzzing::fuzz_schemas().size());
}

TEST(AvroFuzz, RandomInputsNeverCrash) {
  std::mt19937 random(20240601);
  for (int i = 0; i < 3000; ++i) {
    std::string input(random() % 300, '\0');
    for (char& byte : input) byte = static_cast<char>(random());
    if (!input.empty() && i % 3 == 0) input[0] = static_cast<char>(fuzzing::kContainerInput);
    if (i % 3 == 1 && input.size() > 5) input.replace(1, 4, "Obj\x01");  // get past the magic
    run(input);
  }
}

TEST(AvroFuzz, MutatedValidInputsNeverCrash) {
  const auto valid = seeds();
  std::mt19937 random(7);
  for (int i = 0; i < 6000; ++i) run(mutate(valid[random() % valid.size()], random));
}

}  // namespace
}  // namespace binberg::avro
