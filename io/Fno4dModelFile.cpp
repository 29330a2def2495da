#include "io/Fno4dModelFile.hpp"

#include <cmath>

#include "io/ModelAttributes.hpp"
#include "io/ModelFile.hpp"

namespace ufno {

Fno4dModelFile::Fno4dModelFile(const std::string& path) : file_(h5::File::open_read(path)) {
  read_spec();
  check_datasets();
}

void Fno4dModelFile::read_spec() {
  const auto& f = file_;
  const std::string arch = model_architecture(f);
  if (arch != "FNO4D")
    throw InputError(f.path(), "architecture", "is \"" + arch + "\", not a 4-D FNO (\"FNO4D\")");
  Fno4dSpec& s = spec_;
  s.variable = f.string_attribute_required("variable");
  if (s.variable != "SG" && s.variable != "dP")
    throw InputError(f.path(), "variable", "must be \"SG\" or \"dP\", not \"" + s.variable + "\"");
  s.output_units = f.string_attribute_required("output_units");
  s.level = f.string_attribute("/", "level").value_or("");
  if (!s.level.empty() && s.level != "GLOBAL" &&
      !(s.level.size() == 4 && s.level.rfind("LGR", 0) == 0 && s.level[3] >= '1' &&
        s.level[3] <= '4'))
    throw InputError(f.path(), "level", "must be GLOBAL or LGR1..LGR4, not \"" + s.level + "\"");
  s.width = int_attr(f, "width", 1);
  s.in_channels = int_attr(f, "in_channels", 1);
  s.hidden = int_attr(f, "hidden", 1);
  s.layers = int_attr(f, "n_layers", 1);
  s.modes = int_array_attr<4>(f, "modes", 1);
  s.padding = int_array_attr<4>(f, "padding", 0);
  s.grid = int_array_attr<4>(f, "grid", 1);
  s.normalizer_eps = double_attr(f, "normalizer_eps");
  s.axis_order = f.string_attribute("/", "axis_order").value_or("XYZT");
  if (s.axis_order != "XYZT" && s.axis_order != "TXYZ")
    throw InputError(f.path(), "axis_order",
                     "must be \"XYZT\" or \"TXYZ\", not \"" + s.axis_order + "\"");
  for (const std::string which : {"input_normalizer", "output_normalizer"}) {
    const std::string kind = f.string_attribute("/", which + "_kind").value_or("pointwise");
    if (kind != "pointwise" && kind != "time")
      throw InputError(f.path(), which + "_kind",
                       "must be \"pointwise\" or \"time\", not \"" + kind + "\"");
    (which == "input_normalizer" ? s.input_per_time : s.output_per_time) = kind == "time";
  }
  check_at_most(f, "width", s.width, 4096);
  check_at_most(f, "hidden", s.hidden, 65536);
  check_at_most(f, "in_channels", s.in_channels, 1024);
  check_at_most(f, "n_layers", s.layers, 64);
  for (int a = 0; a < 4; ++a) {
    check_at_most(f, "grid", s.grid[a], 1 << 20);
    check_at_most(f, "padding", s.padding[a], 1 << 12);
  }
  if (!(s.normalizer_eps > 0 && s.normalizer_eps <= 1))
    throw InputError(f.path(), "normalizer_eps", "must be in (0, 1]");
  const auto p = s.padded_grid();
  const char* xyzt[4] = {"A1", "A2", "A3", "T"};
  const char* txyz[4] = {"T", "X", "Y", "Z"};
  for (int a = 0; a < 4; ++a) {
    const int limit = a == 3 ? p[a] / 2 + 1 : p[a] / 2;
    if (s.modes[a] > limit)
      throw InputError(f.path(), "modes",
                       std::string("mode count along ") + (s.time_first() ? txyz : xyzt)[a] +
                           " exceeds what the padded grid holds (low and high corners would "
                           "overlap)");
  }
  // One activation of the padded grid, in bytes: the least any run needs several of.
  const double cells = double(p[0]) * p[1] * p[2] * p[3];
  if (cells > 1e12 || cells * s.width * 4.0 > kMaxActivationBytes * 64)
    throw InputError(f.path(), "grid",
                     "padded grid of " + std::to_string(cells) + " cells x width " +
                         std::to_string(s.width) + " is beyond what this build runs");
}

void Fno4dModelFile::check_datasets() {
  const std::string& path = file_.path();
  for (int k = 0; k <= spec_.layers; ++k) {
    const std::string name = Fno4dSpec::key("conv", k) + ".weights1";
    if (k < spec_.layers && !has(name))
      throw InputError(path, name,
                       "dataset is missing but the attributes announce " +
                           std::to_string(spec_.layers) + " Fourier layers");
    if (k == spec_.layers && has(name))
      throw InputError(path, name,
                       "dataset present but the attributes announce only " +
                           std::to_string(spec_.layers) + " Fourier layers");
  }
  for (const std::string which : {"input_normalizer", "output_normalizer"}) {
    const bool mean = has(which + ".mean"), std = has(which + ".std");
    if (mean != std)
      throw InputError(path, which + (mean ? ".std" : ".mean"),
                       "dataset is missing: a normaliser needs both mean and std");
    (which == "input_normalizer" ? spec_.input_normalizer : spec_.output_normalizer) = mean;
    if (!mean && file_.has_attribute(which + "_kind"))
      throw InputError(path, which + "_kind", "is set but the file has no " + which);
  }
}

bool Fno4dModelFile::has(const std::string& name) const { return file_.has_dataset(name); }

std::vector<std::size_t> Fno4dModelFile::shape(const std::string& name) const {
  if (!file_.has_dataset(name)) throw InputError(file_.path(), name, "dataset is missing");
  return file_.shape(name);
}

HostArray Fno4dModelFile::get(const std::string& name) const {
  return read_checked_weights(file_, name);
}

HostArray Fno4dModelFile::get_block(const std::string& name, const std::vector<std::size_t>& start,
                                    const std::vector<std::size_t>& count) const {
  const auto s = shape(name);
  if (s.size() != start.size() || s.size() != count.size())
    throw InputError(file_.path(), name, "block of the wrong rank requested");
  return read_checked_block(file_, name, start, count);
}

void Fno4dModelFile::get_block_into(const std::string& name, const std::vector<std::size_t>& start,
                                    const std::vector<std::size_t>& count, HostArray& out,
                                    bool check_values) const {
  const auto s = shape(name);
  if (s.size() != start.size() || s.size() != count.size())
    throw InputError(file_.path(), name, "block of the wrong rank requested");
  read_checked_block_into(file_, name, start, count, out, check_values);
}

}  // namespace ufno
