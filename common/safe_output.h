// Safe output: how the daemon (root) writes a file in a directory someone else may also write
// to — the stats file, captures — without being led to write somewhere else.
//   - Never through a name another user prepared: the data goes into a new file created with
//     O_CREAT|O_EXCL|O_NOFOLLOW under an unpredictable name in the target's own directory, and
//     that file is renamed over the target. A symbolic link or a regular file planted at the
//     target (or at any name the daemon used before, such as "<path>.tmp") is replaced, never
//     followed, truncated or written into.
//   - Never in a directory where another user can rename or delete what it creates: a directory
//     on the target's path that every user may write to without the sticky bit (/tmp has it) is
//     refused, naming the directory.
// Every error names the path and the reason (OutputError).
#pragma once

#include <sys/types.h>

#include <stdexcept>
#include <string>
#include <string_view>

namespace sharebuf::common {

class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Empty if `dir` and every directory above it (symbolic links resolved) is safe to create files
// in; otherwise the reason, naming the directory writable by every user without the sticky bit.
// A directory that does not exist or cannot be examined is a reason too.
std::string unsafe_directory(const std::string& dir);

// A new file in `dir`, created exclusively (O_EXCL|O_NOFOLLOW|O_CLOEXEC, O_WRONLY) with `mode`
// (before the umask) under the name ".<stem>.XXXXXX" (random); its descriptor, and its name in
// *name. Refuses an unsafe `dir`. Throws OutputError.
int create_temporary(const std::string& dir, std::string_view stem, mode_t mode, std::string* name);

// Replaces `path` by `contents`: written to a temporary file beside it (create_temporary), then
// renamed over it, so a reader sees the old file or the new one, never a part, and nothing
// planted at `path` is followed. mode: before the umask. Throws OutputError.
void replace_file(const std::string& path, std::string_view contents, mode_t mode = 0644);

// Gives the temporary file `temp` (in the directory of `path`) the name `path`: without
// replacing anything there unless `overwrite` (then an existing entry is replaced, never
// followed or written into). Throws OutputError; `temp` is removed on failure.
void install_file(const std::string& temp, const std::string& path, bool overwrite);

}  // namespace sharebuf::common
