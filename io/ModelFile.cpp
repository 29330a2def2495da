#include "io/ModelFile.hpp"

#include <cmath>

#include "io/ModelAttributes.hpp"

namespace ufno {

ModelFile::ModelFile(const std::string& path) : file_(h5::File::open_read(path)) {
  read_spec();
  check_layers();
}

void ModelFile::read_spec() {
  const auto& f = file_;
  ModelSpec& s = spec_;
  s.architecture = model_architecture(f);
  if (s.architecture == "FNO4D")
    throw InputError(f.path(), "architecture",
                     "a 4-D FNO (FNO4D) where a U-FNO or FNO was expected: it predicts "
                     "tensors (ufno_predict --tensor), not cases");
  if (s.architecture != "UFNO" && s.architecture != "FNO")
    throw InputError(f.path(), "architecture",
                     "must be \"UFNO\" or \"FNO\", not \"" + s.architecture + "\"");
  s.variable = f.string_attribute_required("variable");
  if (s.variable != "SG" && s.variable != "dP")
    throw InputError(f.path(), "variable", "must be \"SG\" or \"dP\", not \"" + s.variable + "\"");
  s.width = int_attr(f, "width", 1);
  s.modes = int_array_attr<3>(f, "modes", 1);
  s.n_fourier = int_attr(f, "n_fourier", 0);
  s.n_ufourier = int_attr(f, "n_ufourier", 0);
  s.in_channels = int_attr(f, "in_channels", 1);
  s.hidden = int_attr(f, "hidden", 1);
  s.padding = int_array_attr<3>(f, "padding", 0);
  s.grid = int_array_attr<3>(f, "grid", 1);
  s.output_scale = double_attr(f, "output_scale");
  s.output_offset = double_attr(f, "output_offset");
  s.output_units = f.string_attribute_required("output_units");
  s.leaky_slope = double_attr(f, "leaky_relu_slope");
  s.bn_eps = double_attr(f, "batchnorm_eps");
  if (s.layers() < 1) throw InputError(f.path(), "n_fourier", "the model has no Fourier layer");
  check_sizes();
  if (!(s.bn_eps > 0 && s.bn_eps <= 1))
    throw InputError(f.path(), "batchnorm_eps", "must be in (0, 1]");
  if (!(s.leaky_slope >= 0 && s.leaky_slope <= 1))
    throw InputError(f.path(), "leaky_relu_slope", "must be in [0, 1]");
  if (s.output_scale == 0 || std::abs(s.output_scale) > kMaxWeight ||
      std::abs(s.output_offset) > kMaxWeight)
    throw InputError(f.path(), "output_scale",
                     "the output scaling must be non-zero and below " + std::to_string(kMaxWeight));
  if ((s.architecture == "FNO") != (s.n_ufourier == 0))
    throw InputError(
        f.path(), "n_ufourier",
        "contradicts architecture " + s.architecture + " (FNO has no U-Fourier layer)");
  const auto p = s.padded_grid();
  const char* axis[3] = {"X", "Y", "T"};
  for (int a = 0; a < 3; ++a) {
    const int limit = a == 2 ? p[a] / 2 + 1 : p[a] / 2;
    if (s.modes[a] > limit)
      throw InputError(
          f.path(), "modes",
          std::string("mode count along ") + axis[a] + " exceeds what the padded grid holds");
    if (s.n_ufourier > 0 && p[a] % 8 != 0)
      throw InputError(
          f.path(), "grid",
          std::string("padded ") + axis[a] + " extent must be divisible by 8 for the U-Net");
  }
}

// Sizes are checked against each other and against fixed bounds before anything is allocated:
// a model file whose grid attribute is 2^30 must not make the program allocate until it is killed.
void ModelFile::check_sizes() const {
  const ModelSpec& s = spec_;
  const auto& f = file_;
  check_at_most(f, "width", s.width, 4096);
  check_at_most(f, "hidden", s.hidden, 65536);
  check_at_most(f, "in_channels", s.in_channels, 1024);
  check_at_most(f, "n_fourier", s.n_fourier, 64);
  check_at_most(f, "n_ufourier", s.n_ufourier, 64);
  for (int a = 0; a < 3; ++a) {
    check_at_most(f, "grid", s.grid[a], 1 << 20);
    // The paper pads 8 cells; padding beyond the grid itself buys nothing.
    check_at_most(f, "padding", s.padding[a], s.grid[a] + 64);
    check_at_most(f, "modes", s.modes[a], 1 << 20);
  }
  const auto p = s.padded_grid();
  const double cells = double(p[0]) * p[1] * p[2];
  // One activation of the padded grid, in bytes: the least any run needs several of.
  const double bytes = cells * s.width * 4.0;
  if (cells > double(1u << 31) || bytes > kMaxActivationBytes)
    throw InputError(f.path(), "grid",
                     "padded grid of " + std::to_string(long(cells)) + " cells x width " +
                         std::to_string(s.width) + " is beyond what this build runs");
}

void ModelFile::check_layers() const {
  // The datasets must describe exactly the layers the attributes announce.
  const std::string pre = "conv1.";
  for (int k = 0; k < spec_.layers(); ++k)
    if (!has(pre + "conv" + std::to_string(k) + ".weights1"))
      throw InputError(file_.path(), pre + "conv" + std::to_string(k) + ".weights1",
                       "dataset is missing but the attributes announce " +
                           std::to_string(spec_.layers()) + " Fourier layers");
  const std::string extra = pre + "conv" + std::to_string(spec_.layers()) + ".weights1";
  if (has(extra))
    throw InputError(file_.path(), extra,
                     "dataset present but the attributes announce only " +
                         std::to_string(spec_.layers()) + " Fourier layers");
  for (int k = 0; k < spec_.layers(); ++k) {
    const std::string u = pre + "unet" + std::to_string(k) + ".conv1.0.weight";
    const bool want = k >= spec_.n_fourier;
    if (has(u) != want)
      throw InputError(
          file_.path(), u,
          want ? "dataset is missing but layer " + std::to_string(k) + " is a U-Fourier layer"
               : "dataset present but layer " + std::to_string(k) +
                     " is a plain Fourier layer in the attributes");
  }
}

bool ModelFile::has(const std::string& name) const { return file_.has_dataset(name); }

std::vector<std::size_t> ModelFile::shape(const std::string& name) const {
  if (!file_.has_dataset(name)) throw InputError(file_.path(), name, "dataset is missing");
  return file_.shape(name);
}

HostArray ModelFile::get(const std::string& name) const {
  return read_checked_weights(file_, name);
}

HostArray ModelFile::get_block(const std::string& name, const std::vector<std::size_t>& start,
                               const std::vector<std::size_t>& count) const {
  HostArray b;
  get_block_into(name, start, count, b);
  return b;
}

void ModelFile::get_block_into(const std::string& name, const std::vector<std::size_t>& start,
                               const std::vector<std::size_t>& count, HostArray& out,
                               bool check_values) const {
  const auto s = shape(name);
  if (s.size() != start.size() || s.size() != count.size())
    throw InputError(file_.path(), name, "block of the wrong rank requested");
  read_checked_block_into(file_, name, start, count, out, check_values);
}

}  // namespace ufno
