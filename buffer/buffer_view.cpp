#include "buffer/buffer_view.h"

namespace sharebuf::buffer {

std::optional<ViewMode> view_mode_from_string(std::string_view s) noexcept {
  if (s == "exact") return ViewMode::kExact;
  if (s == "probe") return ViewMode::kProbe;
  return std::nullopt;
}

}  // namespace sharebuf::buffer
