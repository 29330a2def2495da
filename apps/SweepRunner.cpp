#include "apps/SweepRunner.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <vector>

#include "apps/SweepForm.hpp"
#include "core/InputError.hpp"
#include "screening/Sweep.hpp"

extern char** environ;

namespace ufno {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr double kGraceSeconds = 5;  // after SIGTERM, before SIGKILL
constexpr auto kPoll = std::chrono::milliseconds(200);

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

ServiceReply error_reply(int status, const std::string& field, const std::string& message) {
  return {status, json{{"error", message}, {"field", field}}};
}

std::uintmax_t tree_bytes(const fs::path& p) {
  std::uintmax_t n = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(p, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code e2;
    if (it->is_regular_file(e2)) n += it->file_size(e2);
  }
  return n;
}

// The last `max` bytes of a file.
std::string tail(const fs::path& p, std::size_t max = 16384) {
  std::ifstream f(p, std::ios::binary);
  if (!f) return "";
  f.seekg(0, std::ios::end);
  const std::streamoff size = f.tellg();
  const std::streamoff from = size > std::streamoff(max) ? size - std::streamoff(max) : 0;
  f.seekg(from);
  std::string s(std::size_t(size - from), '\0');
  f.read(s.data(), std::streamsize(s.size()));
  return s;
}

std::string last_line(const std::string& text) {
  std::istringstream in(text);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return last;
}

// The failed scenarios of a finished sweep's kpis.csv (its status column).
int failed_rows(const fs::path& csv) {
  std::ifstream f(csv);
  std::string line;
  int n = 0;
  std::getline(f, line);
  while (std::getline(f, line)) n += line.find(",failed") != std::string::npos;
  return n;
}

// The sweep program in a process group of its own, signals at their defaults and none blocked
// (the server blocks SIGTERM in every thread), no descriptor of the server's open, its output
// into `log`. 0 if it cannot start (errno-style code in `err`).
pid_t spawn(const std::vector<std::string>& args, const std::string& log, int& err) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  posix_spawn_file_actions_addclosefrom_np(&fa, 3);
  posix_spawnattr_t at;
  posix_spawnattr_init(&at);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int s : {SIGTERM, SIGINT, SIGPIPE, SIGHUP}) sigaddset(&defaults, s);
  posix_spawnattr_setsigmask(&at, &none);
  posix_spawnattr_setsigdefault(&at, &defaults);
  posix_spawnattr_setpgroup(&at, 0);
  posix_spawnattr_setflags(&at,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = 0;
  err = posix_spawn(&pid, argv[0], &fa, &at, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&at);
  return err == 0 ? pid : 0;
}

}  // namespace

SweepRunner::SweepRunner(std::string dir, SweepLimits limits)
    : dir_(std::move(dir)), limits_(std::move(limits)) {
  std::error_code ec;
  fs::remove_all(dir_, ec);
  fs::create_directories(dir_, ec);  // a start that cannot write there fails then, as a 500
  monitor_ = std::thread([this] { monitor(); });
}

SweepRunner::~SweepRunner() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
    if (const Sweep* s = find(running_)) kill(-s->pid, SIGTERM);
  }
  cv_.notify_all();
  monitor_.join();
}

SweepRunner::Sweep* SweepRunner::find(const std::string& id) {
  for (auto& s : sweeps_)
    if (s.id == id) return &s;
  return nullptr;
}

const SweepRunner::Sweep* SweepRunner::find(const std::string& id) const {
  for (const auto& s : sweeps_)
    if (s.id == id) return &s;
  return nullptr;
}

json SweepRunner::info() const {
  std::lock_guard<std::mutex> l(mu_);
  return {{"available", !limits_.program.empty()},
          {"max_scenarios", limits_.max_scenarios},
          {"max_seconds", limits_.max_seconds},
          {"max_disk_mb", limits_.max_disk_mb},
          {"parameters", sweep_form_parameters()},
          {"running", running_.empty() ? json() : json(running_)}};
}

json SweepRunner::status_json(const Sweep& s) const {
  const double end = s.status == "running" ? now_s() : s.ended;
  json j{{"id", s.id},     {"status", s.status}, {"scenarios", s.total},
         {"done", s.done}, {"stage", s.stage},   {"elapsed_s", end - s.started}};
  if (s.status == "running") j["pid"] = s.pid;
  if (!s.error.empty()) j["error"] = s.error;
  if (s.status == "done") {
    j["failed_scenarios"] = s.failed_scenarios;
    j["kpis"] = "/api/sweeps/" + s.id + "/kpis.csv";
    j["report"] = s.report ? json("/api/sweeps/" + s.id + "/report.html") : json();
  }
  return j;
}

ServiceReply SweepRunner::start(json config) {
  if (limits_.program.empty())
    return error_reply(503, "",
                       "sweeps are not available: the server found no ufno_sweep "
                       "program (give --sweep-program)");
  std::lock_guard<std::mutex> one(start_mu_);
  std::string id;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (!running_.empty())
      return {409, json{{"error", "sweep " + running_ +
                                      " is running; one sweep runs at a time: wait for it or "
                                      "cancel it"},
                        {"field", ""},
                        {"running", running_}}};
    char buf[32];
    std::snprintf(buf, sizeof buf, "s%06ld", next_id_ + 1);  // taken once it starts
    id = buf;
  }
  // Room for the new sweep: at most keep - 1 finished ones, taking at most half the disk limit.
  remove_oldest_finished(std::size_t(std::max(0, limits_.keep - 1)));
  enforce_disk("", 0.5);
  const fs::path dir = fs::path(dir_) / id, cfg = dir / "config.json";
  config["out"] = (dir / "out").string();
  std::error_code ec;
  fs::create_directories(dir, ec);
  {
    std::ofstream f(cfg);
    f << config.dump(2) << "\n";
    if (!f) {
      fs::remove_all(dir, ec);
      return error_reply(500, "", "cannot write the sweep's configuration in " + dir.string());
    }
  }
  // The sweep's own checks, as for a configuration file: ranges, physical limits, thresholds.
  try {
    read_sweep_config(cfg.string());
  } catch (const InputError& e) {
    fs::remove_all(dir, ec);
    std::string msg = e.what();
    const std::string prefix = e.file() + ": " + (e.field().empty() ? "" : e.field() + ": ");
    if (msg.rfind(prefix, 0) == 0) msg = msg.substr(prefix.size());
    const std::string field = sweep_form_field(e.field());
    return error_reply(422, field, (field.empty() ? "" : field + ": ") + msg);
  } catch (const std::exception& e) {
    fs::remove_all(dir, ec);
    return error_reply(500, "", std::string("cannot check the sweep: ") + e.what());
  }
  int err = 0;
  const pid_t pid = spawn(
      {limits_.program, "--config", cfg.string(), "--threads", std::to_string(limits_.threads)},
      (dir / "sweep.log").string(), err);
  if (!pid) {
    fs::remove_all(dir, ec);
    return error_reply(500, "", "cannot start " + limits_.program + ": " + std::strerror(err));
  }
  std::lock_guard<std::mutex> l(mu_);
  Sweep s;
  s.id = id;
  s.dir = dir.string();
  s.total = config["samples"].get<int>();
  s.started = now_s();
  s.pid = pid;
  sweeps_.push_back(s);
  running_ = id;
  ++next_id_;
  cv_.notify_all();
  return {202, status_json(sweeps_.back())};
}

ServiceReply SweepRunner::status(const std::string& id) const {
  std::lock_guard<std::mutex> l(mu_);
  const Sweep* s = find(id);
  if (!s) return error_reply(404, "", "unknown sweep " + id + " (or removed as an old one)");
  return {200, status_json(*s)};
}

ServiceReply SweepRunner::cancel(const std::string& id) {
  std::unique_lock<std::mutex> l(mu_);
  Sweep* s = find(id);
  if (!s) return error_reply(404, "", "unknown sweep " + id + " (or removed as an old one)");
  if (s->status != "running")
    return {409, json{{"error", "sweep " + id + " is not running (" + s->status + ")"},
                      {"field", ""},
                      {"status", s->status}}};
  s->cancel = true;
  cv_.notify_all();
  // The monitor stops it within the grace period (then kills it) and removes its outputs.
  cv_.wait(l, [&] {
    const Sweep* t = find(id);
    return !t || t->status != "running";
  });
  s = find(id);
  return {200, s ? status_json(*s) : json{{"id", id}, {"status", "cancelled"}}};
}

ServiceReply SweepRunner::file(const std::string& id, const std::string& name,
                               std::string& bytes) const {
  fs::path path;
  {
    std::lock_guard<std::mutex> l(mu_);
    const Sweep* s = find(id);
    if (!s) return error_reply(404, "", "unknown sweep " + id + " (or removed as an old one)");
    if (s->status != "done")
      return error_reply(409, "", "sweep " + id + " has no results: it is " + s->status);
    if (name == "report.html" && !s->report)
      return error_reply(404, "", "sweep " + id + " has no report: " + s->error);
    path = fs::path(s->dir) / "out" / name;
  }
  std::ifstream f(path, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  if (!f) return error_reply(500, "", "cannot read " + path.string());
  bytes = ss.str();
  return {200, json()};
}

void SweepRunner::terminate(pid_t pid) const {
  kill(-pid, SIGTERM);
  int st = 0;
  for (double waited = 0; waited < kGraceSeconds; waited += 0.05) {
    const pid_t w = waitpid(pid, &st, WNOHANG);
    if (w == pid || (w < 0 && errno == ECHILD)) {
      kill(-pid, SIGKILL);  // anything of its group still there (its report's Python)
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(-pid, SIGKILL);
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
}

void SweepRunner::update_progress(const std::string& id) {
  std::string log;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (const Sweep* s = find(id)) log = (fs::path(s->dir) / "sweep.log").string();
  }
  const std::string text = tail(log);
  static const std::regex step(R"(ufno_sweep: \[(\d+)/(\d+)\])");
  int done = -1;
  for (std::sregex_iterator it(text.begin(), text.end(), step), end; it != end; ++it)
    done = std::stoi((*it)[1]);
  const bool summary = text.find(" scenario(s): ") != std::string::npos;
  std::lock_guard<std::mutex> l(mu_);
  Sweep* s = find(id);
  if (!s) return;
  if (done >= 0) s->done = done, s->stage = "predicting";
  if (summary || s->done >= s->total) s->done = s->total, s->stage = "writing the table and report";
}

void SweepRunner::remove_oldest_finished(std::size_t keep) {
  std::lock_guard<std::mutex> l(mu_);
  std::size_t finished = 0;
  for (const auto& s : sweeps_) finished += s.status != "running";
  for (auto it = sweeps_.begin(); it != sweeps_.end() && finished > keep;) {
    if (it->status == "running") {
      ++it;
      continue;
    }
    std::error_code ec;
    fs::remove_all(it->dir, ec);
    it = sweeps_.erase(it);
    --finished;
  }
}

bool SweepRunner::enforce_disk(const std::string& running_id, double fraction) {
  const double limit = fraction * limits_.max_disk_mb * 1024 * 1024;
  std::vector<std::pair<std::string, std::uintmax_t>> sizes;  // oldest first
  {
    std::lock_guard<std::mutex> l(mu_);
    for (const auto& s : sweeps_) sizes.emplace_back(s.dir, 0);
  }
  double total = 0;
  for (auto& [d, n] : sizes) total += double(n = tree_bytes(d));
  if (total <= limit) return true;
  std::lock_guard<std::mutex> l(mu_);
  for (auto it = sweeps_.begin(); it != sweeps_.end() && total > limit;) {
    if (it->id == running_id) {
      ++it;
      continue;
    }
    for (const auto& [d, n] : sizes)
      if (d == it->dir) total -= double(n);
    std::error_code ec;
    fs::remove_all(it->dir, ec);
    it = sweeps_.erase(it);
  }
  return total <= limit;
}

void SweepRunner::finish(const std::string& id, int st, const std::string& as,
                         const std::string& why) {
  std::string dir;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (const Sweep* s = find(id)) dir = s->dir;
  }
  const fs::path out = fs::path(dir) / "out";
  std::string status = as, error = why;
  bool report = false;
  int failed = 0;
  const int code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  if (status.empty()) {
    const std::string last = last_line(tail(fs::path(dir) / "sweep.log"));
    // 0, or 3 (some scenarios failed): kpis.csv is complete and the report made if it could be.
    if ((code == 0 || code == 3) && fs::exists(out / "kpis.csv")) {
      status = "done";
      failed = failed_rows(out / "kpis.csv");
      report = fs::exists(out / "report.html");
      if (!report) {
        // ufno_sweep's warning names the reason (its summary line may come after it).
        const std::string log = tail(fs::path(dir) / "sweep.log");
        const auto w = log.rfind("no report.html");
        error =
            w == std::string::npos ? "no report: " + last : log.substr(w, log.find('\n', w) - w);
      }
    } else {
      status = "failed";
      error = (WIFSIGNALED(st) ? "ufno_sweep was killed by signal " + std::to_string(WTERMSIG(st))
                               : "ufno_sweep ended with exit code " + std::to_string(code)) +
              (last.empty() ? "" : ": " + last);
    }
  }
  // Nothing half-written stays: only a finished sweep keeps its outputs, for which older sweeps
  // make room.
  if (status != "done") {
    std::error_code ec;
    fs::remove_all(out, ec);
  } else {
    enforce_disk(id);
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    if (Sweep* s = find(id)) {
      s->status = status;
      s->error = error;
      s->report = report;
      s->failed_scenarios = failed;
      s->ended = now_s();
      if (status == "done")
        s->done = s->total, s->stage = "finished";
      else
        s->stage = status;
    }
    running_.clear();
  }
  cv_.notify_all();
}

void SweepRunner::monitor() {
  double last_disk_check = 0;
  std::unique_lock<std::mutex> l(mu_);
  for (;;) {
    cv_.wait_for(l, kPoll);
    const Sweep* s = find(running_);
    if (!s) {
      if (stop_) return;
      continue;
    }
    const std::string id = s->id;
    const pid_t pid = s->pid;
    const bool cancel = s->cancel, stop = stop_;
    const double elapsed = now_s() - s->started;
    l.unlock();
    int st = 0;
    const pid_t w = waitpid(pid, &st, WNOHANG);
    if (w == pid || (w < 0 && errno == ECHILD)) {
      kill(-pid, SIGKILL);  // its report's Python, should it outlive it
      finish(id, st, "", "");
    } else if (stop || cancel) {
      terminate(pid);
      finish(id, 0, "cancelled", stop ? "the server stopped" : "");
    } else if (elapsed > limits_.max_seconds) {
      terminate(pid);
      finish(id, 0, "failed",
             "stopped after " + std::to_string(int(limits_.max_seconds)) +
                 " s, the server's limit on a sweep's run time (--sweep-max-seconds)");
    } else {
      update_progress(id);
      if (now_s() - last_disk_check > 1) {
        last_disk_check = now_s();
        if (!enforce_disk(id)) {
          terminate(pid);
          std::ostringstream mb;
          mb << limits_.max_disk_mb;
          finish(id, 0, "failed",
                 "stopped: its outputs passed the server's limit of " + mb.str() +
                     " MB for sweeps (--sweep-max-disk-mb)");
        }
      }
    }
    l.lock();
  }
}

}  // namespace ufno
