#include "runtime/EstimateMemo.hpp"

namespace ufno {

std::vector<double> EstimateMemo::key_of(int estimate, const ReservoirCase& c,
                                         const std::vector<double>& times_days) {
  std::vector<double> k{double(estimate), double(c.nx),   double(c.ny), double(c.x0),
                        double(c.y0),     double(c.lx),   double(c.ly), c.rate_mt_per_year,
                        c.temperature_c,  c.pressure_bar, c.swi,        c.vg_lambda};
  // Each array after its length, so that no two different cases give the same key.
  auto add = [&k](const auto& v) {
    k.push_back(double(v.size()));
    k.insert(k.end(), v.begin(), v.end());
  };
  add(c.permx);
  add(c.permz);
  add(c.poro);
  add(c.dr);
  add(c.dz);
  add(c.perforated);
  add(c.times_days);
  add(times_days);
  return k;
}

double EstimateMemo::get(int estimate, const ReservoirCase& c,
                         const std::vector<double>& times_days,
                         const std::function<double()>& compute) {
  std::vector<double> key = key_of(estimate, c, times_days);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const Entry& e : entries_)
      if (e.key == key) return e.value;
  }
  const double value = compute();
  std::lock_guard<std::mutex> lock(mutex_);
  ++computed_;
  if (capacity_ == 0) return value;
  if (entries_.size() >= capacity_) entries_.pop_front();
  entries_.push_back({std::move(key), value});
  return value;
}

long EstimateMemo::computed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return computed_;
}

EstimateMemo& max_dp_estimate_memo() {
  static EstimateMemo memo(64);
  return memo;
}

}  // namespace ufno
