#pragma once
// One thread setting for every thread pool: FFTW's threads and the OpenMP pool that oneDNN's
// convolutions and GEMMs and ufno::parallel_for's host kernels share, so that ranks x threads
// never oversubscribe the cores.
namespace ufno::backend {

// The programs choose the count (runtime/ThreadDefaults.hpp); this sets it everywhere.
void set_threads(int n);

}  // namespace ufno::backend
