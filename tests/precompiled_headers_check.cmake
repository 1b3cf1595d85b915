# tests/precompiled_headers_check.cmake - the tests' precompiled header
# (tests/CMakeLists.txt) must not be a system header: GCC would then keep
# quiet about warnings in tapeflow's own headers in every test that uses it.
#   cmake -DHEADER=<build>/tests/CMakeFiles/tapeflow_test_pch.dir/cmake_pch.hxx -P precompiled_headers_check.cmake
if(NOT EXISTS "${HEADER}")
  message(FATAL_ERROR "${HEADER} does not exist: was the tests' precompiled header renamed? Update this test's path in tests/CMakeLists.txt")
endif()
file(READ "${HEADER}" text)
if(text MATCHES "system_header")
  message(FATAL_ERROR "${HEADER} declares itself a system header, so GCC hides the warnings of tapeflow's "
                      "headers in the tests that use it: CMake no longer takes CMAKE_PCH_PROLOGUE from "
                      "tests/CMakeLists.txt; find how this CMake version sets the prologue")
endif()
if(NOT text MATCHES "tapeflow/tapeflow.hpp")
  message(FATAL_ERROR "${HEADER} does not include tapeflow/tapeflow.hpp: not the header this test expects")
endif()
message(STATUS "${HEADER}: not a system header")
