// env.hpp: the benchmark entries' knobs from environment variables (bench/README.md lists them).
//
//   env_string(name, fallback)    the value, or fallback when the variable is unset or empty
//   env_integer<T>(name, fallback) the whole value as an integer of type T (sign allowed for signed T)
//   env_count(name, fallback)     a positive integer
// A value that is not what the knob expects throws Error(kUsage) naming the variable and the value,
// which the harness reports as the entry's failure; nothing is silently clamped or truncated.
#pragma once

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <string>
#include <system_error>

#include "warpsearch/error.hpp"

namespace warpsearch::bench {

inline std::string env_string(const char* name, const std::string& fallback = "") {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::string(value) : fallback;
}

// expected: what the message says the value should be.
template <class T>
T env_integer(const char* name, T fallback, const char* expected = "an integer") {
  const std::string text = env_string(name);
  if (text.empty()) return fallback;
  T value{};
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end)
    throw Error(ErrorKind::kUsage, std::string(name) + "=" + text + ": expected " + expected +
                                       (ec == std::errc::result_out_of_range ? " in range" : ""));
  return value;
}

inline std::size_t env_count(const char* name, std::size_t fallback) {
  const std::size_t value = env_integer<std::size_t>(name, fallback, "a positive integer");
  if (value == 0)
    throw Error(ErrorKind::kUsage,
                std::string(name) + "=" + env_string(name) + ": expected a positive integer");
  return value;
}

}  // namespace warpsearch::bench
