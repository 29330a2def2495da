#include "io/ModelFile.hpp"

#include <cmath>

namespace ufno {

namespace {

int as_int(const h5::File& f, const std::string& attr, double v) {
  if (!std::isfinite(v) || v != std::floor(v))
    throw InputError(f.path(), attr, "attribute is not an integer");
  return int(v);
}

int int_attr(const h5::File& f, const std::string& attr, int min) {
  auto v = f.numeric_attribute(attr);
  if (v.size() != 1) throw InputError(f.path(), attr, "attribute must be a scalar");
  const int i = as_int(f, attr, v[0]);
  if (i < min) throw InputError(f.path(), attr, "attribute must be >= " + std::to_string(min));
  return i;
}

std::array<int, 3> int3_attr(const h5::File& f, const std::string& attr, int min) {
  auto v = f.numeric_attribute(attr);
  if (v.size() != 3) throw InputError(f.path(), attr, "attribute must hold 3 values (X, Y, T)");
  std::array<int, 3> r;
  for (int a = 0; a < 3; ++a) {
    r[a] = as_int(f, attr, v[a]);
    if (r[a] < min) throw InputError(f.path(), attr, "values must be >= " + std::to_string(min));
  }
  return r;
}

double double_attr(const h5::File& f, const std::string& attr) {
  auto v = f.numeric_attribute(attr);
  if (v.size() != 1 || !std::isfinite(v[0]))
    throw InputError(f.path(), attr, "attribute must be a finite scalar");
  return v[0];
}

}  // namespace

ModelFile::ModelFile(const std::string& path) : file_(h5::File::open_read(path)) {
  read_spec();
  check_layers();
}

void ModelFile::read_spec() {
  const auto& f = file_;
  const std::string fmt = f.string_attribute("/", "format").value_or("");
  if (fmt != "ufno-model")
    throw InputError(f.path(), "format",
                     "not a ufno model file (attribute format != \"ufno-model\")");
  if (int_attr(f, "format_version", 1) != 1)
    throw InputError(f.path(), "format_version", "unsupported version (this build reads 1)");
  ModelSpec& s = spec_;
  s.architecture = f.string_attribute_required("architecture");
  if (s.architecture != "UFNO" && s.architecture != "FNO")
    throw InputError(f.path(), "architecture",
                     "must be \"UFNO\" or \"FNO\", not \"" + s.architecture + "\"");
  s.variable = f.string_attribute_required("variable");
  if (s.variable != "SG" && s.variable != "dP")
    throw InputError(f.path(), "variable", "must be \"SG\" or \"dP\", not \"" + s.variable + "\"");
  s.width = int_attr(f, "width", 1);
  s.modes = int3_attr(f, "modes", 1);
  s.n_fourier = int_attr(f, "n_fourier", 0);
  s.n_ufourier = int_attr(f, "n_ufourier", 0);
  s.in_channels = int_attr(f, "in_channels", 1);
  s.hidden = int_attr(f, "hidden", 1);
  s.padding = int3_attr(f, "padding", 0);
  s.grid = int3_attr(f, "grid", 1);
  s.output_scale = double_attr(f, "output_scale");
  s.output_offset = double_attr(f, "output_offset");
  s.output_units = f.string_attribute_required("output_units");
  s.leaky_slope = double_attr(f, "leaky_relu_slope");
  s.bn_eps = double_attr(f, "batchnorm_eps");
  if (s.layers() < 1) throw InputError(f.path(), "n_fourier", "the model has no Fourier layer");
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

HostArray ModelFile::get(const std::string& name) const {
  HostArray a;
  a.data = file_.read_floats(name, &a.shape);
  for (float v : a.data)
    if (!std::isfinite(v)) throw InputError(file_.path(), name, "contains NaN or Inf");
  return a;
}

}  // namespace ufno
