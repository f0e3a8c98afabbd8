// Where the data files sharebuf ships are read from (the Credence forest, the web-search and
// bimodal flow-size CDFs): beside an installed program or library, PREFIX/share/sharebuf (found
// from the file that holds this code, so an installed copy never reads the checkout it was built
// from, which may have changed or be gone), else the source tree's data/ that the build was
// configured with (a program run from its build tree).
#pragma once

#include <string>
#include <string_view>

namespace sharebuf::common {

// The path of data file `name` (e.g. "credence-forest.json"); the source tree's when no
// installed copy is beside this code (the file need not exist: the reader then names it).
std::string data_file(std::string_view name);

// The folder data_file() reads `name` from.
std::string data_dir(std::string_view name);

}  // namespace sharebuf::common
