// `mimic bench ab` and `mimic bench ppo` (see bench_ab.h for the measurement rules).
#include "cli/bench_ab.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <optional>
#include <set>

#include "cli/process.h"
#include "support/json.h"

namespace mimic::cli {

namespace fs = std::filesystem;

namespace {

const std::set<std::string> kCounters = {"iter", "iteration", "epoch", "step", "trial", "seed", "run"};

bool wanted(const AbOptions& options, const std::string& metric) {
  if (kCounters.count(metric)) return false;
  return options.metrics.empty() ||
         std::find(options.metrics.begin(), options.metrics.end(), metric) != options.metrics.end();
}

std::string format_value(double v) {
  char text[48];
  double a = std::fabs(v);
  if (a != 0 && (a >= 1e7 || a < 1e-3))
    snprintf(text, sizeof text, "%.4g", v);
  else if (a >= 1000)
    snprintf(text, sizeof text, "%.0f", v);
  else
    snprintf(text, sizeof text, "%.4g", v);
  return text;
}

// One run of one configuration: every metric's values in the order printed.
struct RunValues {
  int status = 0;
  std::vector<std::pair<std::string, double>> values;
};

RunValues run_once(const AbConfig& config, const AbOptions& options, unsigned trial) {
  RunValues run;
  ChildOptions child;
  child.env = config.env;
  child.timeout_seconds = options.timeout_seconds;
  run.status = run_lines(
      config.argv,
      [&](const std::string& line) {
        if (options.echo) {
          printf("[%s %u] %s\n", config.label.c_str(), trial + 1, line.c_str());
          fflush(stdout);
        }
        // Word by word, so that metrics keep the order the workload prints them in.
        size_t pos = 0;
        while (pos < line.size()) {
          size_t end = std::min(line.find(' ', pos), line.size());
          Record word = parse_line(line.substr(pos, end - pos));
          pos = end + 1;
          if (word.size() != 1 || word.begin()->first.empty()) continue;
          const std::string& key = word.begin()->first;
          if (!wanted(options, key)) continue;
          if (auto v = number(word, key)) run.values.emplace_back(key, *v);
        }
      },
      child);
  return run;
}

} // namespace

bool lower_is_better(const std::string& metric) {
  for (const char* suffix : {"_s", "_ms", "_us", "_ns", "_sec", "_seconds"})
    if (metric.size() > strlen(suffix) && metric.ends_with(suffix)) return true;
  return metric.find("time") != std::string::npos || metric == "seconds" || metric == "latency";
}

AbStats AbResult::stats(size_t config, const std::string& metric) const {
  std::vector<double> v;
  for (const AbSample& s : samples)
    if (s.config == config && s.metric == metric && !s.dropped) v.push_back(s.value);
  AbStats st;
  st.count = v.size();
  if (v.empty()) return st;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  st.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  double sum = 0;
  for (double x : v)
    sum += x;
  st.mean = sum / double(n);
  st.min = v.front();
  st.max = v.back();
  double squares = 0;
  for (double x : v)
    squares += (x - st.mean) * (x - st.mean);
  st.stdev = n > 1 ? std::sqrt(squares / double(n - 1)) : 0;
  return st;
}

AbResult run_ab(const std::vector<AbConfig>& configs, const AbOptions& options) {
  AbResult result;
  result.configs = configs;
  unsigned order = 0;
  for (unsigned trial = 0; trial < options.trials; ++trial) {
    // A B, B A, A B, ...: each configuration runs first as often as the other.
    for (size_t k = 0; k < configs.size(); ++k) {
      size_t c = trial % 2 ? configs.size() - 1 - k : k;
      RunValues run = run_once(configs[c], options, trial);
      if (run.status != 0) {
        fprintf(stderr, "mimic bench: run %u of '%s' ended with status %d\n", trial + 1,
                configs[c].label.c_str(), run.status);
        result.failed_runs.push_back(run.status);
        // A command that cannot start (not found, not executable) will not start next time.
        if (run.status == 126 || run.status == 127) return result;
      }
      std::map<std::string, unsigned> seen;
      std::map<std::string, size_t> last; // rounds: the index of the metric's last sample
      for (const auto& [metric, value] : run.values) {
        if (std::find(result.metrics.begin(), result.metrics.end(), metric) == result.metrics.end())
          result.metrics.push_back(metric);
        AbSample s;
        s.config = c;
        s.trial = trial;
        s.order = order;
        s.index = seen[metric]++;
        s.metric = metric;
        s.value = value;
        s.dropped = options.rounds ? true : s.index < options.drop;
        last[metric] = result.samples.size();
        result.samples.push_back(s);
      }
      if (options.rounds)
        for (const auto& [metric, at] : last)
          result.samples[at].dropped = trial < options.drop;
      ++order;
    }
  }
  // Metrics that no kept sample measures (a one-off line such as params=N) are not reported.
  std::erase_if(result.metrics, [&](const std::string& m) {
    for (size_t c = 0; c < configs.size(); ++c)
      if (result.stats(c, m).count) return false;
    return true;
  });
  return result;
}

void print_ab_table(const AbResult& r) {
  int w = 12;
  for (const AbConfig& c : r.configs)
    w = std::max(w, int(c.label.size()));
  printf("\n%-16s %-*s %5s %12s %12s %12s %12s %10s\n", "metric", w, "config", "n", "median", "mean",
         "min", "max", "stdev %");
  for (const std::string& m : r.metrics) {
    for (size_t c = 0; c < r.configs.size(); ++c) {
      AbStats s = r.stats(c, m);
      if (!s.count) {
        printf("%-16s %-*s %5s\n", m.c_str(), w, r.configs[c].label.c_str(), "0");
        continue;
      }
      printf("%-16s %-*s %5zu %12s %12s %12s %12s %10.1f\n", m.c_str(), w, r.configs[c].label.c_str(),
             s.count, format_value(s.median).c_str(), format_value(s.mean).c_str(),
             format_value(s.min).c_str(), format_value(s.max).c_str(),
             s.mean != 0 ? 100.0 * s.stdev / std::fabs(s.mean) : 0.0);
    }
    if (r.configs.size() == 2) {
      AbStats a = r.stats(0, m), b = r.stats(1, m);
      if (a.count && b.count && a.median != 0) {
        double diff = 100.0 * (b.median - a.median) / std::fabs(a.median);
        double mean_diff = a.mean != 0 ? 100.0 * (b.mean - a.mean) / std::fabs(a.mean) : 0;
        bool b_better = lower_is_better(m) ? b.median < a.median : b.median > a.median;
        printf("%-16s %s vs %s: median %+.1f%%, mean %+.1f%% (%s better; %s is better)\n", m.c_str(),
               r.configs[1].label.c_str(), r.configs[0].label.c_str(), diff, mean_diff,
               b.median == a.median ? "neither" : (b_better ? r.configs[1].label : r.configs[0].label).c_str(),
               lower_is_better(m) ? "lower" : "higher");
      }
    }
  }
}

namespace {

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s)
    q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string xml_text(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else if (c == '"') out += "&quot;";
    else out += c;
  }
  return out;
}

// One panel per metric: every measurement in the order taken (dropped ones hollow), a
// colour per configuration, dashed lines at the medians.
std::string svg_plot(const AbResult& r) {
  const char* colours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd"};
  const double width = 960, panel = 200, top = 40, left = 80, right = 20, gap = 50;
  double height = top + double(r.metrics.size()) * (panel + gap) + 10;
  std::string svg;
  char buf[512];
  snprintf(buf, sizeof buf,
           "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
           "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
           width, height);
  svg += buf;
  double legend_x = left;
  for (size_t c = 0; c < r.configs.size(); ++c) {
    snprintf(buf, sizeof buf,
             "<circle cx=\"%.0f\" cy=\"20\" r=\"5\" fill=\"%s\"/><text x=\"%.0f\" y=\"24\">%s</text>\n",
             legend_x, colours[c % 4], legend_x + 10, xml_text(r.configs[c].label).c_str());
    svg += buf;
    legend_x += 40 + 8.0 * double(r.configs[c].label.size());
  }
  svg += "<text x=\"" + std::to_string(int(legend_x)) +
         "\" y=\"24\" fill=\"#666\">hollow: dropped (cold); dashed: median</text>\n";
  for (size_t p = 0; p < r.metrics.size(); ++p) {
    const std::string& m = r.metrics[p];
    std::vector<const AbSample*> points;
    for (const AbSample& s : r.samples)
      if (s.metric == m) points.push_back(&s);
    if (points.empty()) continue;
    double lo = points[0]->value, hi = lo;
    for (const AbSample* s : points) {
      lo = std::min(lo, s->value);
      hi = std::max(hi, s->value);
    }
    if (hi == lo) {
      hi += std::fabs(hi) * 0.05 + 1e-9;
      lo -= std::fabs(lo) * 0.05 + 1e-9;
    }
    double y0 = top + double(p) * (panel + gap) + 20;
    double plot_w = width - left - right;
    auto y_of = [&](double v) { return y0 + panel - (v - lo) / (hi - lo) * panel; };
    snprintf(buf, sizeof buf,
             "<text x=\"%.0f\" y=\"%.0f\" font-weight=\"bold\">%s (%s is better)</text>\n"
             "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" stroke=\"#999\"/>\n"
             "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">%s</text>\n"
             "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">%s</text>\n",
             left, y0 - 6, xml_text(m).c_str(), lower_is_better(m) ? "lower" : "higher", left, y0, plot_w,
             panel, left - 6, y0 + 10, format_value(hi).c_str(), left - 6, y0 + panel,
             format_value(lo).c_str());
    svg += buf;
    for (size_t i = 0; i < points.size(); ++i) {
      const AbSample* s = points[i];
      double x = left + (double(i) + 0.5) / double(points.size()) * plot_w;
      const char* colour = colours[s->config % 4];
      snprintf(buf, sizeof buf,
               "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\" stroke=\"%s\"><title>%s run %u value %u: %s</title></circle>\n",
               x, y_of(s->value), s->dropped ? "none" : colour, colour,
               xml_text(r.configs[s->config].label).c_str(), s->trial + 1, s->index + 1,
               format_value(s->value).c_str());
      svg += buf;
    }
    for (size_t c = 0; c < r.configs.size(); ++c) {
      AbStats st = r.stats(c, m);
      if (!st.count) continue;
      snprintf(buf, sizeof buf,
               "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-dasharray=\"6,4\"/>\n",
               left, left + plot_w, y_of(st.median), y_of(st.median), colours[c % 4]);
      svg += buf;
    }
  }
  svg += "</svg>\n";
  return svg;
}

bool write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) {
    fprintf(stderr, "mimic bench: cannot write %s\n", path.c_str());
    return false;
  }
  return true;
}

} // namespace

bool write_ab_files(const AbResult& r, const AbOptions& options, const fs::path& dir) {
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) {
    fprintf(stderr, "mimic bench: cannot create %s: %s\n", dir.c_str(), error.message().c_str());
    return false;
  }
  std::string csv = "config,run,order,metric,index,value,dropped\n";
  for (const AbSample& s : r.samples) {
    char value[48];
    snprintf(value, sizeof value, "%.15g", s.value);
    csv += csv_field(r.configs[s.config].label) + "," + std::to_string(s.trial + 1) + "," +
           std::to_string(s.order + 1) + "," + csv_field(s.metric) + "," + std::to_string(s.index + 1) + "," +
           value + "," + (s.dropped ? "1" : "0") + "\n";
  }
  JsonWriter j;
  j.begin_object();
  j.key("mode").value(options.rounds ? "rounds" : "trials");
  j.key("trials").value(uint64_t(options.trials));
  j.key("dropped_per_run").value(uint64_t(options.drop));
  j.key("configs").begin_array();
  for (const AbConfig& c : r.configs) {
    j.begin_object().key("label").value(c.label).key("command").begin_array();
    for (const std::string& a : c.argv)
      j.value(a);
    j.end_array().key("env").begin_object();
    for (const auto& [k, v] : c.env)
      j.key(k).value(v);
    j.end_object().end_object();
  }
  j.end_array();
  j.key("failed_runs").value(uint64_t(r.failed_runs.size()));
  j.key("metrics").begin_object();
  for (const std::string& m : r.metrics) {
    j.key(m).begin_object();
    j.key("lower_is_better").value(lower_is_better(m));
    for (size_t c = 0; c < r.configs.size(); ++c) {
      AbStats s = r.stats(c, m);
      j.key(r.configs[c].label).begin_object();
      j.key("n").value(uint64_t(s.count));
      j.key("median").value(s.median).key("mean").value(s.mean).key("min").value(s.min);
      j.key("max").value(s.max).key("stdev").value(s.stdev);
      j.end_object();
    }
    if (r.configs.size() == 2) {
      AbStats a = r.stats(0, m), b = r.stats(1, m);
      if (a.count && b.count && a.median != 0)
        j.key("median_diff_percent").value(100.0 * (b.median - a.median) / std::fabs(a.median));
    }
    j.end_object();
  }
  j.end_object();
  j.end_object();
  return write_file(dir / "samples.csv", csv) && write_file(dir / "summary.json", j.str() + "\n") &&
         write_file(dir / "plot.svg", svg_plot(r));
}

// ---- the command lines -----------------------------------------------------------------

namespace {

int ab_usage(FILE* out) {
  fprintf(out,
          "usage: mimic bench ab [options] --a SPEC --b SPEC -- PROGRAM [ARGS...]\n"
          "  Runs PROGRAM under two configurations in alternating trials and compares every\n"
          "  metric it prints (lines of key=value words; counters such as iter= are not metrics).\n"
          "  SPEC, comma-separated:\n"
          "    mimic            under this Mimic (`mimic run`; the default)\n"
          "    mimic=PATH       under another build's mimic executable\n"
          "    native           PROGRAM directly (on NVIDIA's driver where there is one)\n"
          "    backend=cpu|amdgpu, env:NAME=VALUE (repeatable), label=NAME\n"
          "  options:\n"
          "    --trials N       runs per configuration (default 3)\n"
          "    --rounds         each run is one measurement (its last value of each metric)\n"
          "    --drop N         cold values dropped per run, or with --rounds cold runs per\n"
          "                     configuration (default 1)\n"
          "    --metrics A,B    compare only these metrics\n"
          "    --timeout S      end a run after S seconds (default: none)\n"
          "    --out DIR        write samples.csv, summary.json and plot.svg (default\n"
          "                     mimic-ab-DATE-TIME in the current directory)\n"
          "    --quiet          do not echo the workload's output\n"
          "  example: mimic bench ab --a mimic,label=pool --b mimic,env:MIMIC_THREADS=1,label=one \\\n"
          "             -- ./ppo_cuda --iterations 5\n");
  return out == stdout ? 0 : 2;
}

std::vector<std::string> split(const std::string& s, char separator) {
  std::vector<std::string> parts;
  size_t pos = 0;
  while (true) {
    size_t end = s.find(separator, pos);
    parts.push_back(s.substr(pos, end == std::string::npos ? std::string::npos : end - pos));
    if (end == std::string::npos) return parts;
    pos = end + 1;
  }
}

std::optional<unsigned> parse_count(const std::string& text) {
  char* end = nullptr;
  unsigned long v = strtoul(text.c_str(), &end, 10);
  if (text.empty() || *end || v > 100000) return std::nullopt;
  return unsigned(v);
}

// A configuration from its SPEC; nullopt (with a message) when SPEC is not understood.
std::optional<AbConfig> parse_spec(const std::string& spec, const std::vector<std::string>& program) {
  std::string mimic = self_path().string(), backend, label;
  bool native = false;
  AbConfig config;
  std::string derived;
  for (const std::string& item : split(spec, ',')) {
    if (item.empty()) continue;
    if (item == "mimic") {
      derived += "mimic";
    } else if (item.rfind("mimic=", 0) == 0) {
      mimic = item.substr(6);
      derived += "mimic@" + fs::path(mimic).parent_path().parent_path().filename().string();
    } else if (item == "native") {
      native = true;
      derived += "native";
    } else if (item.rfind("backend=", 0) == 0) {
      backend = item.substr(8);
      if (backend != "cpu" && backend != "amdgpu") {
        fprintf(stderr, "mimic bench ab: unknown backend '%s' in '%s' (cpu or amdgpu)\n", backend.c_str(),
                spec.c_str());
        return std::nullopt;
      }
      derived += "+" + backend;
    } else if (item.rfind("env:", 0) == 0 && item.find('=') != std::string::npos && item.find('=') > 4) {
      size_t eq = item.find('=');
      config.env.emplace_back(item.substr(4, eq - 4), item.substr(eq + 1));
      derived += "+" + item.substr(4);
    } else if (item.rfind("label=", 0) == 0 && item.size() > 6) {
      label = item.substr(6);
    } else {
      fprintf(stderr, "mimic bench ab: '%s' in '%s' is not a configuration item (see --help)\n", item.c_str(),
              spec.c_str());
      return std::nullopt;
    }
  }
  if (native && !backend.empty()) {
    fprintf(stderr, "mimic bench ab: '%s': backend= needs Mimic, not native\n", spec.c_str());
    return std::nullopt;
  }
  if (!native) {
    config.argv = {mimic, "run"};
    if (!backend.empty()) config.argv.insert(config.argv.end(), {"--backend", backend});
    config.argv.push_back("--");
  }
  config.argv.insert(config.argv.end(), program.begin(), program.end());
  config.label = !label.empty() ? label : derived.empty() ? "mimic" : derived;
  return config;
}

fs::path default_out_dir(const char* prefix) {
  char stamp[64];
  time_t now = time(nullptr);
  struct tm local;
  localtime_r(&now, &local);
  strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &local);
  return fs::current_path() / (std::string(prefix) + stamp);
}

// Options common to `ab` and `ppo`; returns how many arguments it took (0: not one of them,
// -1: a bad value, reported).
int take_common_option(const std::vector<std::string>& args, size_t i, AbOptions& options, const char* who) {
  const std::string& a = args[i];
  bool takes_value = a == "--trials" || a == "--drop" || a == "--metrics" || a == "--timeout" || a == "--out";
  if (!takes_value) {
    if (a == "--rounds") {
      options.rounds = true;
      return 1;
    }
    if (a == "--quiet") {
      options.echo = false;
      return 1;
    }
    return 0;
  }
  if (i + 1 >= args.size()) {
    fprintf(stderr, "mimic bench %s: %s needs a value\n", who, a.c_str());
    return -1;
  }
  const std::string& v = args[i + 1];
  if (a == "--metrics") {
    options.metrics = split(v, ',');
    return 2;
  }
  if (a == "--out") {
    options.out_dir = v;
    return 2;
  }
  auto n = parse_count(v);
  if (!n || (a == "--trials" && *n == 0)) {
    fprintf(stderr, "mimic bench %s: %s wants a count, not '%s'\n", who, a.c_str(), v.c_str());
    return -1;
  }
  if (a == "--trials") options.trials = *n;
  if (a == "--drop") options.drop = *n;
  if (a == "--timeout") options.timeout_seconds = *n;
  return 2;
}

int finish(const AbResult& result, AbOptions& options, const char* prefix) {
  if (result.metrics.empty()) {
    fprintf(stderr, "mimic bench: no metrics to compare: the runs printed no key=value lines%s\n",
            options.rounds || options.drop == 0 ? "" : " beyond the dropped cold ones (see --drop)");
    return 1;
  }
  print_ab_table(result);
  if (options.out_dir.empty()) options.out_dir = default_out_dir(prefix);
  if (write_ab_files(result, options, options.out_dir))
    printf("\nwrote %s/{samples.csv,summary.json,plot.svg}\n", options.out_dir.c_str());
  return result.failed_runs.empty() ? 0 : 1;
}

} // namespace

int bench_ab(const std::vector<std::string>& args) {
  AbOptions options;
  std::string spec_a, spec_b;
  std::vector<std::string> program;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      program.assign(args.begin() + long(i) + 1, args.end());
      break;
    }
    if (a == "--help" || a == "-h") return ab_usage(stdout);
    if ((a == "--a" || a == "--b") && i + 1 < args.size()) {
      (a == "--a" ? spec_a : spec_b) = args[++i];
      continue;
    }
    int taken = take_common_option(args, i, options, "ab");
    if (taken < 0) return 2;
    if (taken == 0) {
      fprintf(stderr, "mimic bench ab: unknown option '%s'\n", a.c_str());
      return ab_usage(stderr);
    }
    i += unsigned(taken) - 1;
  }
  if (program.empty()) {
    fprintf(stderr, "mimic bench ab: no program to run (put it after --)\n");
    return ab_usage(stderr);
  }
  if (spec_a.empty() && spec_b.empty()) {
    fprintf(stderr, "mimic bench ab: say what to compare with --a SPEC and --b SPEC\n");
    return ab_usage(stderr);
  }
  auto a = parse_spec(spec_a.empty() ? "mimic" : spec_a, program);
  auto b = parse_spec(spec_b.empty() ? "mimic" : spec_b, program);
  if (!a || !b) return 2;
  if (a->label == b->label) {
    a->label = "A:" + a->label;
    b->label = "B:" + b->label;
  }
  printf("A = %s\nB = %s\n", a->label.c_str(), b->label.c_str());
  AbResult result = run_ab({*a, *b}, options);
  return finish(result, options, "mimic-ab-");
}

namespace {

int ppo_usage(FILE* out) {
  fprintf(out,
          "usage: mimic bench ppo [options] [-- ARGS for both programs]\n"
          "  The PPO training of bench/ppo: the CUDA program on Mimic against the same PPO in\n"
          "  LibTorch on the CPU, in alternating trials. Ends with `ppo mimic/libtorch-cpu=X.XX`\n"
          "  (median overall steps per second, cold first iteration of each trial dropped).\n"
          "  options: --iterations N (per trial, default 3), --trials N (default 1), --seed S,\n"
          "           --quick (the programs' small size), --threads N (LibTorch's threads; default:\n"
          "           Mimic's, i.e. MIMIC_THREADS or every core), --out DIR, --timeout S, --quiet\n");
  return out == stdout ? 0 : 2;
}

} // namespace

int bench_ppo(const std::vector<std::string>& args) {
  AbOptions options;
  options.trials = 1;
  std::string iterations = "3", seed = "1", threads;
  bool quick = false;
  std::vector<std::string> extra;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      extra.assign(args.begin() + long(i) + 1, args.end());
      break;
    }
    if (a == "--help" || a == "-h") return ppo_usage(stdout);
    if (a == "--quick") {
      quick = true;
      continue;
    }
    if ((a == "--iterations" || a == "--seed" || a == "--threads") && i + 1 < args.size()) {
      if (!parse_count(args[i + 1])) {
        fprintf(stderr, "mimic bench ppo: %s wants a number, not '%s'\n", a.c_str(), args[i + 1].c_str());
        return 2;
      }
      (a == "--iterations" ? iterations : a == "--seed" ? seed : threads) = args[++i];
      continue;
    }
    int taken = take_common_option(args, i, options, "ppo");
    if (taken < 0) return 2;
    if (taken == 0) {
      fprintf(stderr, "mimic bench ppo: unknown option '%s'\n", a.c_str());
      return ppo_usage(stderr);
    }
    i += unsigned(taken) - 1;
  }
  fs::path bin = self_path().parent_path();
  fs::path cuda_program = bin / "ppo_cuda", torch_program = bin / "ppo_torch";
  if (access(cuda_program.c_str(), X_OK) != 0) {
    fprintf(stderr,
            "mimic bench ppo: %s is not built; it needs nvcc and Mimic's cuBLAS (build target "
            "ppo_cuda)\nppo mimic/libtorch-cpu=n/a\n",
            cuda_program.c_str());
    return 127;
  }
  std::vector<std::string> common = {"--iterations", iterations, "--seed", seed};
  if (quick) common.push_back("--quick");
  common.insert(common.end(), extra.begin(), extra.end());
  std::vector<AbConfig> configs;
  AbConfig mimic_config{"mimic", {self_path().string(), "run", "--", cuda_program.string()}, {}};
  mimic_config.argv.insert(mimic_config.argv.end(), common.begin(), common.end());
  configs.push_back(mimic_config);
  bool have_torch = access(torch_program.c_str(), X_OK) == 0;
  if (have_torch) {
    if (threads.empty())
      if (const char* t = getenv("MIMIC_THREADS"); t && *t) threads = t;
    if (threads.empty()) threads = std::to_string(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
    AbConfig torch_config{"libtorch-cpu", {torch_program.string(), "--device", "cpu", "--threads", threads}, {}};
    torch_config.argv.insert(torch_config.argv.end(), common.begin(), common.end());
    configs.push_back(torch_config);
  } else {
    fprintf(stderr,
            "mimic bench ppo: %s is not built (it needs LibTorch: apt-get install libtorch-dev, then\n"
            "reconfigure); running the CUDA PPO alone\n",
            torch_program.c_str());
  }
  AbResult result = run_ab(configs, options);
  int status = finish(result, options, "mimic-ppo-");
  AbStats m = result.stats(0, "sps");
  printf("\nppo mimic sps=%s", m.count ? format_value(m.median).c_str() : "n/a");
  if (have_torch) {
    AbStats t = result.stats(1, "sps");
    printf(" libtorch-cpu sps=%s\n", t.count ? format_value(t.median).c_str() : "n/a");
    if (m.count && t.count && t.median > 0) {
      printf("ppo mimic/libtorch-cpu=%.2f\n", m.median / t.median);
      return status;
    }
  } else {
    printf("\n");
  }
  printf("ppo mimic/libtorch-cpu=n/a\n");
  return status ? status : 1;
}

} // namespace mimic::cli
