#include "apps/PredictionService.hpp"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "core/InputError.hpp"
#include "io/CaseEncoding.hpp"
#include "runtime/FieldNames.hpp"
#include "runtime/PredictionWriter.hpp"
#include "screening/Decisions.hpp"
#include "screening/Evaluate.hpp"
#include "screening/FlowRun.hpp"
#include "screening/KpiTable.hpp"

namespace ufno {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

ServiceReply error_reply(int status, const std::string& field, const std::string& message) {
  return {status, json{{"error", message}, {"field", field}}};
}

// A threshold's decision on this case's KPIs, in numbers and words (screening/Decisions.hpp).
json decision_json(const DecisionThreshold& t, const Kpis& k, const KpiOptions& o) {
  const Decision d = decide(t, kpi_header(o), kpi_row(k));
  const char* word = d == Decision::Below ? "below" : d == Decision::Above ? "above" : "across";
  const std::string says = d == Decision::Below ? "the whole 90 % interval lies below the limit"
                           : d == Decision::Above
                               ? "the whole 90 % interval lies above the limit"
                               : "the limit lies within the 90 % interval (or the KPI has none): "
                                 "uncertain, verify with OPM Flow";
  return {{"kpi", t.kpi}, {"threshold", t.value}, {"decision", word}, {"says", says}};
}

// Rounded for the page: SG to 1e-4, dP to 1e-3 bar (far below the models' errors).
json rounded(const std::vector<float>& v, std::size_t from, std::size_t n, double step) {
  json a = json::array();
  for (std::size_t i = 0; i < n; ++i) a.push_back(std::round(v[from + i] / step) * step);
  return a;
}

json edges(const std::vector<double>& widths, double start) {
  json e = json::array({start});
  double s = start;
  for (double w : widths) e.push_back(s += w);
  return e;
}

}  // namespace

PredictionService::PredictionService(const ServiceOptions& o) : opts_(o) {
  heads_ = HeadRegistry::from_model_files(o.models);
  for (const auto& note : heads_.notes) std::cerr << "ufno_server: note: " << note << "\n";
  predictor_ =
      std::make_unique<Predictor>(o.models, MPI_COMM_SELF, "auto",
                                  dist::ExchangeAlgorithm::Alltoallv, o.run, heads_.field_stage());
  const auto& g = predictor_->spec().grid;
  for (const auto& s : o.sites) {
    ReservoirCase c = read_case(s, g[0], g[1]);
    std::string name = fs::path(s).parent_path().filename().string();
    if (fs::path(s).stem() != "case" || name.empty()) name = fs::path(s).stem().string();
    sites_.emplace_back(name, std::move(c));
  }
  if (sites_.empty()) throw InputError("--site", "", "no site (template case) given");
  fs::create_directories(o.results_dir);
  worker_ = std::thread([this] { worker(); });
}

PredictionService::~PredictionService() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  worker_.join();
}

ServiceReply PredictionService::submit(std::unique_ptr<Job> job) {
  job->queued_at = now_s();
  auto fut = job->future();
  {
    std::lock_guard<std::mutex> l(mu_);
    if (int(queue_.size()) >= opts_.max_queue)
      return error_reply(503, "", "the prediction queue is full; try again shortly");
    queue_.push_back(std::move(job));
    ++requests_;
  }
  cv_.notify_one();
  return fut.get();
}

ServiceReply PredictionService::predict(const CaseRequest& r) {
  auto job = std::make_unique<Job>();
  job->request = r;
  return submit(std::move(job));
}

ServiceReply PredictionService::predict_upload(const std::string& bytes,
                                               const std::string& filename,
                                               double critical_dp_bar) {
  // The upload goes to a private file for the worker to read (HDF5 reads files).
  static std::mutex name_mu;
  static std::mt19937_64 gen(std::random_device{}());
  std::string path;
  {
    std::lock_guard<std::mutex> l(name_mu);
    path = (fs::path(opts_.results_dir) / ("upload_" + std::to_string(gen()) + ".h5")).string();
  }
  {
    std::ofstream f(path, std::ios::binary);
    f.write(bytes.data(), std::streamsize(bytes.size()));
  }
  auto job = std::make_unique<Job>();
  job->upload_path = path;
  job->request.site = filename.empty() ? "upload.h5" : filename;
  job->request.critical_dp_bar = critical_dp_bar;
  ServiceReply r = submit(std::move(job));
  fs::remove(path);
  return r;
}

void PredictionService::worker() {
  while (true) {
    std::vector<std::unique_ptr<Job>> jobs;
    {
      std::unique_lock<std::mutex> l(mu_);
      cv_.wait(l, [this] { return stop_ || !queue_.empty(); });
      if (stop_ && queue_.empty()) return;
      // Requests that arrive together (several users, or one page firing a few) share a pass.
      cv_.wait_for(l, std::chrono::milliseconds(opts_.batch_window_ms),
                   [this] { return stop_ || int(queue_.size()) >= opts_.max_batch; });
      while (!queue_.empty() && int(jobs.size()) < opts_.max_batch) {
        jobs.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
    }
    std::vector<Job*> batch;
    for (auto& j : jobs) batch.push_back(j.get());
    try {
      run_batch(batch);
    } catch (const std::exception& e) {
      // Those of the batch not answered yet; the answered keep their answer.
      for (Job* j : batch)
        j->answer(error_reply(500, "", std::string("internal error: ") + e.what()));
    }
  }
}

void PredictionService::inject_fault(const char* stage, std::size_t request) const {
  if (opts_.fault_stage == stage && int(request) == opts_.fault_request)
    throw std::runtime_error(std::string("injected fault at ") + stage + " (UFNO_SERVER_FAULT)");
}

// The case of one request, or nothing when the request was answered with an error.
std::optional<ReservoirCase> PredictionService::job_case(Job& j) const {
  const auto& g = predictor_->spec().grid;
  ReservoirCase c;
  if (!j.upload_path.empty()) {
    try {
      c = read_case(j.upload_path, g[0], g[1]);
    } catch (const InputError& e) {
      // Name the file as the user knows it, not the server's temporary name.
      std::string msg = e.what();
      const auto p = msg.find(j.upload_path);
      if (p != std::string::npos) msg.replace(p, j.upload_path.size(), j.request.site);
      j.answer(error_reply(422, e.field(), msg));
      return std::nullopt;
    }
  } else {
    const auto* site = &sites_.front();
    if (!j.request.site.empty()) {
      site = nullptr;
      for (const auto& s : sites_)
        if (s.first == j.request.site) site = &s;
      if (!site) {
        j.answer(error_reply(422, "site", "unknown site '" + j.request.site + "'"));
        return std::nullopt;
      }
    }
    c = build_case(j.request, site->second);
  }
  const int nt = g[2];
  if (!c.times_days.empty() && int(c.times_days.size()) != nt) {
    j.answer(error_reply(422, "TIMES",
                         "the case has " + std::to_string(c.times_days.size()) +
                             " report times but the models predict " + std::to_string(nt)));
    return std::nullopt;
  }
  return c;
}

// A new result id; the oldest results beyond keep_results are deleted.
std::string PredictionService::new_result_id() {
  std::lock_guard<std::mutex> l(mu_);
  char buf[32];
  std::snprintf(buf, sizeof buf, "r%06ld", ++next_id_);
  results_.push_back(buf);
  while (int(results_.size()) > opts_.keep_results) {
    fs::remove(fs::path(opts_.results_dir) / (results_.front() + ".h5"));
    fs::remove(fs::path(opts_.results_dir) / (results_.front() + ".xmf"));  // its description
    verifiable_.erase(results_.front());
    results_.pop_front();
  }
  return buf;
}

PredictionService::CheckedCases PredictionService::checked_cases(const std::vector<Job*>& jobs) {
  CheckedCases ok;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    Job& j = *jobs[i];
    try {
      inject_fault("validate", i);
      auto c = job_case(j);
      if (!c) continue;
      ok.warnings.push_back(predictor_->training_warnings(*c, MPI_COMM_NULL));
      if (long low = low_permeability_cells(*c))
        ok.warnings.back().push_back(low_permeability_warning(low));
      ok.cases.push_back(std::move(*c));
      ok.jobs.push_back(&j);
    } catch (const RequestError& e) {
      j.answer(error_reply(422, e.field, e.message));
    } catch (const std::exception& e) {  // this request's own failure, not the batch's
      j.answer(error_reply(500, "", std::string("internal error: ") + e.what()));
    }
  }
  return ok;
}

void PredictionService::run_batch(const std::vector<Job*>& jobs) {
  const auto& g = predictor_->spec().grid;
  const int nt = g[2];
  // Build every case; a bad one is answered at once and leaves the batch.
  CheckedCases ok = checked_cases(jobs);
  if (ok.jobs.empty()) return;
  // One batched forward pass over all cases.
  const double t0 = now_s();
  HostArray in;
  std::vector<const ReservoirCase*> whole;  // for the field stage's peak match
  for (const auto& c : ok.cases) {
    whole.push_back(&c);
    HostArray one = encode_case(c, nt);
    if (in.shape.empty()) in.shape = one.shape, in.shape[0] = 0;
    in.data.insert(in.data.end(), one.data.begin(), one.data.end());
    ++in.shape[0];
  }
  const auto& times =
      ok.cases.front().times_days.empty() ? paper_times_days(nt) : ok.cases.front().times_days;
  inject_fault("predict", 0);
  Prediction all = predictor_->run(in, times, whole);
  const double predict_s = now_s() - t0;
  {
    std::lock_guard<std::mutex> l(mu_);
    ++batches_;
    largest_batch_ = std::max<long>(largest_batch_, long(ok.jobs.size()));
  }
  // Each case's result on its own: one that cannot be written fails that request alone.
  for (std::size_t b = 0; b < ok.jobs.size(); ++b) {
    Job& j = *ok.jobs[b];
    try {
      inject_fault("write", b);
      reply(j, ok.cases[b], case_of(all, b), int(ok.jobs.size()), t0 - j.queued_at, predict_s,
            ok.warnings[b]);
    } catch (const std::exception& e) {
      j.answer(error_reply(500, "", std::string("the result could not be written: ") + e.what()));
    }
  }
}

// Case b of a batch's prediction, as a prediction of its own.
Prediction PredictionService::case_of(const Prediction& all, std::size_t b) const {
  const auto& g = predictor_->spec().grid;
  const std::size_t per = std::size_t(g[2]) * g[0] * g[1];
  Prediction one;
  one.cases = 1;
  one.times_days = all.times_days;
  for (const auto& f : all.fields) {
    Field s = f;
    s.shape[0] = 1;
    s.values.assign(f.values.begin() + b * per, f.values.begin() + (b + 1) * per);
    one.fields.push_back(std::move(s));
  }
  return one;
}

void PredictionService::reply(Job& j, const ReservoirCase& c, Prediction one, int batch_size,
                              double wait_s, double predict_s,
                              const std::vector<std::string>& warnings) {
  const int nt = predictor_->spec().grid[2];
  one.times_days = c.times_days.empty() ? paper_times_days(nt) : c.times_days;
  one.dr = c.dr, one.dz = c.dz;  // the result's viewer description gets the case's geometry
  const std::string id = new_result_id();
  write_prediction((fs::path(opts_.results_dir) / (id + ".h5")).string(), *predictor_, one,
                   j.request.site.empty() ? sites_.front().first : j.request.site);
  // The KPIs, when the models predict both fields (the case's heads applied once, here).
  KpiOptions o;
  o.critical_dp_bar = j.request.critical_dp_bar;
  std::optional<Kpis> k;
  if (const auto f = case_fields(one)) k = evaluate(c, *f, heads_, o);
  json body = result_json(id, c, one, k, o, batch_size, wait_s, predict_s, warnings);
  if (k && j.request.max_dp_limit_bar > 0)
    body["kpis"]["decision"] = decision_json({"max_dP_bar", j.request.max_dp_limit_bar}, *k, o);
  if (k) {
    Verifiable v{c, o, kpi_row(*k)};
    v.c.times_days = one.times_days;  // Flow reports at the times the models predict
    std::lock_guard<std::mutex> l(mu_);
    verifiable_[id] = std::move(v);
  }
  j.answer({200, std::move(body)});
}

ServiceReply PredictionService::verify(const std::string& id) {
  Verifiable v;
  {
    std::lock_guard<std::mutex> l(mu_);
    const auto it = verifiable_.find(id);
    if (it == verifiable_.end())
      return error_reply(404, "id", "no prediction " + id + " with both SG and dP to verify");
    v = it->second;
  }
  std::unique_lock<std::mutex> busy(flow_mu_, std::try_to_lock);
  if (!busy.owns_lock())
    return error_reply(503, "", "an OPM Flow verification is running; try again shortly");
  const fs::path dir = fs::path(opts_.results_dir) / (id + "_flow");
  FlowRunOptions fo;
  fo.timeout_s = opts_.flow_timeout_s;
  const FlowRunResult r = run_flow_case(v.c, dir.string(), fo);
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (!r.ok) return error_reply(422, "", "OPM Flow could not verify this case: " + r.error);
  const auto flow = kpi_row(compute_kpis(v.c, r.sg, r.dp, v.c.times_days, v.kpi));
  const auto columns = kpi_columns(v.kpi);
  json rows = json::array();
  for (std::size_t k = 0; k < columns.size(); ++k) {
    if (columns[k].kpi->about_interval) continue;  // Flow's side has no interval
    const double u = v.ufno_kpis[k], f = flow[k];
    json row = {
        {"kpi", columns[k].header}, {"ufno", u}, {"flow", f}, {"abs_error", std::abs(u - f)}};
    row["rel_error"] = std::abs(f) > 1e-9 ? json(std::abs(u - f) / std::abs(f)) : json(nullptr);
    // Whether Flow's value lies in ufno's interval, where the KPI has one.
    if (const auto b = interval_columns(columns, k); b && std::isfinite(v.ufno_kpis[b->first]))
      row["in_interval"] = f >= v.ufno_kpis[b->first] && f <= v.ufno_kpis[b->second];
    rows.push_back(row);
  }
  return {200, {{"id", id}, {"flow_seconds", r.wall_s}, {"kpis", rows}}};
}

json PredictionService::result_json(const std::string& id, const ReservoirCase& c,
                                    const Prediction& p, const std::optional<Kpis>& k,
                                    const KpiOptions& o, int batch_size, double wait_s,
                                    double predict_s,
                                    const std::vector<std::string>& warnings) const {
  const auto& g = predictor_->spec().grid;
  const std::size_t n = std::size_t(g[2]) * g[0] * g[1];
  json r;
  r["id"] = id;
  r["download"] = "/api/results/" + id + ".h5";
  r["batch_size"] = batch_size;
  r["queue_wait_s"] = wait_s;
  r["predict_s"] = predict_s;
  r["grid"] = {{"layers", g[0]}, {"radial_cells", g[1]}, {"times", g[2]}};
  r["r_edges_m"] = edges(c.dr, 0.0);
  r["z_edges_m"] = edges(c.dz, 0.0);
  r["times_days"] = p.times_days;
  json active = json::array();
  for (std::size_t i = 0; i < c.permx.size(); ++i) active.push_back(c.permx[i] > 0 ? 1 : 0);
  r["active"] = active;
  json perf = json::array();
  for (int x = 0; x < c.nx; ++x) perf.push_back(c.perforated[x] ? 1 : 0);
  r["perforated"] = perf;
  for (const auto& f : p.fields) {
    const double step = field_kind(f.name) == FieldKind::SG ? 1e-4 : 1e-3;
    r["fields"][f.name] = {{"units", f.units}, {"values", rounded(f.values, 0, n, step)}};
  }
  if (k) r["kpis"] = kpi_json(*k, o);
  r["warnings"] = warnings;
  return r;
}

json PredictionService::info() const {
  const auto& s = predictor_->spec();
  json sites = json::array();
  for (const auto& [name, c] : sites_) {
    int top = 0, bottom = 0;
    for (int x = 0; x < c.nx; ++x)
      if (c.perforated[x]) bottom = x + 1, top = top ? top : x + 1;
    sites.push_back({{"name", name},
                     {"layers", formation_layers(c)},
                     {"perf_top", top},
                     {"perf_bottom", bottom},
                     {"rate_mt_per_year", c.rate_mt_per_year},
                     {"temperature_c", c.temperature_c},
                     {"pressure_bar", c.pressure_bar},
                     {"swi", c.swi},
                     {"vg_lambda", c.vg_lambda}});
  }
  return {{"models", predictor_->variables()},
          {"architecture", s.architecture},
          {"grid", {{"layers", s.grid[0]}, {"radial_cells", s.grid[1]}, {"times", s.grid[2]}}},
          {"sites", sites},
          {"max_batch", opts_.max_batch}};
}

json PredictionService::stats() const {
  std::lock_guard<std::mutex> l(mu_);
  return {{"requests", requests_},
          {"batches", batches_},
          {"largest_batch", largest_batch_},
          {"queued", queue_.size()}};
}

ServiceReply PredictionService::download(const std::string& id, std::string& bytes) const {
  const std::string path = result_path(id);
  if (path.empty() || !fs::is_regular_file(path))
    return error_reply(404, "id", "no result " + id + " (results are kept for a while)");
  try {
    inject_fault("download", 0);
    std::ifstream f(path, std::ios::binary);
    std::stringstream s;
    s << f.rdbuf();
    if (!f || !s) throw std::runtime_error("read error");
    bytes = s.str();
  } catch (const std::exception& e) {
    return error_reply(500, "id", "result " + id + " could not be read: " + e.what());
  }
  return {200, {}};
}

std::string PredictionService::result_path(const std::string& id) const {
  std::lock_guard<std::mutex> l(mu_);
  for (const auto& r : results_)
    if (r == id) return (fs::path(opts_.results_dir) / (id + ".h5")).string();
  return "";
}

}  // namespace ufno
