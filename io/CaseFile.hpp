#pragma once
// A reservoir case in physical units with ECLIPSE keyword names (docs/case-format.md): the arrays
// PERMX (kr), PERMZ (kz) and PORO on the (X = layers, Y = radial cells) grid, the cell sizes DR
// and DZ, the perforated layers, and the scalar injection and reservoir parameters. Reading
// validates everything and reports the first problem as an InputError naming the field.
#include <mpi.h>

#include <string>
#include <vector>

namespace ufno {

struct ReservoirCase {
  std::string path;
  int nx = 0, ny = 0;  // X = vertical layers (0 = top), Y = radial cells (0 = well)
  // The block of the (X, Y) arrays held here: [x0, x0 + lx) x [y0, y0 + ly); the whole grid
  // unless a distributed run read only its rank's block. DR, DZ and PERF are always whole.
  int x0 = 0, y0 = 0, lx = 0, ly = 0;
  std::vector<double> permx;    // kr [mD], (lx, ly) row-major; 0 marks cells outside the formation
  std::vector<double> permz;    // kz [mD]
  std::vector<double> poro;     // [1]
  std::vector<double> dr;       // radial cell widths [m], Y
  std::vector<double> dz;       // layer thicknesses [m], X
  std::vector<int> perforated;  // per layer flag, X
  double rate_mt_per_year = 0;  // INJ_RATE
  double temperature_c = 0;     // TEMP
  double pressure_bar = 0;      // PRESSURE (initial)
  double swi = 0;               // SWI
  double vg_lambda = 0;         // VG_LAMBDA
  std::vector<double> times_days;  // TIMES, optional (empty: the paper's 24 times)

  // Local block indices.
  bool active(int i, int j) const { return permx[std::size_t(i) * ly + j] > 0; }
};

struct CaseBlock {
  int x0 = 0, y0 = 0, lx = -1, ly = -1;  // lx < 0: the whole grid
};

// Reads and validates a case file; expected_x / expected_y are the model's grid (0: any). With a
// communicator every rank of it reads its block collectively (parallel HDF5) and validates it.
ReservoirCase read_case(const std::string& path, int expected_x = 0, int expected_y = 0,
                        CaseBlock block = {}, MPI_Comm comm = MPI_COMM_NULL);

// The ranges the training sampler draws from; values outside are allowed but warned about (the
// scalars here are for model files without a training profile, runtime/TrainingDistance.hpp).
std::vector<std::string> out_of_training_range(const ReservoirCase& c);
// The permeability part of it: counts of active cells beyond the sampler's bounds.
std::vector<std::string> permeability_out_of_training_range(const ReservoirCase& c);

// Active cells of this block with PERMX <= 1 mD, and the warning about them.
long low_permeability_cells(const ReservoirCase& c);
std::string low_permeability_warning(long cells);

}  // namespace ufno
