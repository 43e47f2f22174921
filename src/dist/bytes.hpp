// bytes.hpp: the byte encoding of the messages ranks exchange (dist/hmm_wire.hpp, dist/blast_wire.hpp).
//
// ByteWriter appends fixed-width little-endian integers, IEEE floats by their bit patterns (so every value,
// NaNs and signed zeros included, round-trips exactly), booleans as one byte and strings as a uint64
// length then the bytes. ByteReader reads them back in the same order and throws Error(kInternal) when a
// message is shorter than what is read from it (a protocol bug, never a user error). The encoding does
// not depend on the host's byte order.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "warpsearch/dist.hpp"
#include "warpsearch/error.hpp"

namespace warpsearch::dist {

class ByteWriter {
 public:
  template <typename T>
  requires std::is_integral_v<T>
  void integer(T v) {
    using U = std::make_unsigned_t<T>;
    auto u = static_cast<U>(v);
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      out_.push_back(static_cast<std::uint8_t>(u & 0xFFu));
      if constexpr (sizeof(T) > 1) u = static_cast<U>(u >> 8);
    }
  }
  void u8(std::uint8_t v) { out_.push_back(v); }
  void boolean(bool v) { out_.push_back(v ? 1 : 0); }
  void f32(float v) { integer(std::bit_cast<std::uint32_t>(v)); }
  void f64(double v) { integer(std::bit_cast<std::uint64_t>(v)); }
  void str(std::string_view s) {
    integer(static_cast<std::uint64_t>(s.size()));
    out_.insert(out_.end(), s.begin(), s.end());
  }
  void bytes(std::span<const std::uint8_t> b) {
    integer(static_cast<std::uint64_t>(b.size()));
    out_.insert(out_.end(), b.begin(), b.end());
  }

  // `count` int32 values stored contiguously at p (an int32 array, or an array of structs of int32 fields
  // without padding): the count, then the values (bulk-copied on little-endian hosts).
  void int32s(const void* p, std::size_t count) {
    integer(static_cast<std::uint64_t>(count));
    const auto* bytes = static_cast<const std::uint8_t*>(p);
    if constexpr (std::endian::native == std::endian::little) {
      out_.insert(out_.end(), bytes, bytes + count * sizeof(std::int32_t));
    } else {
      for (std::size_t i = 0; i < count; ++i) {
        std::int32_t v;
        std::memcpy(&v, bytes + i * sizeof v, sizeof v);
        integer(v);
      }
    }
  }

  std::size_t size() const { return out_.size(); }
  Bytes take() { return std::move(out_); }

 private:
  Bytes out_;
};

class ByteReader {
 public:
  explicit ByteReader(std::span<const std::uint8_t> in) : in_(in) {}

  template <typename T>
  requires std::is_integral_v<T> T integer() {
    need(sizeof(T));
    using U = std::make_unsigned_t<T>;
    U u = 0;
    for (std::size_t i = sizeof(T); i-- > 0;) {
      if constexpr (sizeof(T) > 1) u = static_cast<U>(u << 8);
      u = static_cast<U>(u | in_[pos_ + i]);
    }
    pos_ += sizeof(T);
    return static_cast<T>(u);
  }
  std::uint8_t u8() { return integer<std::uint8_t>(); }
  bool boolean() { return u8() != 0; }
  float f32() { return std::bit_cast<float>(integer<std::uint32_t>()); }
  double f64() { return std::bit_cast<double>(integer<std::uint64_t>()); }
  std::string str() {
    const std::size_t n = length();
    std::string s(reinterpret_cast<const char*>(in_.data() + pos_), n);
    pos_ += n;
    return s;
  }
  Bytes bytes() {
    const std::size_t n = length();
    Bytes b(in_.begin() + static_cast<std::ptrdiff_t>(pos_),
            in_.begin() + static_cast<std::ptrdiff_t>(pos_ + n));
    pos_ += n;
    return b;
  }
  // An int32s() array of exactly `count` values, into the memory at p.
  void int32s(void* p, std::size_t count) {
    if (integer<std::uint64_t>() != count)
      throw Error(ErrorKind::kInternal, "MPI message holds an array of another length (protocol mismatch)");
    need(count * sizeof(std::int32_t));
    auto* bytes = static_cast<std::uint8_t*>(p);
    if constexpr (std::endian::native == std::endian::little) {
      std::memcpy(bytes, in_.data() + pos_, count * sizeof(std::int32_t));
      pos_ += count * sizeof(std::int32_t);
    } else {
      for (std::size_t i = 0; i < count; ++i) {
        const auto v = integer<std::int32_t>();
        std::memcpy(bytes + i * sizeof v, &v, sizeof v);
      }
    }
  }
  // A count of elements that follow, each at least min_bytes long (bounds a corrupt count's allocation).
  std::size_t count(std::size_t min_bytes = 1) {
    const auto n = integer<std::uint64_t>();
    if (min_bytes > 0 && n > (in_.size() - pos_) / min_bytes) truncated();
    return static_cast<std::size_t>(n);
  }

  bool done() const { return pos_ == in_.size(); }
  // Throws Error(kInternal) unless the whole message was read.
  void expect_done() const {
    if (!done()) throw Error(ErrorKind::kInternal, "MPI message longer than expected (protocol mismatch)");
  }

 private:
  std::size_t length() {
    const auto n = integer<std::uint64_t>();
    if (n > in_.size() - pos_) truncated();
    return static_cast<std::size_t>(n);
  }
  void need(std::size_t n) const {
    if (n > in_.size() - pos_) truncated();
  }
  [[noreturn]] static void truncated() {
    throw Error(ErrorKind::kInternal, "MPI message shorter than expected (protocol mismatch)");
  }

  std::span<const std::uint8_t> in_;
  std::size_t pos_ = 0;
};

}  // namespace warpsearch::dist
