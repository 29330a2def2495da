#pragma once
// One thread setting for every thread pool: FFTW's threads and the OpenMP pool that oneDNN's
// convolutions and GEMMs and ufno::parallel_for's host kernels share, so that ranks x threads
// never oversubscribe the cores.
namespace ufno::backend {

void set_threads(int n);
// Cores of this machine divided by the ranks sharing it, at least 1.
int default_threads(int ranks_on_node = 1);

}  // namespace ufno::backend
