// report.cpp: summary statistics, the text table, CSV and JSON writers, and the run description.
#include "report.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <thread>

#include "core/text_format.hpp"
#include "warpsearch/output_file.hpp"
#include "warpsearch/version.hpp"

namespace warpsearch::bench {
namespace {

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

double per_second(std::uint64_t amount, double seconds, double unit) {
  return amount > 0 && seconds > 0 ? static_cast<double>(amount) / seconds / unit : 0;
}

double mib(std::uint64_t kib) { return static_cast<double>(kib) / 1024; }

std::string base_name(const std::string& path) { return std::filesystem::path(path).filename().string(); }

// "-" for values that are not known.
std::string cell(double value, int decimals) {
  return value > 0 ? fmt::format("{:.{}f}", value, decimals) : std::string("-");
}

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      const std::size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  }
  return "unknown CPU";
}

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  ::gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

// Summary numbers in CSV and JSON: six significant digits; unknown (0) is an empty field or null.
std::string csv_number(double value) { return value > 0 ? fmt::format("{:.6g}", value) : std::string(); }
std::string csv_count(std::uint64_t value) { return value > 0 ? std::to_string(value) : std::string(); }
std::string json_number(double value) {
  return value > 0 ? fmt::format("{:.6g}", value) : std::string("null");
}

std::string json_work(const Work& work) {
  return fmt::format(R"({{"bytes": {}, "residues": {}, "records": {}, "cells": {}, "length": {}}})",
                     work.bytes, work.residues, work.records, work.cells, work.length);
}

std::string json_run(const RunRecord& run) {
  return fmt::format(R"({{"work_s": {}, "child_s": {}, "peak_rss_kib": {}}})", json_number(run.work_s),
                     json_number(run.child_s), run.peak_rss_kib);
}

std::string json_result(const EntryResult& result) {
  const Summary s = summarize(result);
  std::string runs;
  for (const RunRecord& run : result.runs) runs += (runs.empty() ? "" : ", ") + json_run(run);
  return fmt::format(
      "    {{\"name\": {}, \"kind\": \"{}\", \"headline\": \"{}\", \"input\": {}, \"threads\": {}, "
      "\"status\": {}, \"command\": {},\n     \"median_s\": {}, \"min_s\": {}, \"child_median_s\": {}, "
      "\"peak_rss_mib\": {}, \"mb_per_s\": {}, \"mres_per_s\": {}, \"gcups\": {},\n     \"work\": {},\n"
      "     \"runs\": [{}]}}",
      json_quote(result.name), result.peer ? "peer" : "internal", to_string(result.headline),
      json_quote(result.input), result.threads, json_quote(result.status), json_quote(result.command),
      json_number(s.median_s), json_number(s.min_s), json_number(s.child_median_s),
      json_number(mib(s.peak_rss_kib)), json_number(s.mb_per_s), json_number(s.mres_per_s),
      json_number(s.gcups), json_work(s.work), runs);
}

}  // namespace

Summary summarize(const EntryResult& result) {
  Summary s;
  if (result.runs.empty()) return s;
  std::vector<double> work_s;
  std::vector<double> child_s;
  for (const RunRecord& run : result.runs) {
    work_s.push_back(run.work_s);
    child_s.push_back(run.child_s);
    s.peak_rss_kib = std::max(s.peak_rss_kib, run.peak_rss_kib);
  }
  s.median_s = median(work_s);
  s.min_s = *std::min_element(work_s.begin(), work_s.end());
  s.child_median_s = median(child_s);
  s.work = result.runs.front().work;
  s.mb_per_s = per_second(s.work.bytes, s.median_s, 1e6);
  s.mres_per_s = per_second(s.work.residues, s.median_s, 1e6);
  s.gcups = per_second(s.work.cells, s.median_s, 1e9);
  return s;
}

RunMeta describe_run(const std::string& label, const std::string& command, int repeat, int warmup) {
  RunMeta meta;
  meta.label = label;
  meta.date = utc_now();
  meta.machine = fmt::format("{}, {} CPUs", cpu_model(), std::thread::hardware_concurrency());
  meta.version = kVersion;
  meta.command = command;
  meta.repeat = repeat;
  meta.warmup = warmup;
  return meta;
}

void print_table(std::FILE* out, const RunMeta& meta, const std::vector<EntryResult>& results) {
  std::size_t name_width = 4;
  std::size_t input_width = 5;
  for (const EntryResult& r : results) {
    name_width = std::max(name_width, r.name.size());
    input_width = std::max(input_width, base_name(r.input).size());
  }
  fmt::print(out, "\nwarpsearch-bench {}  {}  {}{}\n", meta.version, meta.date, meta.machine,
             meta.label.empty() ? "" : "  [" + meta.label + "]");
  fmt::print(out, "{} measured runs after {} warm-up; throughput = work / median wall time\n", meta.repeat,
             meta.warmup);
  fmt::print(out, "{:<{}}  {:<{}}  {:>4}  {:>9}  {:>9}  {:>9}  {:>9}  {:>8}  {:>9}  {}\n", "name", name_width,
             "input", input_width, "runs", "median s", "min s", "MB/s", "Mres/s", "GCUPS", "peak MiB",
             "status");
  for (const EntryResult& r : results) {
    const Summary s = summarize(r);
    fmt::print(out, "{:<{}}  {:<{}}  {:>4}  {:>9}  {:>9}  {:>9}  {:>9}  {:>8}  {:>9}  {}\n", r.name,
               name_width, base_name(r.input), input_width, r.runs.size(), cell(s.median_s, 4),
               cell(s.min_s, 4), cell(s.mb_per_s, 1), cell(s.mres_per_s, 1), cell(s.gcups, 2),
               cell(mib(s.peak_rss_kib), 1), r.status);
  }
  std::fflush(out);
}

void write_csv(const std::string& path, const RunMeta& meta, const std::vector<EntryResult>& results) {
  OutputFile file(path);
  file.write(
      "label,date,machine,version,name,kind,input,length,threads,runs,median_s,min_s,child_median_s,bytes,"
      "residues,records,cells,mb_per_s,mres_per_s,gcups,peak_rss_mib,status\n");
  for (const EntryResult& r : results) {
    const Summary s = summarize(r);
    file.write(fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
                           csv_field(meta.label), meta.date, csv_field(meta.machine), meta.version,
                           csv_field(r.name), r.peer ? "peer" : "internal", csv_field(r.input),
                           csv_count(s.work.length), r.threads, r.runs.size(), csv_number(s.median_s),
                           csv_number(s.min_s), csv_number(s.child_median_s), csv_count(s.work.bytes),
                           csv_count(s.work.residues), csv_count(s.work.records), csv_count(s.work.cells),
                           csv_number(s.mb_per_s), csv_number(s.mres_per_s), csv_number(s.gcups),
                           csv_number(mib(s.peak_rss_kib)), csv_field(r.status)));
  }
  file.commit();
}

void write_json(const std::string& path, const RunMeta& meta, const std::vector<EntryResult>& results) {
  OutputFile file(path);
  file.write(fmt::format(
      "{{\n  \"meta\": {{\"label\": {}, \"date\": {}, \"machine\": {}, \"version\": {}, \"command\": {}, "
      "\"repeat\": {}, \"warmup\": {}}},\n  \"results\": [\n",
      json_quote(meta.label), json_quote(meta.date), json_quote(meta.machine), json_quote(meta.version),
      json_quote(meta.command), meta.repeat, meta.warmup));
  for (std::size_t i = 0; i < results.size(); ++i) {
    file.write(json_result(results[i]) + (i + 1 < results.size() ? ",\n" : "\n"));
  }
  file.write("  ]\n}\n");
  file.commit();
}

}  // namespace warpsearch::bench
