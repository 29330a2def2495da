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
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "apps/ToolMain.hpp"
#include "io/OutputPath.hpp"
#include "io/Temporaries.hpp"
#include "screening/Evaluate.hpp"
#include "screening/KpiTable.hpp"

namespace {

namespace fs = std::filesystem;

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
  // The fields given are final: the field stage (the dP field scale) acts inside predictions.
  const auto heads = ufno::HeadRegistry::from_model_files(models, /*with_field_stage=*/false);
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
      const ufno::Kpis k = ufno::evaluate(c, ufno::read_case_fields(fields_path, c), heads, o);
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
