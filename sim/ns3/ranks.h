// Ranks: the processes of one sharebuf-sim run (C++17). sharebuf-sim is one process;
// sharebuf-sim-mpi (built against an ns-3 with its distributed simulator: ./run.sh ns3-mpi) is as
// many as `mpirun -np N` starts, each simulating its share of the fabric (fabric_partition.h) on
// ns-3's distributed simulator. Two implementations: ranks_single.cc and ranks_mpi.cc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sharebuf::sim {

struct Ranks {
  // ns-3's two ways of keeping ranks in step: a barrier every lookahead (the smallest delay of a
  // link between ranks) for every rank, or null messages between neighbouring ranks only.
  static constexpr const char* kSchedulers[] = {"granted-time-window", "null-message"};
  // Whether this build can run on several ranks.
  static bool Distributed();
  // Before any ns-3 object exists: with MPI, selects the distributed simulator of `scheduler`
  // and joins the MPI run.
  static void Start(int* argc, char*** argv, const std::string& scheduler);
  static uint32_t Size();
  static uint32_t Rank();
  // Every rank's `mine`, in rank order, on rank 0 (empty on the others).
  static std::vector<std::string> Gather(const std::string& mine);
  // Leaves the MPI run (every rank, at the end).
  static void Finish();
  // Ends every rank of the run, after a failure in this one.
  [[noreturn]] static void Abort(int status);
};

}  // namespace sharebuf::sim
