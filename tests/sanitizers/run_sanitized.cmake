# Configures SOURCE_DIR in BINARY_DIR with one sanitizer, builds and runs the
# tests there; any report fails the run (the sanitizers halt on the first).
#   -DSANITIZER=thread    the tests that start threads (TAPEFLOW_THREADED_TESTS_ONLY,
#                         less those of tape/ and stream/ that start none)
#   -DSANITIZER=address   the suite with ASan + UBSan (+ LeakSanitizer), built
#                         by PREFERRED_COMPILER (clang++) where it can, without
#                         the package, compile-failure, clang_syntax and
#                         strict_warnings tests
#                         and the tests that compute on the stack only (the
#                         list below)
# The address build is -O0: with -fsanitize=address,undefined, g++ 12 takes
# 255 s to compile tests/eigen/linear_algebra_test.cpp at -O1 against 145 s at
# -O0 (94 s at -O1 without sanitizers), and compiling is most of this test's
# time; the tests run slower at -O0 but remain small. -g1: line numbers in
# reports at little compile cost. -fno-sanitize=vptr: UBSan's dynamic-type
# check instruments every polymorphic access and costs 12% of that compile
# (145 s -> 127 s) for the few virtual classes the library has (spill_io,
# tile_codec, external entries, tape_observer), which ASan covers for
# lifetime errors anyway. -fno-sanitize=null,alignment: those two checks
# guard every reference binding and member access of the template code and
# were a third of this build's compile time (checkpointed_loop_test 29.6 s ->
# 20.9 s of CPU, second_order_program_test about 3x; 2026-11-27), for little
# here: the tape reads and writes its packed records with memcpy
# (tape/record.hpp), never through a misaligned typed pointer, and a null
# dereference is a SEGV that AddressSanitizer reports with its stack.
# (Measured with g++ 12; clang 14, which builds the address set where it is
# installed, gives the same picture: null,alignment take hessian_drivers_test
# from 37.5 to 60.4 s of CPU, 2026-11-29.) The thread build stays with the
# project's compiler: clang 14 compiles its tests about as fast (tape_test
# 29.6 against 31.5 s), and g++ reuses the precompiled headers there.
if(SANITIZER STREQUAL "thread")
  set(flags "-fsanitize=thread")
  # -O1 -g1: RelWithDebInfo's own -O2 -g cost more to compile, and line
  # numbers are all a report needs.
  set(options -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
              -DTAPEFLOW_THREADED_TESTS_ONLY=ON -DTAPEFLOW_BUILD_EXAMPLES=OFF)
  # Of those, the ones that start no thread (no prefetcher, scratchpad or
  # budget, no std::thread) have nothing for ThreadSanitizer to see.
  set(skipped crc32c_test spill_file_test allocation_test buffer_pool_test identifier_pool_test
              record_mask_test record_avx2_test
              record_test region_test tile_test recorder_test sweeper_test position_test
              adjoint_store_test)
  set(ctest_options --timeout 300 --test-output-size-failed 200000)
  set(ENV{TSAN_OPTIONS} "halt_on_error=1 second_deadlock_stack=1")
elseif(SANITIZER STREQUAL "address")
  set(flags "-fsanitize=address,undefined -fno-sanitize=vptr,null,alignment -fno-sanitize-recover=all -fno-omit-frame-pointer -O0 -g1")
  # "None": no build-type flags (NDEBUG stays undefined: the library's debug
  # checks run too).
  # The random programs run without their Eigen statements here (about 340 s
  # of CPU to compile at -O0 with the sanitizers); tests/eigen covers the
  # library's Eigen code under them, and the Release build runs the Eigen
  # statements.
  # Without the examples: each repeats library paths that a unit test here
  # runs (they still run in the Release suite).
  # Without the MPI tests: LeakSanitizer reports Open MPI's own allocations.
  set(options -DCMAKE_BUILD_TYPE=None -DTAPEFLOW_BUILD_EXAMPLES=OFF -DTAPEFLOW_RANDOM_WITH_EIGEN=OFF
              -DTAPEFLOW_MPI_TESTS=OFF)
  # Left out (tests/CMakeLists.txt, TAPEFLOW_SANITIZER_SKIPPED_TESTS says why):
  # values and derivatives computed on the stack, no tape memory, no threads;
  # of the Eigen tests only the drivers stay. eigen_linear_algebra_test goes
  # too, for time (about 270 s of CPU to compile at -O0, the most of any
  # test): its tape entries are custom adjoints, whose machinery
  # custom_adjoint_test runs here, around Eigen's own code on doubles.
  # complex_test computes on the stack (its spilling case repeats what the
  # streaming tests run here), second_order_program_test's tapes of Duals
  # (89 s of CPU to compile here) are recorded and swept by
  # hessian_drivers_test too (51 s; here, with its drivers and refusals),
  # eigen_second_order_test runs Eigen's algorithms on Duals under the
  # Hessian drivers, whose tapes hessian_drivers_test sweeps here;
  # parallel_openmp_test is parallel_gradients_test (here) with libgomp:
  # each cost 30-100 s of CPU to compile, and CI must stay well under 30
  # minutes. docs_test reads the docs and the sources, no library code, and
  # include_layers_test the headers' #include lines.
  set(skipped eigen_num_traits_test eigen_variables_test eigen_assignment_test eigen_products_test
              eigen_linear_algebra_test
              eigen_entry_point_eigen_test eigen_entry_point_num_traits_test
              eigen_entry_point_assignment_test eigen_entry_point_products_test
              eigen_entry_point_linear_algebra_test eigen_entry_point_variables_test
              binary_operators_test binary_functions_test unary_functions_test comparisons_test
              special_functions_test std_test dual_test forward_program_test
              complex_test second_order_program_test eigen_second_order_test parallel_openmp_test docs_test
              include_layers_test)
  # --timeout: no test here takes more than about 35 s even under load, so
  # a hang fails in minutes, not at the outer 1500 s limit; the output cap
  # keeps a runaway printer from filling ctest's memory. Not run: the package
  # and compile-failure tests, and clang's -fsyntax-only reading of the
  # examples (clang_syntax, where clang++ is installed: 61 s of CPU here on
  # 2026-11-28) and GCC's of the headers with strict warnings
  # (strict_warnings), whose outcome the sanitizer flags do not change.
  set(ctest_options -LE "package|compile_failure|clang_syntax|strict_warnings" -j2 --timeout 300 --test-output-size-failed 200000)
  set(ENV{ASAN_OPTIONS} "detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1")
  set(ENV{UBSAN_OPTIONS} "print_stacktrace=1:halt_on_error=1")
else()
  message(FATAL_ERROR "run_sanitized.cmake: SANITIZER must be thread or address, not '${SANITIZER}'")
endif()
string(REPLACE ";" "," skipped "${skipped}")  # one command-line argument
list(APPEND options "-DTAPEFLOW_SANITIZER_SKIPPED_TESTS=${skipped}")

# The configure and build logs go to files and are printed only when that step
# fails; the test output is captured and, on failure, printed after a summary
# of the failed tests: CI shows the head of a failing test's output, which
# must say what failed rather than hold thousands of build lines.
#
include(${CMAKE_CURRENT_LIST_DIR}/sanitizer_compiler.cmake)  # keep_tail, sanitizer_compiler

# The compiler: PREFERRED_COMPILER (clang++ for the address build, where
# installed: tests/sanitizers/CMakeLists.txt says why) when it builds and
# runs a small program with these flags, else the project's (see
# sanitizer_compiler.cmake). The build directory is started afresh only
# when the chosen compiler changes.
sanitizer_compiler(compiler "${PREFERRED_COMPILER}" "${CXX_COMPILER}" "${flags}" ${BINARY_DIR}-compiler-probe)
# a build directory left by another compiler is started afresh
if(EXISTS ${BINARY_DIR}/CMakeCache.txt)
  file(STRINGS ${BINARY_DIR}/CMakeCache.txt cached REGEX "^CMAKE_CXX_COMPILER:")
  if(NOT cached STREQUAL "CMAKE_CXX_COMPILER:FILEPATH=${compiler}"
     AND NOT cached STREQUAL "CMAKE_CXX_COMPILER:STRING=${compiler}")
    file(REMOVE_RECURSE ${BINARY_DIR})
  endif()
endif()
execute_process(
  COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${BINARY_DIR} -G ${GENERATOR}
          -DCMAKE_CXX_COMPILER=${compiler} "-DCMAKE_CXX_FLAGS=${flags}" ${options}
          -DTAPEFLOW_BUILD_BENCHMARKS=OFF -DTAPEFLOW_SANITIZER_TESTS=OFF
  OUTPUT_VARIABLE log ERROR_VARIABLE log RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring the ${SANITIZER} sanitizer build with ${compiler} failed:\n${log}")
endif()
message(STATUS "${SANITIZER} sanitizer: building the tests with ${compiler}")
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BINARY_DIR} -j2
                OUTPUT_FILE ${BINARY_DIR}/build.log ERROR_FILE ${BINARY_DIR}/build.log RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  file(READ ${BINARY_DIR}/build.log log)
  keep_tail(log 20000)
  message(FATAL_ERROR "building the tests with the ${SANITIZER} sanitizer failed; the end of "
                      "${BINARY_DIR}/build.log:\n${log}")
endif()
execute_process(COMMAND ${CMAKE_CTEST_COMMAND} --test-dir ${BINARY_DIR} --output-on-failure ${ctest_options}
                OUTPUT_VARIABLE log ERROR_VARIABLE log RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  string(FIND "${log}" "The following tests FAILED:" at)
  set(summary "(ctest printed no list of failed tests)")
  if(at GREATER -1)
    string(SUBSTRING "${log}" ${at} -1 summary)
  endif()
  # Once more, the failed tests alone, to print their output compactly and to
  # tell a flaky failure from a steady one (the run fails either way).
  execute_process(COMMAND ${CMAKE_CTEST_COMMAND} --test-dir ${BINARY_DIR} --output-on-failure --rerun-failed
                  OUTPUT_VARIABLE rerun ERROR_VARIABLE rerun RESULT_VARIABLE rerun_rc)
  if(rerun_rc EQUAL 0)
    set(verdict "they PASSED when run again alone: a flaky failure")
  else()
    set(verdict "they failed again when run alone")
  endif()
  message(FATAL_ERROR "tests failed under the ${SANITIZER} sanitizer; ${verdict}.\n${summary}\n"
                      "---- the failed tests run again ----\n${rerun}\n"
                      "---- the whole ctest output ----\n${log}")
endif()
string(REGEX MATCH "[0-9]+% tests passed[^\n]*" passed "${log}")
message(STATUS "${SANITIZER} sanitizer (${compiler}): ${passed}")
