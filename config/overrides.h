// "a.b.c=value" overrides of a parsed TOML table: sharebuf-sim's --set, and the attributes of
// SharebufQueueDisc applied to its configuration (C++20: the facade's side, never ns-3's).
#pragma once

#include <string>

#include <toml++/toml.h>

namespace sharebuf::config {

// Applies "a.b.c=value" to `root`: tables on the way are made when missing; the value is TOML
// ("0.6", "\"dt\"", "[1, 2]", "{name = \"dt\"}") or, if it does not parse as TOML, a string.
// Errors (ConfigError) name the override; the value's node remembers it came from
// "--set key.path" (`origin` replaces "--set") so a bad value's error names it.
void apply_override(toml::table& root, const std::string& text,
                    const std::string& origin = "--set");

}  // namespace sharebuf::config
