// The screening layer's own parts: the one reader of prediction files (a missing field is
// refused, not zero-filled), field names (neither SG nor dP is refused), the owned background
// task a sweep's Flow runs use, the KPI table the CSV, JSON and verification come from, and the
// scenario-parameter table.
#include <catch2/catch.hpp>
#include <cmath>

#include <unistd.h>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>

#include "core/InputError.hpp"
#include "io/Hdf5File.hpp"
#include "io/PhysicalLimits.hpp"
#include "runtime/FieldNames.hpp"
#include "screening/BackgroundTask.hpp"
#include "screening/Evaluate.hpp"
#include "screening/KpiTable.hpp"
#include "screening/PredictionFile.hpp"
#include "screening/ScenarioParameters.hpp"

using namespace ufno;

namespace {

ReservoirCase grid_case(int nx, int ny) {
  ReservoirCase c;
  c.nx = c.lx = nx;
  c.ny = c.ly = ny;
  return c;
}

// A prediction-like file with the given fields, (1, T, X, Y), and TIMES.
std::string fields_file(const std::string& name, const std::vector<std::string>& fields, int T,
                        int X, int Y) {
  const std::string path = name + "_" + std::to_string(getpid()) + ".h5";
  auto f = h5::File::create(path);
  const std::vector<float> v(std::size_t(T) * X * Y, 0.5f);
  for (const auto& field : fields)
    f.write_floats(field, {1, std::size_t(T), std::size_t(X), std::size_t(Y)}, v.data());
  std::vector<double> t;
  for (int i = 1; i <= T; ++i) t.push_back(365.25 * i);
  f.write_doubles("TIMES", {t.size()}, t.data());
  f.close();
  return path;
}

std::string refusal(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a prediction file with both fields is read as (T, X, Y) with its times",
          "[prediction_file]") {
  const auto path = fields_file("both", {"SG", "dP"}, 3, 2, 4);
  const CaseFields f = read_case_fields(path, grid_case(2, 4));
  CHECK(f.sg.size() == 24);
  CHECK(f.dp.size() == 24);
  CHECK(f.times_days == std::vector<double>{365.25, 730.5, 1095.75});
  std::remove(path.c_str());
}

TEST_CASE("a prediction file with a missing field is refused in one line naming file and field",
          "[prediction_file]") {
  for (const char* missing : {"SG", "dP"}) {
    const std::string other = std::string(missing) == "SG" ? "dP" : "SG";
    const auto path = fields_file(std::string("no_") + missing, {other}, 2, 2, 4);
    const std::string why = refusal([&] { read_case_fields(path, grid_case(2, 4)); });
    INFO(why);
    CHECK(why.find(path) != std::string::npos);
    CHECK(why.find(std::string(missing) + ": dataset is missing") != std::string::npos);
    CHECK(why.find('\n') == std::string::npos);
    std::remove(path.c_str());
  }
}

TEST_CASE("a field named neither SG nor dP is refused", "[field_names]") {
  CHECK(field_kind("SG") == FieldKind::SG);
  CHECK(field_kind("dP") == FieldKind::dP);
  CHECK_THROWS_WITH(field_kind("SW"), Catch::Contains("\"SW\" is neither SG nor dP"));
  Prediction p;
  p.cases = 1;
  p.fields.push_back({"SG", "1", {1, 1, 1, 1}, {0.f}});
  CHECK_FALSE(case_fields(p));  // one field: no KPIs, not a refusal
  p.fields.push_back({"PRESSURE", "bar", {1, 1, 1, 1}, {0.f}});
  CHECK_THROWS_AS(case_fields(p), std::invalid_argument);  // not taken for dP
  p.fields.back().name = "dP";
  CHECK(case_fields(p));
}

TEST_CASE("an owned background task: joined when its owner throws, its own error rethrown",
          "[background_task]") {
  // The owner throws before joining: the task is asked to stop and joined as the error unwinds
  // (an unowned std::thread would call std::terminate here).
  std::atomic<int> steps{0};
  bool reported = false;
  try {
    BackgroundTask t([&](const std::atomic<bool>& stop) {
      while (!stop) {
        ++steps;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    });
    throw std::runtime_error("before the join");
  } catch (const std::runtime_error& e) {
    reported = std::string(e.what()) == "before the join";
  }
  CHECK(reported);
  const int after = steps;
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(steps == after);  // stopped and joined

  BackgroundTask failing([](const std::atomic<bool>&) { throw std::runtime_error("in the task"); });
  CHECK_THROWS_WITH(failing.join(), "in the task");
  CHECK_NOTHROW(failing.join());  // joined once

  bool ran = false;
  BackgroundTask done([&](const std::atomic<bool>&) { ran = true; });
  done.join();
  CHECK(ran);
}

TEST_CASE("the KPI table gives the CSV columns, the row and the JSON from one description",
          "[kpi_table]") {
  KpiOptions o;
  o.years = {1, 30};
  Kpis k;
  k.years_used = {1.0, 30.0};
  k.plume_radius_m = {100, 900};
  k.plume_area_km2 = {0.03, 2.5};
  k.plume_capped = {0, 1};
  k.plume_radius_field_m = {110, 950};
  k.max_dp_bar = 42;
  k.max_dp_from_head = true;
  const auto header = kpi_header(o);
  const auto row = kpi_row(k);
  REQUIRE(header.size() == row.size());
  // Year by year for the plume's block (radius, its interval's bounds and code, area, cap), the
  // field's radii in a block of their own.
  CHECK(header[0] == "plume_radius_m_1yr");
  CHECK(header[1] == "plume_radius_m_lo_1yr");
  CHECK(header[3] == "plume_radius_interval_1yr");
  CHECK(header[6] == "plume_radius_m_30yr");
  CHECK(row[6] == 900);
  CHECK(row[11] == 1);
  CHECK(std::isnan(row[7]));  // no interval without a head's
  CHECK(row[9] == 0);
  const auto cols = kpi_columns(o);
  for (std::size_t i = 0; i < cols.size(); ++i) {
    const double v = cols[i].kpi->get(k, cols[i].year);
    CHECK((v == row[i] || (std::isnan(v) && std::isnan(row[i]))));
  }
  const auto j = kpi_json(k, o);
  CHECK(j["plume"].size() == 2);
  CHECK(j["plume"][1]["plume_capped"] == true);
  CHECK(j["plume"][1]["year"] == 30.0);
  CHECK(j["max_dp_source"] == "head");
  CHECK(j["plume_source"] == "field");
  // Every KPI of the table is in the JSON once: per year in "plume", else at the top.
  for (const auto& c : kpi_table()) {
    if (c.per_year)
      CHECK(j["plume"][0].contains(c.json));
    else
      CHECK(j.contains(c.json));
  }
}

TEST_CASE(
    "the scenario parameters: the case's scalars by the physical limits' names, the rest once",
    "[scenario_parameters]") {
  // Each of the case's scalars is a parameter that sets the case's value, named as its limit.
  const auto scalars = case_scalar_limits();
  REQUIRE(scalars.size() == 5);
  for (const PhysicalLimit* l : scalars) {
    const ScenarioParameter* p = scenario_parameter(l->name);
    REQUIRE(p);
    CHECK(p->target == ScenarioTarget::Case);
    ReservoirCase c;
    set_case_parameter(*p, c, 0.5);
    CHECK(c.*l->scalar == 0.5);
  }
  CHECK(std::string(scalars.front()->name) == "INJ_RATE");
  CHECK(std::string(scalars.back()->name) == "VG_LAMBDA");
  // The targets one parameter has, found by target.
  CHECK(std::string(scenario_parameter(ScenarioTarget::PerforationTop).name) == "PERF_TOP");
  CHECK(std::string(scenario_parameter(ScenarioTarget::PerforationBottom).name) == "PERF_BOTTOM");
  CHECK(std::string(scenario_parameter(ScenarioTarget::BaseCase).name) == "BASE_CASE");
  CHECK_THROWS_AS(scenario_parameter(ScenarioTarget::Case), std::logic_error);
  // A multiplier scales the case's fields.
  ReservoirCase c = grid_case(2, 3);
  c.permx.assign(6, 10.0);
  c.permz.assign(6, 1.0);
  set_case_parameter(*scenario_parameter("PERM_MULT"), c, 2.0);
  CHECK(c.permx[5] == 20.0);
  CHECK(c.permz[0] == 2.0);
  CHECK_FALSE(scenario_parameter("PERMX"));  // a per-cell field is no scenario parameter
}
