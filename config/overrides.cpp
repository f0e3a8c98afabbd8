#include "config/overrides.h"

#include <sstream>
#include <vector>

#include "config/toml_reader.h"

namespace sharebuf::config {
namespace {

// The value as a TOML node named `source` (a string when it is not TOML).
toml::table parse_value(const std::string& value, const std::string& source) {
  try {
    return toml::parse("v = " + value, source);
  } catch (const toml::parse_error&) {
    toml::table t;
    t.insert("v", value);
    return t;
  }
}

// The entry of an array of tables that `key` names: its number (1-based) or its interface/name.
toml::table* entry_of(toml::array& a, const std::string& key) {
  if (!key.empty() && key.find_first_not_of("0123456789") == std::string::npos) {
    const size_t i = std::stoul(key);
    return i >= 1 && i <= a.size() ? a.get(i - 1)->as_table() : nullptr;
  }
  for (toml::node& n : a) {
    toml::table* t = n.as_table();
    if (t == nullptr) continue;
    for (const char* id : {"interface", "name"}) {
      if (const auto* s = t->get_as<std::string>(id); s != nullptr && s->get() == key) return t;
    }
  }
  return nullptr;
}

}  // namespace

void apply_override(toml::table& root, const std::string& text, const std::string& origin,
                    std::string* replaced) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw ConfigError(origin + " '" + text + "': expected section.key=value");
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
    if (toml::array* a = n->as_array(); a != nullptr && a->is_array_of_tables()) {
      // [[ports]], [[classes]], ...: the next key picks the entry.
      if (i + 2 >= keys.size())
        throw ConfigError(origin + " '" + text + "': '" + keys[i] +
                          "' is a list of tables: name an entry and a key, e.g. " + keys[i] +
                          ".1.KEY or " + keys[i] + ".NAME.KEY");
      toml::table* e = entry_of(*a, keys[i + 1]);
      if (e == nullptr)
        throw ConfigError(origin + " '" + text + "': no entry '" + keys[i + 1] + "' in [[" +
                          keys[i] + "]] (a number from 1, or an interface or name)");
      t = e;
      ++i;
      continue;
    }
    if (!n->is_table()) {
      throw ConfigError(origin + " '" + text + "': '" + keys[i] + "' is not a table");
    }
    t = n->as_table();
  }
  if (replaced != nullptr) {
    replaced->clear();
    if (const toml::node* old = t->get(keys.back())) {
      std::ostringstream s;
      old->visit([&](const auto& v) { s << v; });
      *replaced = s.str();
    }
  }
  toml::table parsed = parse_value(value, origin + " " + path);
  // Moved, not copied: a copied toml++ node forgets where it came from, and errors name it.
  t->insert_or_assign(keys.back(), std::move(*parsed.get("v")));
}

nlohmann::json override_value(const std::string& value) {
  return to_json(*parse_value(value, "value").get("v"));
}

}  // namespace sharebuf::config
