// Overrides: the one way every sharebuf program lets a setting be changed on top of a
// configuration — `section.key=value`, the TOML file's own path and value syntax:
//   sharebufd --set, sharebufctl set (the daemon's config.set), sharebuf-replay --set,
//   sharebuf-sim --set, the ns-3 queue disc's Overrides attribute.
// The path names a table's key (`policy.alpha=2`, `buffer.view=probe`, `trimming.trim_size=256`);
// an array of tables takes the entry's number, as errors name it (`ports.2.rate=50Mbit` is
// [[ports]] #2) or the entry's `interface` or `name` (`ports.p2.rate=50Mbit`,
// `classes.data.overflow=trim`). The value is TOML ("0.6", "\"dt\"", "[1, 2]",
// "{name = \"dt\"}") or, if it does not parse as TOML, a string (`buffer.view=probe`).
#pragma once

#include <string>

#include <toml++/toml.h>
#include <nlohmann/json.hpp>

namespace sharebuf::config {

// Applies "a.b.c=value" to `root`: tables on the way are made when missing (an entry of an array
// of tables must exist). Errors (ConfigError) name the override; the value's node remembers it
// came from "--set key.path" (`origin` replaces "--set") so a bad value's error names it.
// `replaced` (optional): the value it replaced, as TOML text, or empty when the key was unset.
void apply_override(toml::table& root, const std::string& text, const std::string& origin = "--set",
                    std::string* replaced = nullptr);

// An override's value as JSON: TOML, or the text as a string when it does not parse as TOML
// (what a policy's parameter takes from `sharebuf-replay --policy dt:alpha=2`).
nlohmann::json override_value(const std::string& value);

}  // namespace sharebuf::config
