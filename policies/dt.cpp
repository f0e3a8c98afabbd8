#include "policies/dt.h"

#include <algorithm>
#include <cmath>

namespace sharebuf::policies {

DtPolicy::DtPolicy(const Params& params, const PolicyEnv& env) : Policy(env) {
  ParamReader reader(kName, params, kParams);
  alpha_ = reader.number("alpha");
  set_params(reader.values());
  alphas_ = resolve_alphas(env, alpha_);
}

uint32_t DtPolicy::threshold_cells(uint32_t, uint8_t class_id,
                                   const BufferView& view) const noexcept {
  return dt_threshold_cells(alphas_[class_id], view);
}

nlohmann::json DtPolicy::describe(const BufferView& view) const {
  nlohmann::json d = Policy::describe(view);
  nlohmann::json alphas = nlohmann::json::array();
  for (size_t c = 0; c < env().num_classes(); ++c)
    alphas.push_back(alphas_[c]);
  d["state"]["class_alpha"] = alphas;
  return d;
}

}  // namespace sharebuf::policies
