#include "config/overrides.h"

#include <sstream>
#include <vector>

#include "config/toml_reader.h"

namespace sharebuf::config {

void apply_override(toml::table& root, const std::string& text, const std::string& origin) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw ConfigError(origin + " '" + text + "': expected key.path=value");
  }
  const std::string path = text.substr(0, eq);
  const std::string value = text.substr(eq + 1);
  std::vector<std::string> keys;
  std::stringstream in(path);
  for (std::string k; std::getline(in, k, '.');) {
    if (k.empty()) throw ConfigError(origin + " '" + text + "': empty key in '" + path + "'");
    keys.push_back(k);
  }
  toml::table* t = &root;
  for (size_t i = 0; i + 1 < keys.size(); ++i) {
    toml::node* n = t->get(keys[i]);
    if (n == nullptr) {
      t->insert(keys[i], toml::table{});
      n = t->get(keys[i]);
    }
    if (!n->is_table()) {
      throw ConfigError(origin + " '" + text + "': '" + keys[i] + "' is not a table");
    }
    t = n->as_table();
  }
  const std::string source = origin + " " + path;
  toml::table parsed;
  try {
    parsed = toml::parse("v = " + value, source);
  } catch (const toml::parse_error&) {
    parsed = toml::table{};
    parsed.insert("v", value);
  }
  // Moved, not copied: a copied toml++ node forgets where it came from, and errors name it.
  t->insert_or_assign(keys.back(), std::move(*parsed.get("v")));
}

}  // namespace sharebuf::config
