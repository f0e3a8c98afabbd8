// Ranks for sharebuf-sim built without MPI: one process (ranks.h).
#include <cstdlib>

#include "sim/ns3/ranks.h"

namespace sharebuf::sim {

bool Ranks::Distributed() {
  return false;
}
void Ranks::Start(int*, char***, const std::string&) {}
uint32_t Ranks::Size() {
  return 1;
}
uint32_t Ranks::Rank() {
  return 0;
}
std::vector<std::string> Ranks::Gather(const std::string& mine) {
  return {mine};
}
void Ranks::Finish() {}
void Ranks::Abort(int status) {
  std::exit(status);
}

}  // namespace sharebuf::sim
