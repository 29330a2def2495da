#pragma once
// The paper's encoding of a reservoir case into the network's 12 input channels
// (docs/case-format.md lists them): log-permeabilities, porosity, the perforation, five scalar
// parameters mapped to [0, 1] over the training ranges, and the r, z and t coordinates.
#include <string>
#include <vector>

#include "core/WeightSource.hpp"
#include "io/CaseFile.hpp"

namespace ufno {

constexpr int kInputChannels = 12;

// The paper's report times: t_k = sum_{i<=k} 1.421245^i days, k = 0..n-1 (24: 1 day to 30 years).
std::vector<double> paper_times_days(int n);

// Channel-last (1, lx, ly, T, 12) of the case's block (the whole grid unless read by block) for
// T report times (the case's TIMES if it has them, which must
// then number T, else the paper's times).
HostArray encode_case(const ReservoirCase& c, int nt);

// Refuses an encoded input (from a tensor file, or a case whose fields made it) holding NaN,
// Inf or values far outside the encoding's range (about [-1, 2] per channel): inside the network
// they overflow into NaNs that ReLUs hide. The InputError names `path` and `field`.
constexpr float kMaxEncodedValue = 1000.0f;
void check_encoded(const HostArray& a, const std::string& path, const std::string& field);

// The inverse of the scalar encodings, for reports and tests.
double encoded_rate(double rate_mt_per_year);
double decoded_rate(double a);
constexpr int kSwiChannel = 7;
double decoded_swi(double a);

}  // namespace ufno
