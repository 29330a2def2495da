#include "apps/Predictor.hpp"

#include "io/CaseEncoding.hpp"
#include "io/ModelFile.hpp"
#include "io/OutputFile.hpp"

namespace ufno {

Predictor::Predictor(const std::vector<std::string>& paths) {
  if (paths.empty()) throw InputError("--model", "", "no model file given");
  for (const auto& path : paths) {
    ModelFile mf(path);
    auto net = std::make_unique<Net3d>(mf.spec(), mf);
    for (const auto& m : models_) {
      if (m->spec().grid != net->spec().grid || m->spec().in_channels != net->spec().in_channels)
        throw InputError(path, "grid", "differs from the grid of the first model");
      if (m->spec().variable == net->spec().variable)
        throw InputError(path, "variable", "two models predict " + net->spec().variable);
    }
    models_.push_back(std::move(net));
  }
}

std::string Predictor::variables() const {
  std::string v;
  for (const auto& m : models_) v += (v.empty() ? "" : "+") + m->spec().variable;
  return v;
}

Prediction Predictor::run(const HostArray& in, const std::vector<double>& times) {
  const auto& s = in.shape;
  Tensor x("input", s[0], s[1], s[2], s[3], s[4]);
  auto hx = Kokkos::create_mirror_view(x);
  std::copy(in.data.begin(), in.data.end(), hx.data());
  Kokkos::deep_copy(x, hx);

  Prediction p;
  p.times_days = times;
  const std::size_t B = s[0], X = s[1], Y = s[2], T = s[3];
  for (auto& m : models_) {
    Tensor y = m->forward(x);  // (B, 1, X, Y, T)
    auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
    Field f;
    f.name = m->spec().variable;
    f.units = m->spec().output_units;
    f.shape = {B, T, X, Y};
    f.values.resize(B * T * X * Y);
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t t = 0; t < T; ++t)
        for (std::size_t i = 0; i < X; ++i)
          for (std::size_t j = 0; j < Y; ++j)
            f.values[((b * T + t) * X + i) * Y + j] = hy(b, 0, i, j, t);
    p.fields.push_back(std::move(f));
  }
  return p;
}

Prediction Predictor::run_case(const ReservoirCase& c) {
  const int nt = spec().grid[2];
  HostArray in = encode_case(c, nt);
  return run(in, c.times_days.empty() ? paper_times_days(nt) : c.times_days);
}

void write_prediction(const std::string& path, const Prediction& p, const std::string& source) {
  OutputFile out(path);
  for (const auto& f : p.fields) {
    const std::string what = f.name == "SG" ? "gas saturation" : "pressure buildup";
    out.write_field(f.name, f.shape, f.values, f.units,
                    what + ", (case, time, layer, radial cell)");
  }
  out.write_times(p.times_days);
  out.set_attribute("source", source);
  out.set_attribute("producer", "ufno_predict");
  out.commit();
}

}  // namespace ufno
