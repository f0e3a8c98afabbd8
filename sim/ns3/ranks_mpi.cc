// Ranks for sharebuf-sim-mpi: ns-3's distributed simulator over MPI (ranks.h).
#include <mpi.h>

#include <cstdlib>
#include <stdexcept>

#include "ns3/core-module.h"
#include "ns3/mpi-interface.h"
#include "sim/ns3/ranks.h"

namespace sharebuf::sim {

bool Ranks::Distributed() {
  return true;
}

void Ranks::Start(int* argc, char*** argv, const std::string& scheduler) {
  // ns-3 reads the implementation when MPI is enabled (MpiInterface::Enable picks the matching
  // communication interface).
  ns3::GlobalValue::Bind(
      "SimulatorImplementationType",
      ns3::StringValue(scheduler == "null-message" ? "ns3::NullMessageSimulatorImpl"
                                                   : "ns3::DistributedSimulatorImpl"));
  ns3::MpiInterface::Enable(argc, argv);
}

uint32_t Ranks::Size() {
  return ns3::MpiInterface::GetSize();
}
uint32_t Ranks::Rank() {
  return ns3::MpiInterface::GetSystemId();
}

std::vector<std::string> Ranks::Gather(const std::string& mine) {
  const MPI_Comm comm = ns3::MpiInterface::GetCommunicator();
  const int n = static_cast<int>(Size());
  if (mine.size() > static_cast<size_t>(INT32_MAX))
    throw std::runtime_error("a rank's results exceed 2 GB");
  const int size = static_cast<int>(mine.size());
  std::vector<int> sizes(Rank() == 0 ? n : 0), offsets(sizes.size());
  MPI_Gather(&size, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, comm);
  std::string all;
  if (Rank() == 0) {
    long long total = 0;
    for (int r = 0; r < n; ++r) {
      offsets[r] = static_cast<int>(total);
      total += sizes[r];
    }
    if (total > INT32_MAX) throw std::runtime_error("the ranks' results exceed 2 GB");
    all.resize(static_cast<size_t>(total));
  }
  MPI_Gatherv(mine.data(), size, MPI_CHAR, all.data(), sizes.data(), offsets.data(), MPI_CHAR, 0,
              comm);
  std::vector<std::string> out;
  for (size_t r = 0; r < sizes.size(); ++r)
    out.push_back(all.substr(static_cast<size_t>(offsets[r]), static_cast<size_t>(sizes[r])));
  return out;
}

void Ranks::Finish() {
  ns3::MpiInterface::Disable();
}

void Ranks::Abort(int status) {
  MPI_Abort(MPI_COMM_WORLD, status);
  std::exit(status);
}

}  // namespace sharebuf::sim
