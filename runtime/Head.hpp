#pragma once
// A head: a small estimator that a model file carries (python3 -m ufno.<kind>_head fits it to
// OPM Flow) and that corrects what the network's field alone gets wrong. Each head acts at one
// stage of a case's evaluation (docs/architecture.md):
// - HeadStage::Field, on the network's dP field inside the prediction, before the field is
//   written or read: the dP field-scale head (runtime/DpFieldScale.hpp);
// - HeadStage::Kpis, on the KPIs computed from the fields: the maximum-dP, plume-radius,
//   CO2-mass and dP-envelope heads (screening/KpiHeads.hpp).
// screening/HeadRegistry.hpp holds a run's heads, all five kinds, and hands its field stage to
// the prediction (runtime/Heads.hpp).
#include <mpi.h>

#include <string>
#include <vector>

#include "core/WeightSource.hpp"
#include "io/CaseFile.hpp"

namespace ufno {

enum class HeadStage { Field, Kpis };

// What the heads of one stage read and change; each stage has its own kind (below and
// screening/KpiHeads.hpp), and a head is only given its own stage's.
struct HeadInput {
  explicit HeadInput(HeadStage s) : stage(s) {}
  virtual ~HeadInput() = default;
  const HeadStage stage;
};

class Head {
 public:
  virtual ~Head() = default;
  virtual HeadStage stage() const = 0;
  // The group of the model file that holds it ("max_dp_head", ...).
  virtual const std::string& group() const = 0;
  // InputError naming the file and attribute when the head cannot do what its kind is for;
  // called once, when it is read.
  virtual void validate() const = 0;
  // Changes `in`, which is of this head's stage. A case outside the head's training ranges keeps
  // the values it has.
  virtual void apply(HeadInput& in) const = 0;
  // Whether it needs the whole case files of a pass (FieldHeadInput::cases), not only the
  // encoded input.
  virtual bool reads_whole_cases() const { return false; }
};

// The field stage: this rank's block (B, T, lx, ly) of the network's dP field, in place, with
// the block (B, lx, ly, T, C) of the encoded input it was predicted from and where the block lies
// in the model's X x Y grid. Collective over comm (a head reads the whole grid). `cases` and
// `times_days`: the pass's whole cases, one per case, and its report times, when it was
// predicted from case files (empty and null for encoded tensors).
struct FieldHeadInput : HeadInput {
  FieldHeadInput(std::vector<float>& dp_, const HostArray& input_, const CaseBlock& block_, int X_,
                 int Y_, MPI_Comm comm_)
      : HeadInput(HeadStage::Field),
        dp(dp_),
        input(input_),
        block(block_),
        X(X_),
        Y(Y_),
        comm(comm_) {}
  std::vector<float>& dp;
  const HostArray& input;
  CaseBlock block;
  int X, Y;
  MPI_Comm comm;
  std::vector<const ReservoirCase*> cases;
  const std::vector<double>* times_days = nullptr;
};

}  // namespace ufno
