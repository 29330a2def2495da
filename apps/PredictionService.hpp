#pragma once
// The web server's prediction engine: the models loaded once (kept warm) and one worker thread
// that owns them. Requests from any number of HTTP threads are queued; the worker takes every
// request waiting (up to max_batch) and predicts them as one batch, so concurrent users share a
// forward pass instead of waiting for each other's. All HDF5 and MPI work happens on the worker
// (neither library is thread-safe here). Each reply is a finished HTTP status and JSON body.
#include <condition_variable>
#include <deque>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "apps/WebCase.hpp"
#include "core/RunOptions.hpp"
#include "runtime/Predictor.hpp"
#include "screening/HeadRegistry.hpp"
#include "screening/Kpis.hpp"

namespace ufno {

struct ServiceReply {
  int status = 200;
  nlohmann::json body;
};

struct ServiceOptions {
  std::vector<std::string> models;
  std::vector<std::string> sites;  // template case files (the first is the default site)
  std::string results_dir;         // result files, served for download
  int max_batch = 8;               // requests predicted together
  int batch_window_ms = 30;        // after a request arrives, wait this long for more to batch
  int max_queue = 16;              // more waiting requests get 503 (below --http-threads)
  int keep_results = 200;          // older result files are deleted
  double flow_timeout_s = 300;     // an OPM Flow verification still running then fails
  RunOptions run;                  // the kernel choices for the models
  // For the fault tests only (UFNO_SERVER_FAULT=STAGE:N): fail the N-th request of a batch (from
  // 0) at STAGE (validate, predict, write or download) as a failing disk or library would.
  std::string fault_stage;
  int fault_request = 0;
};

class PredictionService {
 public:
  explicit PredictionService(const ServiceOptions& o);  // loads models and sites; InputError
  ~PredictionService();
  PredictionService(const PredictionService&) = delete;
  PredictionService& operator=(const PredictionService&) = delete;

  // Blocking; safe from any thread.
  ServiceReply predict(const CaseRequest& r);
  ServiceReply predict_upload(const std::string& bytes, const std::string& filename,
                              double critical_dp_bar);

  // OPM Flow on the case of an earlier prediction (the deck ufno_export writes), and both sides'
  // KPIs with their errors. One simulation at a time (503 while one runs); blocking, seconds.
  ServiceReply verify(const std::string& id);

  nlohmann::json info() const;                           // grid, sites, models (for the page)
  nlohmann::json stats() const;                          // requests, batches, largest batch
  std::string result_path(const std::string& id) const;  // "" if unknown
  // A result file's bytes into `bytes`: status 200, or 404 / 500 with the error's body.
  ServiceReply download(const std::string& id, std::string& bytes) const;

 private:
  struct Job {
    CaseRequest request;
    std::string upload_path;  // non-empty: a case file to read instead of request's site
    double queued_at = 0;
    // Every request is answered exactly once, whatever fails after it was answered: a second
    // answer is dropped (a promise set twice would end the server).
    void answer(ServiceReply r) {
      if (answered) return;
      answered = true;
      reply.set_value(std::move(r));
    }
    std::future<ServiceReply> future() { return reply.get_future(); }

   private:
    std::promise<ServiceReply> reply;
    bool answered = false;
  };
  void worker();
  void run_batch(const std::vector<Job*>& jobs);
  // The batch's cases, each checked; a bad request is answered (422) and left out.
  struct CheckedCases {
    std::vector<Job*> jobs;
    std::vector<ReservoirCase> cases;
    std::vector<std::vector<std::string>> warnings;
  };
  CheckedCases checked_cases(const std::vector<Job*>& jobs);
  ServiceReply submit(std::unique_ptr<Job> job);
  std::optional<ReservoirCase> job_case(Job& j) const;
  void inject_fault(const char* stage, std::size_t request) const;  // ServiceOptions::fault_*
  std::string new_result_id();
  Prediction case_of(const Prediction& all, std::size_t b) const;
  // Writes one case's result, answers its request and keeps what a verification needs.
  void reply(Job& j, const ReservoirCase& c, Prediction one, int batch_size, double wait_s,
             double predict_s, const std::vector<std::string>& warnings);
  nlohmann::json result_json(const std::string& id, const ReservoirCase& c, const Prediction& p,
                             const std::optional<Kpis>& k, const KpiOptions& o, int batch_size,
                             double wait_s, double predict_s,
                             const std::vector<std::string>& warnings) const;

  ServiceOptions opts_;
  std::unique_ptr<Predictor> predictor_;
  HeadRegistry heads_;  // the models' heads (screening/HeadRegistry.hpp)
  std::vector<std::pair<std::string, ReservoirCase>> sites_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::unique_ptr<Job>> queue_;
  bool stop_ = false;
  long requests_ = 0, batches_ = 0, largest_batch_ = 0, next_id_ = 0;
  std::deque<std::string> results_;  // ids, oldest first
  struct Verifiable {
    ReservoirCase c;
    KpiOptions kpi;
    std::vector<double> ufno_kpis;
  };
  std::map<std::string, Verifiable> verifiable_;  // by result id, as long as the result is kept
  std::mutex flow_mu_;                            // one Flow run at a time
  std::thread worker_;
};

}  // namespace ufno
