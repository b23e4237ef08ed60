// braid-info: prints what this braid is and sees. Exit status 0 unless the
// command line is wrong; a part that cannot be found is reported in place.
#include <CLI/CLI.hpp>

#include <cstdio>

#include "collect.h"
#include "render_text.h"

int main(int argc, char** argv) {
  CLI::App app{"braid-info: version, build options, topology, transports, algorithms and BRAID_* variables"};
  bool json = false, env = false;
  app.add_flag("--json", json, "print the report as one JSON object");
  app.add_flag("--env", env, "print only the BRAID_* variables: value, default and meaning");
  CLI11_PARSE(app, argc, argv);

  std::string out;
  if (env) {
    braid::info::Json table = braid::info::envTable();
    out = json ? table.dump(2) + "\n" : braid::info::renderEnv(table);
  } else {
    braid::info::Collected c = braid::info::collect();
    out = json ? c.doc.dump(2) + "\n" : braid::info::renderText(c);
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}
