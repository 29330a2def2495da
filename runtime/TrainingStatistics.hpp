#pragma once
// The statistics of a case that the training data's profile holds (python/ufno/data/
// training_profile.py STATISTICS, io/TrainingProfileFile.hpp): the five scalars, the formation's
// and the completion's layers, and summaries of the permeability and porosity fields.
//
// The field summaries are finished from sums over the formation's cells (FieldMoments), so that a
// distributed run adds its ranks' blocks with one MPI_Allreduce and every rank gets the same
// statistics. Computed in double precision from the case's values; python's from the encoded
// float32 channels: equal to about 1e-6.
#include <mpi.h>

#include <string>
#include <vector>

#include "io/CaseFile.hpp"

namespace ufno {

// The statistics' names, in the profile's order.
const std::vector<std::string>& training_statistic_names();
// A statistic's unit in words ("Mt/yr"; "" for none).
std::string training_statistic_unit(const std::string& name);

// Sums over the formation's cells of one block of a case, per layer where the statistics need it.
class FieldMoments {
 public:
  explicit FieldMoments(int layers);
  // Adds the cells of the block `c` holds.
  void add(const ReservoirCase& c);
  // Adds every rank's sums (collective over comm; nothing for MPI_COMM_NULL).
  void sum_over(MPI_Comm comm);
  // The statistics of the case whose cells were added (scalars and perforation from `c`).
  std::vector<double> finish(const ReservoirCase& c) const;

 private:
  int layers_;
  std::vector<double> v_;  // see FieldMoments.cpp for the layout
};

// The statistics of a case held whole (or of the block it holds, summed over comm).
std::vector<double> training_statistics(const ReservoirCase& c, MPI_Comm comm = MPI_COMM_NULL);

}  // namespace ufno
