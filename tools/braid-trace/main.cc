// braid-trace: reads the flight-recorder dumps of all ranks of a communicator
// and says in one paragraph what happened. Exit status 0 when every dump could
// be read, 1 when one could not (the message names it), CLI11's on usage errors.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "analyze.h"
#include "load.h"
#include "render_json.h"
#include "render_text.h"

int main(int argc, char** argv) {
  CLI::App app{
      "braid-trace: reads the flight-recorder dumps of every rank (BRAID_TRACE_DIR, SIGUSR1, "
      "braidCommDumpTrace) and says which op each rank is in, which ranks never reached the op others "
      "are in, what failed and which rank is slowest",
      "braid-trace"};
  bool json = false;
  std::vector<std::string> paths;
  app.add_flag("--json", json, "print the findings as one JSON object");
  app.add_option("paths", paths, "dump files, or directories whose *.json files are dumps")->required();
  CLI11_PARSE(app, argc, argv);

  braid::trace::Loaded loaded = braid::trace::loadDumps(paths);
  if (!loaded.error.empty()) {
    std::fprintf(stderr, "braid-trace: %s\n", loaded.error.c_str());
    return 1;
  }
  const braid::trace::Report report = braid::trace::analyze(loaded.dumps);
  const std::string out =
      json ? braid::trace::toJson(report).dump(2) + "\n" : braid::trace::renderText(report);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}
