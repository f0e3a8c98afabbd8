#include "common/data_files.h"

#include <dlfcn.h>

#include <filesystem>
#include <system_error>

#ifndef SHAREBUF_SOURCE_DATA_DIR
#define SHAREBUF_SOURCE_DATA_DIR "data"
#endif
#ifndef SHAREBUF_DATA_FROM_LIBDIR
#define SHAREBUF_DATA_FROM_LIBDIR "../share/sharebuf"
#endif
#ifndef SHAREBUF_DATA_FROM_BINDIR
#define SHAREBUF_DATA_FROM_BINDIR "../share/sharebuf"
#endif

namespace sharebuf::common {
namespace {

namespace fs = std::filesystem;

// The file this code was loaded from: a shared library (libsharebuf-ns3.so in someone's ns-3
// program) or the program itself (sharebufd, sharebuf-sim).
fs::path this_object() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&data_file), &info) != 0 && info.dli_fname != nullptr) {
    std::error_code ec;
    const fs::path p = fs::canonical(info.dli_fname, ec);
    if (!ec && p.filename().string().find(".so") != std::string::npos) return p;
  }
  // The main program: dladdr names it as it was started (perhaps a bare name found on PATH).
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe;
}

}  // namespace

std::string data_dir(std::string_view name) {
  const fs::path object = this_object();
  if (!object.empty()) {
    for (const char* rel : {SHAREBUF_DATA_FROM_LIBDIR, SHAREBUF_DATA_FROM_BINDIR}) {
      const fs::path dir = object.parent_path() / rel;
      std::error_code ec;
      if (fs::is_regular_file(dir / name, ec)) return dir.lexically_normal().string();
    }
  }
  return SHAREBUF_SOURCE_DATA_DIR;
}

std::string data_file(std::string_view name) {
  return (fs::path(data_dir(name)) / name).string();
}

}  // namespace sharebuf::common
