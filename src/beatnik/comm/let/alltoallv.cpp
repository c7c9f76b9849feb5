// LET push by the dense collectives: counts by MPI_Alltoall, blocks by MPI_Alltoallv (every
// rank pair takes part, empty or not). The baseline the other strategies are measured against.
#include "beatnik/comm/let/push.hpp"

namespace beatnik::comm::let {

std::unique_ptr<Strategy> make_alltoallv(const Setup& s) { return std::make_unique<Push>(s, "alltoallv"); }

}  // namespace beatnik::comm::let
