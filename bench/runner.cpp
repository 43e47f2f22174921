// runner.cpp: fork/exec/wait4 plumbing behind run_internal and run_external.
#include "runner.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <sstream>
#include <type_traits>

#include "warpsearch/error.hpp"

namespace warpsearch::bench {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// What an internal child sends back through its pipe.
struct ChildReport {
  bool ok = false;
  double work_s = 0;
  Work work;
  char message[1024] = {};
};
static_assert(std::is_trivially_copyable_v<ChildReport>);

struct Reaped {
  int status = 0;
  double child_s = 0;
  std::uint64_t peak_rss_kib = 0;
};

Reaped reap(pid_t pid, Clock::time_point start) {
  Reaped reaped;
  rusage usage{};
  while (::wait4(pid, &reaped.status, 0, &usage) < 0) {
    if (errno != EINTR) throw_system_error("wait4", "warpsearch-bench");
  }
  reaped.child_s = seconds_since(start);
  reaped.peak_rss_kib = static_cast<std::uint64_t>(usage.ru_maxrss);
  return reaped;
}

std::string describe_exit(int status, unsigned timeout_s) {
  if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    if (sig == SIGALRM && timeout_s > 0) return "timed out after " + std::to_string(timeout_s) + " s";
    return "killed by signal " + std::to_string(sig) + " (" + ::strsignal(sig) + ")";
  }
  return "unexpected wait status " + std::to_string(status);
}

void write_all(int fd, const void* data, std::size_t size) {
  const auto* bytes = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, bytes, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    bytes += n;
    size -= static_cast<std::size_t>(n);
  }
}

std::size_t read_all(int fd, void* data, std::size_t size) {
  auto* bytes = static_cast<char*>(data);
  std::size_t got = 0;
  while (got < size) {
    const ssize_t n = ::read(fd, bytes + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  return got;
}

// The child side of run_internal: time fn, report through fd, exit without running the harness's
// static destructors.
[[noreturn]] void internal_child(const std::function<Work(const Context&)>& fn, const Context& ctx, int fd,
                                 unsigned timeout_s) {
  if (timeout_s > 0) ::alarm(timeout_s);
  ChildReport report;
  try {
    const Clock::time_point start = Clock::now();
    report.work = fn(ctx);
    report.work_s = report.work.timed_s > 0 ? report.work.timed_s : seconds_since(start);
    report.ok = true;
  } catch (const std::exception& e) {
    std::snprintf(report.message, sizeof report.message, "%s", e.what());
  } catch (...) {
    std::snprintf(report.message, sizeof report.message, "unknown exception");
  }
  write_all(fd, &report, sizeof report);
  std::fflush(nullptr);
  ::_exit(report.ok ? 0 : 1);
}

// The child side of run_external: redirect stdio, arm the timeout, exec.
[[noreturn]] void exec_child(const std::vector<char*>& argv, const char* out_path, const char* err_path,
                             unsigned timeout_s) {
  const int in = ::open("/dev/null", O_RDONLY);
  const int out = ::open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const int err = ::open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (in < 0 || out < 0 || err < 0) ::_exit(126);
  ::dup2(in, STDIN_FILENO);
  ::dup2(out, STDOUT_FILENO);
  ::dup2(err, STDERR_FILENO);
  if (timeout_s > 0) ::alarm(timeout_s);
  ::execv(argv[0], argv.data());
  const std::string message = std::string("exec ") + argv[0] + ": " + std::strerror(errno) + "\n";
  write_all(STDERR_FILENO, message.data(), message.size());
  ::_exit(127);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The last non-empty line of a peer's stderr, for the failure message.
std::string last_line(const std::string& text) {
  std::istringstream in(text);
  std::string last;
  for (std::string line; std::getline(in, line);) {
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  }
  constexpr std::size_t kMaxChars = 200;
  return last.size() > kMaxChars ? last.substr(0, kMaxChars) + "..." : last;
}

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (std::size_t pos = text.find(from); pos != std::string::npos; pos = text.find(from, pos + to.size())) {
    text.replace(pos, from.size(), to);
  }
}

}  // namespace

RunRecord run_internal(const std::function<Work(const Context&)>& fn, const Context& ctx,
                       unsigned timeout_s) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw_system_error("pipe", "warpsearch-bench");
  std::fflush(nullptr);
  const Clock::time_point start = Clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) throw_system_error("fork", "warpsearch-bench");
  if (pid == 0) {
    ::close(fds[0]);
    internal_child(fn, ctx, fds[1], timeout_s);
  }
  ::close(fds[1]);
  ChildReport report;
  const std::size_t got = read_all(fds[0], &report, sizeof report);
  ::close(fds[0]);
  const Reaped reaped = reap(pid, start);

  RunRecord record;
  record.child_s = reaped.child_s;
  record.peak_rss_kib = reaped.peak_rss_kib;
  const bool reported = got == sizeof report;
  if (reported && report.ok && WIFEXITED(reaped.status) && WEXITSTATUS(reaped.status) == 0) {
    record.work_s = report.work_s;
    record.work = report.work;
  } else if (reported && !report.ok) {
    record.error = report.message;
  } else {
    record.error = describe_exit(reaped.status, timeout_s);
  }
  return record;
}

std::vector<std::string> peer_command(const ExternalRun& peer, const Context& ctx) {
  std::vector<std::string> args = peer.argv;
  for (std::string& arg : args) {
    replace_all(arg, "{input}", ctx.input);
    replace_all(arg, "{threads}", std::to_string(ctx.threads));
    replace_all(arg, "{tmp}", ctx.tmp);
    replace_all(arg, "{scratch}", ctx.scratch);
  }
  if (const auto program = find_program(args.at(0))) args[0] = *program;
  return args;
}

RunRecord run_external(const ExternalRun& peer, const Context& ctx, unsigned timeout_s) {
  std::vector<std::string> args = peer_command(peer, ctx);
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const std::string out_path = peer.capture_stdout ? ctx.scratch + "/stdout" : "/dev/null";
  const std::string err_path = ctx.scratch + "/stderr";

  std::fflush(nullptr);
  const Clock::time_point start = Clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) throw_system_error("fork", "warpsearch-bench");
  if (pid == 0) exec_child(argv, out_path.c_str(), err_path.c_str(), timeout_s);
  const Reaped reaped = reap(pid, start);

  RunRecord record;
  record.child_s = reaped.child_s;
  record.work_s = reaped.child_s;
  record.peak_rss_kib = reaped.peak_rss_kib;
  if (!WIFEXITED(reaped.status) || WEXITSTATUS(reaped.status) != 0) {
    const std::string detail = last_line(read_text(err_path));
    record.error = describe_exit(reaped.status, timeout_s) + (detail.empty() ? "" : ": " + detail);
    return record;
  }
  if (peer.work) {
    try {
      record.work = peer.work(ctx, peer.capture_stdout ? read_text(out_path) : std::string());
    } catch (const std::exception& e) {
      record.error = std::string("reading its output: ") + e.what();
    }
  }
  return record;
}

}  // namespace warpsearch::bench
