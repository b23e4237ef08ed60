// braid-info: prints what this braid is and sees. Exit status 0 unless the
// command line is wrong; a part that cannot be found is reported in place.
#include <CLI/CLI.hpp>

#include <cstdio>

#include "collect.h"
#include "render_text.h"
#include "tuner_report.h"

int main(int argc, char** argv) {
  CLI::App app{"braid-info: version, build options, topology, transports, algorithms and BRAID_* variables"};
  bool json = false, env = false;
  app.add_flag("--json", json, "print the report as one JSON object");
  app.add_flag("--env", env, "print only the BRAID_* variables: value, default and meaning");
  bool tuner = false;
  braid::info::TunerReportRequest request;
  app.add_flag("--tuner", tuner,
               "print the cost model's predicted time (us) of every algorithm and the tuner's pick, for the "
               "BRAID_LINK_* parameters in force");
  app.add_option("--collective", request.collective, "--tuner: the collective")->capture_default_str();
  app.add_option("--ranks", request.ranks, "--tuner: rank counts, comma-separated")->capture_default_str();
  app.add_option("--sizes", request.sizes, "--tuner: sizes in bytes (k/m/g suffixes), comma-separated")
      ->capture_default_str();
  app.add_option("--ranks-per-host", request.ranksPerHost, "--tuner: ranks per host")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  std::string out;
  if (tuner) {
    std::string error;
    if (!braid::info::tunerReport(request, &out, &error)) {
      std::fprintf(stderr, "braid-info: %s\n", error.c_str());
      return 2;
    }
  } else if (env) {
    braid::info::Json table = braid::info::envTable();
    out = json ? table.dump(2) + "\n" : braid::info::renderEnv(table);
  } else {
    braid::info::Collected c = braid::info::collect();
    out = json ? c.doc.dump(2) + "\n" : braid::info::renderText(c);
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}
