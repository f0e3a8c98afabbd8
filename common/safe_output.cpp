#include "common/safe_output.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace sharebuf::common {
namespace {

std::string parent_of(const std::string& path) {
  const std::string dir = std::filesystem::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

OutputError error(const std::string& path, const std::string& what, int err) {
  return OutputError(path + ": " + what + ": " + std::strerror(err));
}

// Six characters a peer cannot guess: a name it could plant in advance would need 62^6 tries.
std::string random_suffix() {
  static constexpr char kChars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  unsigned char bytes[6];
  size_t got = 0;
  while (got < sizeof bytes) {
    const ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
    if (n > 0) got += static_cast<size_t>(n);
  }
  std::string s;
  for (unsigned char b : bytes)
    s += kChars[b % (sizeof kChars - 1)];
  return s;
}

}  // namespace

std::string unsafe_directory(const std::string& dir) {
  char resolved[PATH_MAX];
  if (realpath(dir.c_str(), resolved) == nullptr)
    return "directory " + dir + ": " + std::strerror(errno);
  std::filesystem::path p(resolved);
  for (;;) {
    struct stat st {};
    if (stat(p.c_str(), &st) != 0) return "directory " + p.string() + ": " + std::strerror(errno);
    if (!S_ISDIR(st.st_mode)) return p.string() + " is not a directory";
    if ((st.st_mode & S_IWOTH) != 0 && (st.st_mode & S_ISVTX) == 0) {
      return "directory " + p.string() +
             " may be written by every user and has no sticky bit, so any user could replace "
             "what the daemon writes below it (chmod o-w or +t)";
    }
    if (p == p.root_path()) return {};
    p = p.parent_path();
  }
}

namespace {

// The directory, opened: what follows happens in this very directory even if a path component
// is renamed or relinked meanwhile.
int open_directory(const std::string& dir) {
  if (const std::string why = unsafe_directory(dir); !why.empty()) throw OutputError(why);
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw error(dir, "cannot open the directory", errno);
  struct stat st {};
  if (fstat(fd, &st) != 0 || ((st.st_mode & S_IWOTH) != 0 && (st.st_mode & S_ISVTX) == 0)) {
    close(fd);
    throw OutputError("directory " + dir +
                      " changed under the daemon: it is writable by every "
                      "user without the sticky bit now");
  }
  return fd;
}

struct Fd {
  int fd;
  ~Fd() { close(fd); }
};

std::string base_of(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

// Creates ".<stem>.XXXXXX" in the open directory `dfd`; returns its descriptor and name.
int create_in(int dfd, const std::string& dir, std::string_view stem, mode_t mode,
              std::string* name) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string candidate = "." + std::string(stem) + "." + random_suffix();
    const int fd =
        openat(dfd, candidate.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd >= 0) {
      *name = std::move(candidate);
      return fd;
    }
    if (errno != EEXIST) throw error(dir + "/" + candidate, "cannot create", errno);
  }
  throw OutputError(dir + ": no unused temporary name in 100 tries");
}

void install_in(int dfd, const std::string& temp, const std::string& path, bool overwrite) {
  const std::string base = base_of(path);
  if (overwrite) {
    if (renameat(dfd, temp.c_str(), dfd, base.c_str()) == 0) return;
  } else {
    if (renameat2(dfd, temp.c_str(), dfd, base.c_str(), RENAME_NOREPLACE) == 0) return;
    // A file system without RENAME_NOREPLACE: link() also refuses an existing name.
    if (errno == EINVAL && linkat(dfd, temp.c_str(), dfd, base.c_str(), 0) == 0) {
      unlinkat(dfd, temp.c_str(), 0);
      return;
    }
  }
  const int err = errno;
  unlinkat(dfd, temp.c_str(), 0);
  if (err == EEXIST) throw OutputError(path + ": it exists");
  throw error(path, "cannot create", err);
}

}  // namespace

int create_temporary(const std::string& dir, std::string_view stem, mode_t mode,
                     std::string* name) {
  const Fd d{open_directory(dir)};
  std::string base;
  const int fd = create_in(d.fd, dir, stem, mode, &base);
  *name = dir + "/" + base;
  return fd;
}

void replace_file(const std::string& path, std::string_view contents, mode_t mode) {
  const std::string dir = parent_of(path);
  const Fd d{open_directory(dir)};
  std::string temp;
  const int fd = create_in(d.fd, dir, base_of(path), mode, &temp);
  int err = 0;
  for (size_t done = 0; done < contents.size() && err == 0;) {
    const ssize_t n = write(fd, contents.data() + done, contents.size() - done);
    if (n > 0) done += static_cast<size_t>(n);
    if (n < 0 && errno != EINTR) err = errno;
  }
  if (close(fd) != 0 && err == 0) err = errno;
  if (err != 0) {
    unlinkat(d.fd, temp.c_str(), 0);
    throw error(dir + "/" + temp, "cannot write", err);
  }
  install_in(d.fd, temp, path, true);
}

void install_file(const std::string& temp, const std::string& path, bool overwrite) {
  const std::string dir = parent_of(path);
  if (parent_of(temp) != dir) throw OutputError(temp + " is not in the directory of " + path);
  const Fd d{open_directory(dir)};
  install_in(d.fd, base_of(temp), path, overwrite);
}

}  // namespace sharebuf::common
