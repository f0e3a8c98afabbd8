#include "policies/cs.h"

namespace sharebuf::policies {

CsPolicy::CsPolicy(const Params& params, const PolicyEnv& env) : Policy(env) {
  ParamReader reader(kName, params, kParams);
}

}  // namespace sharebuf::policies
