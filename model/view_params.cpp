#include "model/view_params.h"

#include <stdexcept>

namespace sharebuf::model {

const policies::ParamSpec& view_spec(std::string_view name) {
  for (const policies::ParamSpec& s : kViewParams) {
    if (s.name == name) return s;
  }
  throw std::logic_error("no view key '" + std::string(name) + "' is declared");
}

std::optional<buffer::ViewMode> view_mode(std::string_view name) {
  if (name == "exact") return buffer::ViewMode::kExact;
  if (name == "probe") return buffer::ViewMode::kProbe;
  return std::nullopt;
}

std::optional<buffer::ProbePath> probe_path(std::string_view name) {
  if (name == "direct") return buffer::ProbePath::kDirect;
  if (name == "queue") return buffer::ProbePath::kQueue;
  return std::nullopt;
}

std::optional<std::string> view_duration_error(std::string_view name, uint64_t ns) {
  const policies::ParamSpec& s = view_spec(name);
  if (static_cast<double>(ns) >= s.min && static_cast<double>(ns) <= s.max) return std::nullopt;
  return "must be " + policies::range_text(s);
}

std::string view_params_markdown() {
  std::string out;
  for (const policies::ParamSpec& s : kViewParams) {
    const std::string dflt =
        "`" + std::string(s.default_doc.empty() ? s.default_value : s.default_doc) + "`";
    out += "| | `" + std::string(s.name) + "` | " + dflt + " | " + std::string(s.help) + " (" +
           policies::range_text(s) + ") |\n";
  }
  return out;
}

}  // namespace sharebuf::model
