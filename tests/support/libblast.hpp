// libblast.hpp: opening BLAST+'s own libblast.so as an oracle for tests (never linked into the
// library). Returns nullptr when it cannot be loaded, and always under AddressSanitizer: the NCBI
// toolkit's static initialisation (libxncbi's CDiagContext::SetupDiag) leaks, which LeakSanitizer
// reports as a test failure. WARPSEARCH_LIBBLAST names another path to try first.
#pragma once

#include <dlfcn.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace warpsearch::test {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

inline void* open_libblast() {
  if (kAddressSanitizer) return nullptr;
  std::vector<std::string> paths;
  if (const char* env = std::getenv("WARPSEARCH_LIBBLAST")) paths.emplace_back(env);
  paths.emplace_back("/usr/lib/ncbi-blast+/libblast.so");
  for (const std::string& p : paths)
    if (void* h = ::dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
  return nullptr;
}

}  // namespace warpsearch::test
