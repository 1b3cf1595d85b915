# tests/sanitizers/sanitizer_compiler.cmake - helpers of run_sanitized.cmake
# (tested by sanitizer_compiler_test.cmake, ctest sanitizer_compiler_choice).

# keep_tail(<variable> <n>): the last n characters of the variable's text.
function(keep_tail variable n)
  string(LENGTH "${${variable}}" length)
  if(length GREATER n)
    math(EXPR from "${length} - ${n}")
    string(SUBSTRING "${${variable}}" ${from} -1 tail)
    set(${variable} "${tail}" PARENT_SCOPE)
  endif()
endfunction()

# sanitizer_compiler(<out> <preferred> <fallback> <flags> <probe_dir>):
# <preferred> when it compiles, links and runs a small program with <flags>
# (clang's sanitizer runtimes are a package of their own: Debian's
# libclang-rt-14-dev), checked on every run, since a configured build
# directory no longer tests its compiler; <fallback> otherwise, or when
# <preferred> is empty, with a message that says what the preferred compiler
# printed.
function(sanitizer_compiler out preferred fallback flags probe_dir)
  set(${out} ${fallback} PARENT_SCOPE)
  if(NOT preferred)
    return()
  endif()
  file(MAKE_DIRECTORY ${probe_dir})
  file(WRITE ${probe_dir}/probe.cpp "#include <vector>\nint main() { std::vector<int> v(3, 1); return v[2] - 1; }\n")
  separate_arguments(flag_list UNIX_COMMAND "${flags}")
  execute_process(COMMAND ${preferred} ${flag_list} ${probe_dir}/probe.cpp -o ${probe_dir}/probe
                  OUTPUT_VARIABLE probe_log ERROR_VARIABLE probe_log RESULT_VARIABLE rc)
  if(rc EQUAL 0)
    execute_process(COMMAND ${probe_dir}/probe OUTPUT_VARIABLE run_log ERROR_VARIABLE run_log RESULT_VARIABLE rc)
    string(APPEND probe_log "${run_log}")
  endif()
  if(rc EQUAL 0)
    set(${out} ${preferred} PARENT_SCOPE)
    return()
  endif()
  keep_tail(probe_log 2000)
  message(STATUS "${preferred} cannot build and run a program with ${flags} (are its sanitizer runtimes "
                 "installed? Debian: libclang-rt-14-dev); building with ${fallback}. What it said:\n${probe_log}")
endfunction()
