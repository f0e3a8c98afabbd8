#include "policies/fab.h"

#include <algorithm>
#include <cmath>

namespace sharebuf::policies {

FabPolicy::FabPolicy(const Params& params, const PolicyEnv& env)
    : FabPolicy(ParamReader(kName, params, kParams), env) {}

FabPolicy::FabPolicy(const ParamReader& reader, const PolicyEnv& env)
    : Policy(env),
      as_coded_(reader.choice("variant") == "as-coded"),
      alpha_(reader.number("alpha")),
      alpha_short_(as_coded_ && !reader.has("alpha_short") ? kAsCodedAlphaShort
                                                           : reader.number("alpha_short")),
      short_bytes_(as_coded_ && !reader.has("short_bytes")
                       ? kAsCodedShortBytes
                       : static_cast<uint64_t>(reader.integer("short_bytes"))),
      alphas_(resolve_alphas(env, alpha_)),
      flows_(static_cast<uint64_t>(reader.integer("flow_table_size")),
             reader.number("window_us") * 1000) {
  // params() says what runs: the as-coded defaults where they replaced the declared ones.
  nlohmann::json values = reader.values();
  values["alpha_short"] = alpha_short_;
  values["short_bytes"] = short_bytes_;
  set_params(values);
}

uint32_t FabPolicy::threshold_cells(uint32_t, uint8_t class_id,
                                    const BufferView& view) const noexcept {
  return dt_threshold_cells(alphas_[class_id], view);
}

}  // namespace sharebuf::policies
