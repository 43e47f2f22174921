// scratch_dir.hpp: a private temporary directory for fuzz targets that turn inputs into files; removed at
// exit. Shared by fuzz_packed_db.cpp and fuzz_blast_db.cpp.
#pragma once

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

namespace warpsearch::fuzz {

struct ScratchDir {
  std::string path;
  // prefix: the directory name's start, e.g. "/tmp/fuzz_packed_db" (six random characters are appended).
  explicit ScratchDir(const std::string& prefix) {
    std::string templ = prefix + ".XXXXXX";
    if (::mkdtemp(templ.data()) == nullptr) std::abort();
    path = templ;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
};

}  // namespace warpsearch::fuzz
