# tests/sanitizers/sanitizer_compiler_test.cmake - sanitizer_compiler() picks
# the preferred compiler only when it builds and runs a program with the
# flags, the fallback otherwise.
#   cmake -DCXX_COMPILER=<a working C++ compiler> -DWORK_DIR=<dir> -P sanitizer_compiler_test.cmake
include(${CMAKE_CURRENT_LIST_DIR}/sanitizer_compiler.cmake)

function(expect preferred flags want)
  sanitizer_compiler(got "${preferred}" fallback-compiler "${flags}" ${WORK_DIR}/probe)
  if(NOT got STREQUAL want)
    message(FATAL_ERROR "sanitizer_compiler(${preferred}, flags '${flags}') chose '${got}', not '${want}'")
  endif()
endfunction()

expect("" "-O0" fallback-compiler)                                   # none preferred
expect(${WORK_DIR}/no-such-compiler "-O0" fallback-compiler)        # not installed
expect(${CXX_COMPILER} "-fno-such-option-for-tapeflow" fallback-compiler)  # refuses the flags
expect(${CXX_COMPILER} "-O0 -DPROBE_FLAG=1" ${CXX_COMPILER})         # works
set(long "")
foreach(i RANGE 300)
  string(APPEND long "0123456789")
endforeach()
keep_tail(long 25)
if(NOT long STREQUAL "5678901234567890123456789")
  message(FATAL_ERROR "keep_tail kept '${long}'")
endif()
message(STATUS "sanitizer_compiler: preferred only when it works")
