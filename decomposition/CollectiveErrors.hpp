#pragma once
// Bad input found by one rank (a NaN in its block, say) must not leave the others waiting in the
// next collective call. Steps that can fail on input run inside `collectively`: every rank runs
// the step, then they agree; if any rank failed, all throw the same AgreedInputError carrying the
// lowest failing rank's message, so rank 0 can report it and every rank exits non-zero.
#include <mpi.h>

#include <climits>
#include <string>

#include "core/InputError.hpp"

namespace ufno::dist {

class AgreedInputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

template <class F>
void collectively(MPI_Comm comm, F&& step) {
  std::string msg;
  try {
    step();
  } catch (const InputError& e) {
    msg = e.what();
    if (msg.empty()) msg = "unknown input error";
  }
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  int mine = msg.empty() ? INT_MAX : rank, first = INT_MAX;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == INT_MAX) return;
  int len = int(msg.size());
  MPI_Bcast(&len, 1, MPI_INT, first, comm);
  msg.resize(len);
  MPI_Bcast(msg.data(), len, MPI_CHAR, first, comm);
  throw AgreedInputError(msg);
}

}  // namespace ufno::dist
