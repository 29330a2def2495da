// ufno_server: the web front end. Serves the page in web/ and a JSON API in front of a warm
// PredictionService (models loaded once, concurrent requests queued and predicted in batches):
//   GET  /api/info                 grid, sites, models, queue statistics
//   POST /api/predict              JSON case parameters (apps/WebCase.hpp) -> fields, KPIs
//   POST /api/predict/upload       multipart form: "case" = a case file (docs/case-format.md)
//   GET  /api/results/<id>.h5      the result file of an earlier prediction
//   POST /api/verify/<id>          OPM Flow on that prediction's case: both sides' KPIs, errors
//   POST /api/sweeps               the sweep form (apps/SweepForm.hpp) -> a sweep's status (202)
//   GET  /api/sweeps/<id>          its status and progress; POST /api/sweeps/<id>/cancel
//   GET  /api/sweeps/<id>/report.html, /api/sweeps/<id>/kpis.csv   a finished sweep's results
// Errors are JSON {"error", "field"} with 400 (malformed request), 404, 413 (upload larger than
// --max-upload-mb), 409 (a sweep runs already, or is not running), 422 (well-formed but invalid
// values) or 503 (queue full, no sweep program).
#include <netdb.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <httplib.h>
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "apps/FiniteRange.hpp"
#include "apps/PredictionService.hpp"
#include "apps/SweepForm.hpp"
#include "apps/SweepRunner.hpp"
#include "operators/backend/Threads.hpp"
#include "runtime/DefaultModels.hpp"
#include "runtime/MpiMain.hpp"
#include "runtime/RunOptionsFromEnvironment.hpp"
#include "runtime/ThreadDefaults.hpp"

#ifndef UFNO_SOURCE_DIR
#define UFNO_SOURCE_DIR "."
#endif

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// SIGINT and SIGTERM, which stop the server cleanly from a thread of their own.
sigset_t stop_signals() {
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGINT);
  sigaddset(&s, SIGTERM);
  return s;
}

void send_json(httplib::Response& res, int status, const json& body) {
  res.status = status;
  // Replace invalid UTF-8 (echoed from a request) instead of throwing: a bad byte in a field
  // name is the client's error, not a 500.
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

void send_error(httplib::Response& res, int status, const std::string& field,
                const std::string& message) {
  send_json(res, status, json{{"error", message}, {"field", field}});
}

std::vector<std::string> default_sites() {
  std::vector<std::string> v;
  const fs::path dir = fs::path(UFNO_SOURCE_DIR) / "examples" / "opm";
  if (fs::is_directory(dir))
    for (const auto& e : fs::directory_iterator(dir))
      if (fs::exists(e.path() / "case.h5")) v.push_back((e.path() / "case.h5").string());
  std::sort(v.begin(), v.end());
  return v;
}

// Before any body is read: chunked uploads (whose size httplib does not bound) get 411, and the
// page's test and package folders are not served.
void add_guards(httplib::Server& svr) {
  svr.set_pre_routing_handler([](const httplib::Request& req, httplib::Response& res) {
    const std::string te = req.get_header_value("Transfer-Encoding");
    if (te.find("chunked") != std::string::npos) {
      send_error(res, 411, "", "send the body with a Content-Length (chunked uploads are refused)");
      return httplib::Server::HandlerResponse::Handled;
    }
    for (const char* hidden : {"/tests", "/node_modules", "/package.json", "/package-lock.json"})
      if (req.path.rfind(hidden, 0) == 0) {
        send_error(res, 404, "", "no such resource: " + req.path);
        return httplib::Server::HandlerResponse::Handled;
      }
    // Paths are compared as given: "//tests" or "/./tests" would pass the prefix test above and
    // still reach the static handler, so empty and dot segments are refused outright.
    if (req.path.find("/.") != std::string::npos || req.path.find("//") != std::string::npos ||
        req.path.find('\\') != std::string::npos) {
      send_error(res, 404, "", "no such resource: " + req.path);
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
}

// The host must be an address: a name that does not resolve is a --host error, not a --port one.
void check_host(const std::string& host) {
  addrinfo hints{}, *found = nullptr;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0 || !found)
    throw ufno::InputError(host, "--host", "is not an address this machine can listen on");
  // A name that resolves to another machine's address fails at bind: try it on a free port, so
  // that a later bind failure is the port's.
  const int sock = socket(found->ai_family, found->ai_socktype, found->ai_protocol);
  const bool ok = sock >= 0 && bind(sock, found->ai_addr, found->ai_addrlen) == 0;
  if (sock >= 0) close(sock);
  freeaddrinfo(found);
  if (!ok) throw ufno::InputError(host, "--host", "is not an address of this machine");
}

void add_routes(httplib::Server& svr, ufno::PredictionService& service, ufno::SweepRunner& sweeps) {
  svr.Get("/api/info", [&](const httplib::Request&, httplib::Response& res) {
    json j = service.info();
    j["stats"] = service.stats();
    j["sweep"] = sweeps.info();
    send_json(res, 200, j);
  });
  svr.Post("/api/predict", [&](const httplib::Request& req, httplib::Response& res) {
    json body;
    try {
      body = json::parse(req.body);
    } catch (const json::exception& e) {  // syntax, invalid UTF-8, numbers such as 1e999
      return send_error(res, 400, "", std::string("malformed JSON: ") + e.what());
    }
    try {
      const auto r = ufno::parse_case_request(body);
      const auto reply = service.predict(r);
      send_json(res, reply.status, reply.body);
    } catch (const ufno::RequestError& e) {
      send_error(res, 422, e.field, e.field + ": " + e.message);
    } catch (const json::exception& e) {  // a value of the wrong JSON type
      send_error(res, 422, "", std::string("invalid value: ") + e.what());
    }
  });
  svr.Post("/api/predict/upload", [&](const httplib::Request& req, httplib::Response& res) {
    if (!req.is_multipart_form_data() || !req.has_file("case"))
      return send_error(res, 400, "case",
                        "send the case file as multipart/form-data field \"case\"");
    const auto file = req.get_file_value("case");
    double critical = 10.0;
    if (req.has_file("critical_dp_bar")) {
      try {
        std::size_t used = 0;
        const std::string text = req.get_file_value("critical_dp_bar").content;
        critical = std::stod(text, &used);
        if (used != text.size()) throw std::invalid_argument(text);
      } catch (const std::exception&) {
        return send_error(res, 422, "critical_dp_bar", "critical_dp_bar: must be a number");
      }
      if (!(critical > 0 && critical <= 10000))
        return send_error(res, 422, "critical_dp_bar",
                          "critical_dp_bar: must be a pressure in (0, 10000] bar");
    }
    const auto reply = service.predict_upload(file.content, file.filename, critical);
    send_json(res, reply.status, reply.body);
  });
  svr.Post(R"(/api/verify/(r\d+))", [&](const httplib::Request& req, httplib::Response& res) {
    const auto reply = service.verify(req.matches[1]);
    send_json(res, reply.status, reply.body);
  });
  svr.Get(R"(/api/results/(r\d+)\.h5)", [&](const httplib::Request& req, httplib::Response& res) {
    const std::string id = req.matches[1];
    std::string bytes;
    const auto reply = service.download(id, bytes);
    if (reply.status != 200) return send_json(res, reply.status, reply.body);
    res.set_header("Content-Disposition", "attachment; filename=\"ufno_" + id + ".h5\"");
    res.set_content(bytes, "application/x-hdf5");
  });
  // JSON for every API error httplib itself produces (unknown route 404, oversized 413, ...).
  svr.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    const std::string msg = res.status == 413   ? "the upload is larger than the server accepts"
                            : res.status == 404 ? "no such resource: " + req.path
                                                : "request failed";
    send_error(res, res.status, "", msg);
  });
  svr.set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
        std::string what = "internal error";
        try {
          std::rethrow_exception(ep);
        } catch (const std::exception& e) {
          what += std::string(": ") + e.what();
        } catch (...) {
        }
        send_error(res, 500, "", what);
      });
}

// The sweeps from the page: the form's configuration is checked and run by `sweeps` (a child
// process), whose status the page polls.
void add_sweep_routes(httplib::Server& svr, ufno::SweepRunner& sweeps,
                      std::vector<ufno::SweepSite> sites, const std::vector<std::string>& models,
                      int max_scenarios) {
  svr.Post("/api/sweeps", [&sweeps, sites, models, max_scenarios](const httplib::Request& req,
                                                                  httplib::Response& res) {
    json body;
    try {
      body = json::parse(req.body);
    } catch (const json::exception& e) {
      return send_error(res, 400, "", std::string("malformed JSON: ") + e.what());
    }
    try {
      const auto reply =
          sweeps.start(ufno::sweep_config_from_form(body, sites, models, max_scenarios));
      send_json(res, reply.status, reply.body);
    } catch (const ufno::RequestError& e) {
      send_error(res, 422, e.field, e.field.empty() ? e.message : e.field + ": " + e.message);
    } catch (const json::exception& e) {
      send_error(res, 422, "", std::string("invalid value: ") + e.what());
    }
  });
  svr.Get(R"(/api/sweeps/(s\d+))", [&](const httplib::Request& req, httplib::Response& res) {
    const auto reply = sweeps.status(req.matches[1]);
    send_json(res, reply.status, reply.body);
  });
  svr.Post(R"(/api/sweeps/(s\d+)/cancel)",
           [&](const httplib::Request& req, httplib::Response& res) {
             const auto reply = sweeps.cancel(req.matches[1]);
             send_json(res, reply.status, reply.body);
           });
  svr.Get(R"(/api/sweeps/(s\d+)/(report\.html|kpis\.csv))", [&](const httplib::Request& req,
                                                                httplib::Response& res) {
    const std::string id = req.matches[1], name = req.matches[2];
    std::string bytes;
    const auto reply = sweeps.file(id, name, bytes);
    if (reply.status != 200) return send_json(res, reply.status, reply.body);
    if (name == "kpis.csv")
      res.set_header("Content-Disposition", "attachment; filename=\"ufno_" + id + "_kpis.csv\"");
    res.set_content(bytes, name == "kpis.csv" ? "text/csv" : "text/html; charset=utf-8");
  });
}

// The sweeps' limits and program (default: ufno_sweep beside this executable).
void add_sweep_options(CLI::App& app, ufno::SweepLimits& l) {
  app.add_option("--sweep-program", l.program, "the ufno_sweep executable for sweeps from the page")
      ->check(CLI::ExistingFile);
  app.add_option("--sweep-max-scenarios", l.max_scenarios, "most scenarios of a sweep")
      ->check(CLI::Range(1, 100000));
  app.add_option("--sweep-max-seconds", l.max_seconds, "a sweep still running then is stopped")
      ->check(ufno::finite_range(1.0, 1e7));
  app.add_option("--sweep-max-disk-mb", l.max_disk_mb,
                 "all sweeps' outputs together; old sweeps are removed first")
      ->check(ufno::finite_range(0.01, 1e7));
  app.add_option("--sweep-keep", l.keep, "finished sweeps kept (older ones are removed)")
      ->check(CLI::Range(1, 100000));
}

std::string default_sweep_program() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  const fs::path p = exe.parent_path() / "ufno_sweep";
  return !ec && fs::is_regular_file(p) ? p.string() : "";
}

// The sites as the sweep form sees them (names and layers from /api/info, paths from --site).
std::vector<ufno::SweepSite> sweep_sites(const json& info, const std::vector<std::string>& paths) {
  std::vector<ufno::SweepSite> v;
  for (std::size_t i = 0; i < paths.size() && i < info["sites"].size(); ++i) {
    const json& s = info["sites"][i];
    v.push_back({s["name"].get<std::string>(), paths[i], s["layers"].get<int>(),
                 s["perf_top"].get<int>(), s["perf_bottom"].get<int>()});
  }
  return v;
}

// The sweeps' runner, in the results directory, with the server's threads.
std::unique_ptr<ufno::SweepRunner> make_sweep_runner(ufno::SweepLimits l, int threads,
                                                     const std::string& results) {
  if (l.program.empty()) l.program = default_sweep_program();
  l.threads = threads;
  return std::make_unique<ufno::SweepRunner>((fs::path(results) / "sweeps").string(), l);
}

// UFNO_SERVER_FAULT=STAGE:N, for the fault tests (web/tests/test_faults.py): the N-th request of
// each batch fails at STAGE as a failing disk or library would.
void read_fault_from_environment(ufno::ServiceOptions& o) {
  const char* v = std::getenv("UFNO_SERVER_FAULT");
  if (!v || !*v) return;
  const std::string s = v;
  const auto colon = s.find(':');
  const std::string stage = s.substr(0, colon);
  int n = 0;
  try {
    std::size_t used = 0;
    if (colon != std::string::npos) n = std::stoi(s.substr(colon + 1), &used);
    if (colon != std::string::npos && used != s.size() - colon - 1) throw std::invalid_argument(s);
  } catch (const std::exception&) {
    n = -1;
  }
  if (n < 0 ||
      (stage != "validate" && stage != "predict" && stage != "write" && stage != "download"))
    throw ufno::InputError("UFNO_SERVER_FAULT", s,
                           "is not STAGE[:N] with STAGE validate, predict, write or download");
  o.fault_stage = stage, o.fault_request = n;
}

// The server's own flags (the service's go into ServiceOptions).
struct ServerFlags {
  std::string host = "127.0.0.1", web_root = std::string(UFNO_SOURCE_DIR) + "/web", results;
  int port = 8080, threads = 0, http_threads = 32;
  double max_upload_mb = 16;
  bool bf16 = false;
};

void add_options(CLI::App& app, ServerFlags& f, ufno::ServiceOptions& o) {
  app.add_option("--host", f.host, "address to listen on (0.0.0.0 for every interface)");
  app.add_option("--port", f.port, "port (0: any free port, printed at start)")
      ->check(CLI::Range(0, 65535));
  app.add_option("--model", o.models, "model file; give twice for SG and dP (default: shipped)")
      ->check(CLI::ExistingFile);
  app.add_option("--site", o.sites, "template case file (default: examples/opm/*/case.h5)")
      ->check(CLI::ExistingFile);
  app.add_option("--web-root", f.web_root, "directory of the page");
  app.add_option("--results", f.results, "directory for result files (default: a temp dir)");
  app.add_option("--max-upload-mb", f.max_upload_mb, "largest accepted request body")
      ->check(ufno::finite_range(0.001, 4096.0));
  app.add_option("--max-batch", o.max_batch, "requests predicted together")
      ->check(CLI::PositiveNumber);
  app.add_option("--batch-window-ms", o.batch_window_ms,
                 "how long the worker waits for more requests to batch");
  app.add_option("--max-queue", o.max_queue, "waiting requests beyond which the API answers 503")
      ->check(CLI::PositiveNumber);
  app.add_option("--threads", f.threads,
                 "compute threads (default: the CPUs this process may use)");
  app.add_option("--http-threads", f.http_threads, "threads accepting requests")
      ->check(CLI::Range(2, 1024));
  app.add_flag("--bf16", f.bf16,
               "U-Net convolutions in bfloat16 (CPUs with AVX512_BF16 or AMX; as "
               "ufno_predict --bf16; or UFNO_BF16=1)");
}

// The HTTP server's threads, limits, socket options and page.
void configure(httplib::Server& svr, const ServerFlags& f) {
  const int http_threads = f.http_threads;
  svr.new_task_queue = [http_threads] { return new httplib::ThreadPool(size_t(http_threads)); };
  svr.set_payload_max_length(std::size_t(f.max_upload_mb * 1024 * 1024));
  // SO_REUSEADDR only: httplib's default also sets SO_REUSEPORT, with which a second server on
  // a port in use starts without error and the two share the requests.
  svr.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  svr.set_mount_point("/", f.web_root);
}

int run(int argc, char** argv) {
  CLI::App app{"ufno_server: web front end and JSON API for U-FNO predictions"};
  ServerFlags flags;
  ufno::ServiceOptions o;
  add_options(app, flags, o);
  ufno::SweepLimits sweep_limits;
  add_sweep_options(app, sweep_limits);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "ufno_server: error: " << e.what() << " (see --help)\n";
    return 2;
  }
  const std::string& host = flags.host;
  const int port = flags.port, http_threads = flags.http_threads;
  std::string& results = flags.results;
  int& threads = flags.threads;
  // A request waits in its HTTP thread, so a queue as long as the threads can never be full.
  if (o.max_queue >= http_threads)
    throw ufno::InputError("--max-queue", "",
                           std::to_string(o.max_queue) + " must be below --http-threads (" +
                               std::to_string(http_threads) + "), or the queue is never full");
  check_host(host);
  if (o.models.empty()) o.models = ufno::default_models();
  if (o.sites.empty()) o.sites = default_sites();
  const bool temp_results = results.empty();  // removed again at a clean stop
  if (temp_results)
    results = (fs::temp_directory_path() / ("ufno_server_" + std::to_string(getpid()))).string();
  o.results_dir = results;
  if (threads == 0) threads = ufno::default_threads_for_rank(1).threads;
  ufno::check_thread_count(threads);
  o.run = ufno::run_options_from_environment(threads, flags.bf16);
  ufno::apply_process_options(o.run);
  if (!fs::is_directory(flags.web_root))
    throw ufno::InputError(flags.web_root, "--web-root", "is not a directory");
  read_fault_from_environment(o);

  ufno::PredictionService service(o);
  // Stopped (its sweep killed) before the results directory is removed.
  auto sweeps = make_sweep_runner(sweep_limits, threads, results);
  httplib::Server svr;
  configure(svr, flags);
  add_guards(svr);
  add_routes(svr, service, *sweeps);
  add_sweep_routes(svr, *sweeps, sweep_sites(service.info(), o.sites), o.models,
                   sweep_limits.max_scenarios);
  const int bound =
      port == 0 ? svr.bind_to_any_port(host) : (svr.bind_to_port(host, port) ? port : -1);
  if (bound < 0) {
    sweeps.reset();
    if (temp_results) {
      std::error_code ec;
      fs::remove_all(results, ec);  // nothing of a server that never ran is left behind
    }
    throw ufno::InputError("--port", "", "cannot listen on " + host + ":" + std::to_string(port));
  }
  std::thread stopper([&] {
    const sigset_t sigs = stop_signals();
    int sig = 0;
    sigwait(&sigs, &sig);
    svr.stop();
  });
  std::printf("ufno_server: listening on http://%s:%d (models %s, %zu site(s), results in %s)\n",
              host.c_str(), bound, service.info()["models"].get<std::string>().c_str(),
              o.sites.size(), results.c_str());
  std::fflush(stdout);
  svr.listen_after_bind();
  // A stop from anywhere but the signal thread: wake it so it can be joined.
  pthread_kill(stopper.native_handle(), SIGTERM);
  stopper.join();
  sweeps.reset();
  if (temp_results) {
    std::error_code ec;
    fs::remove_all(results, ec);
  }
  std::printf("ufno_server: stopped\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Blocked before MPI, OpenMP or FFTW start threads of their own, which inherit the mask:
  // otherwise the signal may land on one of them and kill the process without a clean stop.
  const sigset_t sigs = stop_signals();
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
  // Open MPI's session directory (the singleton's, ompi.HOST.UID) goes in a directory of this
  // server's own, removed at the end: a server stopped while predicting left it in TMPDIR.
  const fs::path session =
      fs::temp_directory_path() / ("ufno_server_mpi." + std::to_string(getpid()));
  const bool own_session = !std::getenv("OMPI_MCA_orte_tmpdir_base");
  if (own_session) {
    fs::create_directories(session);
    setenv("OMPI_MCA_orte_tmpdir_base", session.c_str(), 1);
  }
  const int code = ufno::mpi_main(argc, argv, "ufno_server",
                                  [](int ac, char** av, int, int) { return run(ac, av); });
  if (own_session) {
    std::error_code ec;
    fs::remove_all(session, ec);
  }
  return code;
}
