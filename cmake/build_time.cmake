# Build time. CI (.ci/run) must build and test everything, then run its
# sanitizer tier, within 30 minutes on 2 cores; the build is most of that.
# Two measures, both measured on that machine with GCC 12:
#
# 1. Precompiled third-party headers (BRAID_PCH, on by default). At -O3,
#    <gtest/gtest.h> alone takes 3.7 s to compile, in each of 116 test
#    files; precompiled once per target it takes about 0.5 s to load
#    (fault_test.cc: 7.8 -> 5.2 s). Per target, not shared (REUSE_FROM): a
#    header precompiled with one target's flags and macros is only valid for
#    targets with the same ones, and clang (the sanitizer builds) refuses a
#    mismatch instead of ignoring it. Single-file targets gain nothing.
#
# 2. Cold files at -O1: command-line parsing with CLI11 and topology / trace
#    JSON with nlohmann/json run once per process, and their headers make
#    -O3 expensive (braid-perf's options.cc: 19.7 s at -O3, 10.9 s at -O1).
#    Nothing on a data path is built this way.
option(BRAID_PCH "Precompile the GoogleTest headers per test target" ON)

# braid_precompile(target header...): the target's C++ files start from the
# headers precompiled (each header as <name>).
function(braid_precompile target)
  if(NOT BRAID_PCH)
    return()
  endif()
  set(headers "")
  foreach(h ${ARGN})
    list(APPEND headers "$<$<COMPILE_LANGUAGE:CXX>:<${h}>>")
  endforeach()
  target_precompile_headers(${target} PRIVATE ${headers})
endfunction()

# braid_cold_sources(file...): files of the calling directory compiled at -O1
# in optimised builds (later -O flags win over CMAKE_CXX_FLAGS_<CONFIG>'s).
function(braid_cold_sources)
  set_property(SOURCE ${ARGN} APPEND PROPERTY COMPILE_OPTIONS "$<$<CONFIG:Release,RelWithDebInfo>:-O1>")
endfunction()
