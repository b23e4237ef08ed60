#include "exec.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace braid::fabric {

ToolResult runTool(const std::vector<std::string>& argv) {
  ToolResult result;
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) {
    result.output = std::string("pipe: ") + std::strerror(errno);
    return result;
  }
  std::vector<char*> cArgv;
  for (const std::string& a : argv) cArgv.push_back(const_cast<char*>(a.c_str()));
  cArgv.push_back(nullptr);

  const pid_t pid = fork();
  if (pid == 0) {
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, STDIN_FILENO);
    dup2(out[1], STDOUT_FILENO);
    dup2(out[1], STDERR_FILENO);
    execvp(cArgv[0], cArgv.data());
    const char* why = std::strerror(errno);
    (void)!write(STDERR_FILENO, "cannot run: ", 12);
    (void)!write(STDERR_FILENO, why, std::strlen(why));
    _exit(127);
  }
  close(out[1]);
  if (pid < 0) {
    result.output = std::string("fork: ") + std::strerror(errno);
    close(out[0]);
    return result;
  }
  char buf[4096];
  for (;;) {
    ssize_t n = read(out[0], buf, sizeof(buf));
    if (n > 0) {
      result.output.append(buf, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  close(out[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  while (!result.output.empty() && (result.output.back() == '\n' || result.output.back() == ' '))
    result.output.pop_back();
  return result;
}

std::string joinArgv(const std::vector<std::string>& argv) {
  std::string s;
  for (const std::string& a : argv) s += (s.empty() ? "" : " ") + a;
  return s;
}

}  // namespace braid::fabric
