// ufno_kpis: the KPIs of docs/kpis.md for given fields, by the same rules ufno_sweep and the web
// page use: `ufno_kpis CASE FIELDS [CASE FIELDS ...]` or `--list FILE` (one "CASE FIELDS" pair a
// line). FIELDS is any file with SG and dP as (T, X, Y) or (1, T, X, Y) on the case's grid: an
// OPM Flow target file (ufno_export --targets, the training data's target.h5) or a
// ufno_predict output. So an engineer's own Flow run is measured exactly as a prediction is, and
// the KPI heads are fitted to these values. With --model, the KPI heads that model files carry
// are applied as a sweep would (docs/kpis.md, "KPI heads"). One CSV row per pair: case, fields,
// then the columns of kpis.csv. Exit codes: 0; 2 bad input (one line naming file and field,
// nothing written); 1 anything else.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "apps/ToolMain.hpp"
#include "io/CaseEncoding.hpp"
#include "io/Hdf5File.hpp"
#include "io/OutputPath.hpp"
#include "io/Temporaries.hpp"
#include "screening/KpiHeads.hpp"
#include "screening/Kpis.hpp"

namespace {

namespace fs = std::filesystem;

struct Fields {
  std::vector<float> sg, dp;
  std::vector<double> times_days;
};

// One field as (T, X, Y) of the case's grid, finite; T from the file.
std::vector<float> read_field(const ufno::h5::File& f, const std::string& name,
                              const ufno::ReservoirCase& c, std::size_t& nt) {
  if (!f.has_dataset(name)) throw ufno::InputError(f.path(), name, "dataset is missing");
  std::vector<std::size_t> s;
  // At most 4096 report times of the case's grid are read (not whatever size a file declares).
  auto v = f.read_floats(name, &s, std::size_t(4096) * c.nx * c.ny);
  if (s.size() == 4 && s[0] == 1) s.erase(s.begin());
  if (s.size() != 3 || s[1] != std::size_t(c.nx) || s[2] != std::size_t(c.ny) || s[0] < 1)
    throw ufno::InputError(f.path(), name,
                           "must be (T, X, Y) or (1, T, X, Y) on the case's " +
                               std::to_string(c.nx) + " x " + std::to_string(c.ny) + " grid");
  if (nt && s[0] != nt)
    throw ufno::InputError(f.path(), name, "has another number of report times than SG");
  nt = s[0];
  for (float x : v)
    if (!std::isfinite(x)) throw ufno::InputError(f.path(), name, "contains NaN or Inf");
  return v;
}

Fields read_fields(const std::string& path, const ufno::ReservoirCase& c) {
  const auto f = ufno::h5::File::open_read(path);
  Fields r;
  std::size_t nt = 0;
  r.sg = read_field(f, "SG", c, nt);
  r.dp = read_field(f, "dP", c, nt);
  if (f.has_dataset("TIMES")) {
    const auto t = f.read_numeric("TIMES", 4096);
    if (t.shape.size() != 1) throw ufno::InputError(path, "TIMES", "must be one-dimensional");
    r.times_days = t.values;
  } else {
    r.times_days = c.times_days.empty() ? ufno::paper_times_days(int(nt)) : c.times_days;
  }
  if (r.times_days.size() != nt)
    throw ufno::InputError(path, "TIMES", "must give one time per report of SG and dP");
  for (std::size_t t = 0; t < nt; ++t)
    if (!(r.times_days[t] > (t ? r.times_days[t - 1] : 0.0)))
      throw ufno::InputError(path, "TIMES", "must be positive and increasing");
  return r;
}

std::vector<double> parse_years(const std::string& s) {
  std::vector<double> y;
  std::stringstream in(s);
  for (std::string cell; std::getline(in, cell, ',') && y.size() <= 100;) {
    char* end = nullptr;
    y.push_back(std::strtod(cell.c_str(), &end));
    if (cell.empty() || *end)
      throw ufno::InputError("command line", "--years", "must be comma-separated numbers");
  }
  return y;  // ranges: validate_kpi_options
}

// The (case, fields) pairs: positional ones, then the list file's lines.
std::vector<std::pair<std::string, std::string>> pairs_of(const std::vector<std::string>& args,
                                                          const std::string& list) {
  if (args.size() % 2)
    throw ufno::InputError(args.back(), "arguments", "must be CASE FIELDS pairs");
  std::vector<std::pair<std::string, std::string>> p;
  for (std::size_t i = 0; i < args.size(); i += 2) p.emplace_back(args[i], args[i + 1]);
  if (list.empty()) return p;
  if (!fs::is_regular_file(list)) throw ufno::InputError(list, "--list", "is not a readable file");
  std::ifstream in(list);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    std::istringstream s(line);
    std::string a, b, extra;
    if (!(s >> a)) continue;  // blank line
    if (!(s >> b) || (s >> extra))
      throw ufno::InputError(list, "line " + std::to_string(n), "must be CASE FIELDS");
    p.emplace_back(a, b);
  }
  return p;
}

std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return q + "\"";
}

int run(int argc, char** argv) {
  CLI::App app{"ufno_kpis: the KPIs of docs/kpis.md for given SG and dP fields (CSV)"};
  std::vector<std::string> args, models;
  std::string list, out, years;
  ufno::KpiOptions o;
  o.years = {1, 5, 10, 30};
  app.add_option("pairs", args, "CASE FIELDS [CASE FIELDS ...]");
  app.add_option("--list", list, "a file of CASE FIELDS lines");
  app.add_option("--out", out, "the CSV (default: standard output)");
  app.add_option("--model", models, "model files whose KPI heads are applied (repeatable)");
  app.add_option("--years", years, "comma-separated years of the plume radius (1,5,10,30)");
  app.add_option("--sg-threshold", o.sg_threshold, "plume: SG above this");
  app.add_option("--critical-dp-bar", o.critical_dp_bar, "area of review: dP above this");
  app.add_option("--co2-density", o.co2_density, "kg/m3; 0: Span-Wagner in each cell");
  app.add_option("--mass-tolerance", o.mass_tolerance, "mass cap: injected x (1 + this)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "ufno_kpis: error: " << e.what() << " (see --help)\n";
    return 2;
  }
  if (!years.empty()) o.years = parse_years(years);
  ufno::validate_kpi_options(o, "command line", [](const std::string& key) {
    std::string flag = "--" + key;
    std::replace(flag.begin(), flag.end(), '_', '-');
    return flag;
  });
  const auto pairs = pairs_of(args, list);
  if (pairs.empty()) throw ufno::InputError("arguments", "pairs", "give CASE FIELDS or --list");
  const ufno::KpiHeads heads = ufno::KpiHeads::from_model_files(models);
  for (const auto& note : heads.notes) std::cerr << "ufno_kpis: note: " << note << "\n";
  std::string tmp;
  if (!out.empty()) {
    std::vector<std::string> inputs(models);
    if (!list.empty()) inputs.push_back(list);
    for (const auto& p : pairs) inputs.insert(inputs.end(), {p.first, p.second});
    ufno::check_output_path(out, inputs);
    ufno::remove_stale_temporaries(out);
    tmp = ufno::temporary_name(out, getpid());
  }
  std::ofstream file;
  if (!tmp.empty()) file.open(tmp);
  std::ostream& csv = tmp.empty() ? std::cout : file;
  csv.precision(8);
  try {
    csv << "case,fields";
    for (const auto& h : ufno::kpi_header(o)) csv << "," << h;
    csv << "\n";
    for (const auto& [case_path, fields_path] : pairs) {
      const ufno::ReservoirCase c = ufno::read_case(case_path);
      const Fields f = read_fields(fields_path, c);
      ufno::Kpis k = ufno::compute_kpis(c, f.sg, f.dp, f.times_days, o);
      heads.apply(k, c, f.sg, f.dp, f.times_days, o);
      csv << csv_cell(case_path) << "," << csv_cell(fields_path);
      for (double v : ufno::kpi_row(k)) csv << "," << v;
      csv << "\n";
    }
    if (!tmp.empty()) {
      file.close();
      if (!file) throw std::runtime_error("could not write " + tmp);
      fs::rename(tmp, out);
    }
  } catch (...) {
    if (!tmp.empty()) fs::remove(tmp);
    throw;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return ufno::tool_main("ufno_kpis", argc, argv, run); }
