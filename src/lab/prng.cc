#include "lab/prng.h"

#include <bit>

#include "core/error.h"

namespace binberg::lab {
namespace {
// The 128-bit product of Lemire's method; __extension__ because ISO C++ has no 128-bit integer.
__extension__ typedef unsigned __int128 Uint128;
}  // namespace

Prng::Prng(std::uint64_t seed) {
  std::uint64_t x = seed;
  for (std::uint64_t& word : state_) {
    std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    word = z ^ (z >> 31);
  }
}

std::uint64_t Prng::next() {
  const std::uint64_t result = std::rotl(state_[1] * 5, 7) * 9;
  const std::uint64_t t = state_[1] << 17;
  state_[2] ^= state_[0];
  state_[3] ^= state_[1];
  state_[1] ^= state_[2];
  state_[0] ^= state_[3];
  state_[2] ^= t;
  state_[3] = std::rotl(state_[3], 45);
  return result;
}

std::uint64_t Prng::below(std::uint64_t bound) {
  if (bound == 0) fail("Prng::below(0)");
  Uint128 product = static_cast<Uint128>(next()) * bound;
  auto low = static_cast<std::uint64_t>(product);
  if (low < bound) {
    const std::uint64_t threshold = (0 - bound) % bound;
    while (low < threshold) {
      product = static_cast<Uint128>(next()) * bound;
      low = static_cast<std::uint64_t>(product);
    }
  }
  return static_cast<std::uint64_t>(product >> 64);
}

std::int64_t Prng::between(std::int64_t low, std::int64_t high) {
  const auto span = static_cast<std::uint64_t>(high - low) + 1;
  return low + static_cast<std::int64_t>(span == 0 ? next() : below(span));
}

bool Prng::chance(double p) { return static_cast<double>(next() >> 11) * 0x1.0p-53 < p; }

}  // namespace binberg::lab
