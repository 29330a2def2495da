// FFTW (single precision) implementation of Fft1dPlan: guru interface, one transform dimension and
// two batch dimensions (outer, inner), so strided middle axes need no transposes.
#include <fftw3.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <stdexcept>

#include "core/LaunchLog.hpp"
#include "fft/Fft1dPlan.hpp"

namespace ufno::fft {

namespace {

std::mutex& planner_mutex() {  // the FFTW planner is not thread safe
  static std::mutex m;
  return m;
}

int g_threads = 1;

// The wisdom file: plans are measured and their wisdom kept there. Empty: plans are estimated.
// Chosen by set_fft_wisdom_file (RunOptions::fftw_wisdom); none: estimated plans.
std::string g_wisdom;
bool g_wisdom_chosen = false;

void load_wisdom_locked(const std::string& path) {
  g_wisdom = path;
  g_wisdom_chosen = true;
  if (path.empty() || !std::ifstream(path).good()) return;  // a new file is written later
  if (!fftwf_import_wisdom_from_filename(path.c_str()))
    throw std::invalid_argument(path +
                                ": not an FFTW single-precision wisdom file (delete it to "
                                "start a new one)");
}

// All wisdom so far, to a temporary name and renamed: a reader never sees half a file, and
// ranks writing at once leave one whole file.
void save_wisdom_locked() {
  const std::string tmp = g_wisdom + ".tmp" + std::to_string(getpid());
  if (!fftwf_export_wisdom_to_filename(tmp.c_str()) || std::rename(tmp.c_str(), g_wisdom.c_str())) {
    std::remove(tmp.c_str());
    throw std::runtime_error(g_wisdom + ": cannot write the FFTW wisdom file");
  }
}

// Scratch arrays for a measured plan, which overwrites the arrays it times: `floats` floats
// starting at the same alignment as `like` (new-array execution needs equal alignment).
struct Scratch {
  float* base = nullptr;
  float* at = nullptr;
  Scratch(long floats, const void* like) {
    base = static_cast<float*>(fftwf_malloc(sizeof(float) * (floats + 16)));
    if (!base) throw std::bad_alloc();
    at = base +
         fftwf_alignment_of(const_cast<float*>(static_cast<const float*>(like))) / sizeof(float);
  }
  ~Scratch() { fftwf_free(base); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
};

class FftwPlan1d final : public Fft1dPlan {
 public:
  FftwPlan1d(Transform t, const Batch1d& b) : t_(t), b_(b) {
    if (b.n < 1 || b.outer < 0 || b.inner < 1 ||
        std::any_of(b.lead.begin(), b.lead.end(), [](int v) { return v < 1; }))
      throw std::invalid_argument("fft: invalid batch shape");
  }
  ~FftwPlan1d() override {
    std::lock_guard<std::mutex> lock(planner_mutex());
    if (plan_) fftwf_destroy_plan(plan_);
  }
  Transform transform() const override { return t_; }
  const Batch1d& batch() const override { return b_; }

  void execute(void* in, void* out) override {
    if (b_.outer == 0) return;
    // New-array execution needs the alignment and in-placeness the plan was made for.
    const int ai = fftwf_alignment_of(static_cast<float*>(in));
    const int ao = fftwf_alignment_of(static_cast<float*>(out));
    const bool inplace = in == out;
    if (!plan_ || ai != align_in_ || ao != align_out_ || inplace != inplace_) make(in, out);
    // A multi-axis plan transforms one outer slice; the slices run one after another.
    for (long o = 0; o < slices_; ++o) {
      float* i = static_cast<float*>(in) + o * in_step_;
      float* u = static_cast<float*>(out) + o * out_step_;
      switch (t_) {
        case Transform::R2C:
          fftwf_execute_dft_r2c(plan_, i, reinterpret_cast<fftwf_complex*>(u));
          break;
        case Transform::C2R:
          fftwf_execute_dft_c2r(plan_, reinterpret_cast<fftwf_complex*>(i), u);
          break;
        default:
          fftwf_execute_dft(plan_, reinterpret_cast<fftwf_complex*>(i),
                            reinterpret_cast<fftwf_complex*>(u));
      }
      LaunchLog::record_library("fftw::execute");
    }
  }

 private:
  void make(void* in, void* out) {
    std::lock_guard<std::mutex> lock(planner_mutex());
    if (plan_) fftwf_destroy_plan(plan_);
    const int n = b_.n;
    const long inner = b_.inner;
    const long nc = n / 2 + 1;  // complex length of a real transform
    const long in_len = (t_ == Transform::C2R) ? nc : n;
    const long out_len = (t_ == Transform::R2C) ? nc : n;
    // The transformed axes, outermost first: the lead axes (whole in and out), then n.
    std::vector<fftwf_iodim> dims(b_.lead.size() + 1);
    long is = inner, os = inner;
    dims.back() = {n, int(is), int(os)};
    is *= in_len;
    os *= out_len;
    for (std::size_t i = b_.lead.size(); i-- > 0;) {
      dims[i] = {b_.lead[i], int(is), int(os)};
      is *= b_.lead[i];
      os *= b_.lead[i];
    }
    // Several axes at once: one slice per plan (measured faster than FFTW's own loop over the
    // outer slices: it parallelises and vectorises within the slice's transform), executed per
    // slice; one axis: every slice in the plan.
    const bool per_slice = !b_.lead.empty();
    slices_ = per_slice ? b_.outer : 1;
    in_step_ = is * (t_ == Transform::R2C ? 1 : 2);
    out_step_ = os * (t_ == Transform::C2R ? 1 : 2);
    fftwf_iodim many[2] = {{int(per_slice ? 1 : b_.outer), int(is), int(os)}, {int(inner), 1, 1}};
    // ESTIMATE never touches the arrays, so it plans on the caller's; MEASURE runs candidate
    // transforms, so it plans on scratch arrays of the same alignment.
    const bool measure = !g_wisdom.empty();
    // Slices that do not all share the first one's SIMD alignment need unaligned codelets.
    const bool slices_aligned = !per_slice || ((in_step_ * sizeof(float)) % 64 == 0 &&
                                               (out_step_ * sizeof(float)) % 64 == 0);
    const unsigned flags =
        (measure ? FFTW_MEASURE : FFTW_ESTIMATE) | (slices_aligned ? 0u : unsigned(FFTW_UNALIGNED));
    const bool inplace = in == out;
    long lead_cells = 1;
    for (int v : b_.lead) lead_cells *= v;
    const long in_floats = b_.outer * lead_cells * in_len * inner * (t_ == Transform::R2C ? 1 : 2);
    const long out_floats =
        b_.outer * lead_cells * out_len * inner * (t_ == Transform::C2R ? 1 : 2);
    std::unique_ptr<Scratch> s_in, s_out;
    void* const caller_in = in;
    void* const caller_out = out;
    if (measure) {
      s_in = std::make_unique<Scratch>(inplace ? std::max(in_floats, out_floats) : in_floats, in);
      in = s_in->at;
      if (inplace) {
        out = in;
      } else {
        s_out = std::make_unique<Scratch>(out_floats, out);
        out = s_out->at;
      }
    }
    fftwf_plan_with_nthreads(g_threads);
    const int rank = int(dims.size());
    switch (t_) {
      case Transform::R2C:
        plan_ = fftwf_plan_guru_dft_r2c(rank, dims.data(), 2, many, static_cast<float*>(in),
                                        static_cast<fftwf_complex*>(out), flags);
        break;
      case Transform::C2R:
        plan_ = fftwf_plan_guru_dft_c2r(rank, dims.data(), 2, many, static_cast<fftwf_complex*>(in),
                                        static_cast<float*>(out), flags | FFTW_DESTROY_INPUT);
        break;
      default:
        plan_ =
            fftwf_plan_guru_dft(rank, dims.data(), 2, many, static_cast<fftwf_complex*>(in),
                                static_cast<fftwf_complex*>(out),
                                t_ == Transform::C2C_FORWARD ? FFTW_FORWARD : FFTW_BACKWARD, flags);
    }
    if (!plan_)
      throw std::runtime_error("fft: FFTW could not plan a " + to_string(t_) + " of length " +
                               std::to_string(n));
    if (measure) save_wisdom_locked();
    align_in_ = fftwf_alignment_of(static_cast<float*>(caller_in));
    align_out_ = fftwf_alignment_of(static_cast<float*>(caller_out));
    inplace_ = inplace;
  }

  Transform t_;
  Batch1d b_;
  fftwf_plan plan_ = nullptr;
  long slices_ = 1, in_step_ = 0, out_step_ = 0;  // slices per execute, their strides (floats)
  int align_in_ = -1, align_out_ = -1;
  bool inplace_ = false;
};

}  // namespace

std::string to_string(Transform t) {
  switch (t) {
    case Transform::R2C:
      return "r2c";
    case Transform::C2R:
      return "c2r";
    case Transform::C2C_FORWARD:
      return "c2c forward";
    default:
      return "c2c backward";
  }
}

std::unique_ptr<Fft1dPlan> FftPlans<backend::Host>::make(Transform t, const Batch1d& b) {
  return std::make_unique<FftwPlan1d>(t, b);
}

void set_fft_wisdom_file(const std::string& path) {
  std::lock_guard<std::mutex> lock(planner_mutex());
  load_wisdom_locked(path);
}

void set_fft_threads(int n) {
  static bool initialised = false;
  std::lock_guard<std::mutex> lock(planner_mutex());
  if (!initialised) {
    fftwf_init_threads();
    initialised = true;
  }
  g_threads = n < 1 ? 1 : n;
}

}  // namespace ufno::fft
