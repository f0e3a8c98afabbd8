#include "config/toml_reader.h"

namespace sharebuf::config {

std::string location(const std::string& file, const toml::source_region& src) {
  // A node parsed from elsewhere (sharebuf-sim's --set overrides) names its own source.
  if (src.path != nullptr && !src.path->empty() && *src.path != file) return *src.path;
  std::ostringstream out;
  out << file;
  if (src.begin.line != 0) out << ":" << src.begin.line << ":" << src.begin.column;
  return out.str();
}

// Array of tables (`[[name]]`); an absent key is an empty list.
std::vector<const toml::table*> tables_of(TableReader& parent, std::string_view key) {
  std::vector<const toml::table*> out;
  const toml::node* n = parent.get(key);
  if (n == nullptr) return out;
  const toml::array* a = n->as_array();
  if (a == nullptr) parent.fail(key, "must be an array of tables ([[" + std::string(key) + "]])");
  for (const toml::node& e : *a) {
    if (!e.is_table())
      parent.fail(key, "must be an array of tables ([[" + std::string(key) + "]])");
    out.push_back(e.as_table());
  }
  return out;
}

nlohmann::json to_json(const toml::node& n) {
  if (n.is_integer()) return n.as_integer()->get();
  if (n.is_floating_point()) return n.as_floating_point()->get();
  if (n.is_boolean()) return n.as_boolean()->get();
  if (n.is_string()) return n.as_string()->get();
  if (const toml::array* a = n.as_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const toml::node& e : *a)
      out.push_back(to_json(e));
    return out;
  }
  if (const toml::table* t = n.as_table()) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [k, v] : *t)
      out[std::string(k.str())] = to_json(v);
    return out;
  }
  return nullptr;
}

}  // namespace sharebuf::config
