# tapeflow_random_library(<name> [NO_EIGEN] [<compile options>...]) - an INTERFACE target
# <name> that gives a program including tests/random/check.hpp what it needs:
# the include path, no contraction of multiply-adds (the double, dual and
# reverse runs must compute bit-identical values), and the optional parts,
# each when found:
#   Eigen 3.4  the eigen statements: interpreter_eigen.cpp, compiled once per
#              number type (TAPEFLOW_RANDOM_EIGEN_TYPE 0-3, so the four can
#              build in parallel) into the static library <name>_eigen, with
#              EIGEN_DONT_VECTORIZE (see the top of interpreter_eigen.cpp);
#   libzstd    the compressed spilling configurations, TAPEFLOW_RANDOM_ZSTD.
# The compile options go to the Eigen part (the fuzzer instruments it too).
# NO_EIGEN: without the Eigen part (and so without use for compile
# options), for a test that generates no Eigen statement: its compile then
# does not wait for the four Eigen objects (a target of the Makefile
# generator compiles after its dependencies are built).
# Used by tests/random and, when the tests are off, by tests/fuzz.
set(TAPEFLOW_RANDOM_DIR ${CMAKE_CURRENT_LIST_DIR})
# OFF in the AddressSanitizer sub-build (tests/sanitizers), where the four
# Eigen objects cost about 340 s of CPU at -O0 while tests/eigen runs the same
# library code under the sanitizers.
option(TAPEFLOW_RANDOM_WITH_EIGEN "Random programs with Eigen statements (when Eigen 3.4 is found)" ON)
mark_as_advanced(TAPEFLOW_RANDOM_WITH_EIGEN)

function(tapeflow_random_library name)
  cmake_parse_arguments(ARG "NO_EIGEN" "" "" ${ARGN})
  if(ARG_NO_EIGEN AND ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "tapeflow_random_library(${name} NO_EIGEN ...): the compile options "
                        "(${ARG_UNPARSED_ARGUMENTS}) go to the Eigen part, which NO_EIGEN leaves out")
  endif()
  set(fp_options $<$<CXX_COMPILER_ID:GNU,Clang,AppleClang>:-ffp-contract=off>)
  add_library(${name} INTERFACE)
  target_link_libraries(${name} INTERFACE tapeflow::tapeflow)
  target_include_directories(${name} INTERFACE ${TAPEFLOW_RANDOM_DIR}/..)
  target_compile_options(${name} INTERFACE ${fp_options})

  set(with_eigen ${TAPEFLOW_RANDOM_WITH_EIGEN})
  if(ARG_NO_EIGEN)
    set(with_eigen OFF)
  endif()
  if(with_eigen)
    find_package(Eigen3 3.4 QUIET NO_MODULE)
  endif()
  if(with_eigen AND TARGET Eigen3::Eigen)
    set(objects)
    foreach(type 0 1 2 3)  # double, dual, dual_magnitude, tapeflow::Real
      set(part ${name}_eigen_${type})
      add_library(${part} OBJECT ${TAPEFLOW_RANDOM_DIR}/interpreter_eigen.cpp)
      target_link_libraries(${part} PRIVATE tapeflow::tapeflow Eigen3::Eigen)
      target_include_directories(${part} PRIVATE ${TAPEFLOW_RANDOM_DIR}/..)
      target_compile_definitions(${part} PRIVATE
        TAPEFLOW_RANDOM_EIGEN EIGEN_DONT_VECTORIZE TAPEFLOW_RANDOM_EIGEN_TYPE=${type})
      target_compile_options(${part} PRIVATE -Wall -Wextra -Wpedantic ${fp_options} ${ARG_UNPARSED_ARGUMENTS})
      list(APPEND objects $<TARGET_OBJECTS:${part}>)
    endforeach()
    add_library(${name}_eigen STATIC ${objects})
    target_link_libraries(${name}_eigen PUBLIC tapeflow::tapeflow)
    target_compile_definitions(${name}_eigen PUBLIC TAPEFLOW_RANDOM_EIGEN)
    target_link_libraries(${name} INTERFACE ${name}_eigen)
  elseif(NOT ARG_NO_EIGEN)
    message(STATUS "tapeflow: Eigen 3.4 not found or TAPEFLOW_RANDOM_WITH_EIGEN off: "
                   "the random programs have no Eigen statements")
  endif()

  find_path(TAPEFLOW_ZSTD_INCLUDE zstd.h)
  find_library(TAPEFLOW_ZSTD_LIBRARY zstd)
  if(TAPEFLOW_ZSTD_INCLUDE AND TAPEFLOW_ZSTD_LIBRARY)
    target_compile_definitions(${name} INTERFACE TAPEFLOW_RANDOM_ZSTD)
    target_include_directories(${name} INTERFACE ${TAPEFLOW_ZSTD_INCLUDE})
    target_link_libraries(${name} INTERFACE ${TAPEFLOW_ZSTD_LIBRARY})
  else()
    get_property(told GLOBAL PROPERTY TAPEFLOW_RANDOM_ZSTD_TOLD)
    if(NOT told)  # once, not per library
      message(STATUS "tapeflow: libzstd not found: the random programs run no compressed configuration")
      set_property(GLOBAL PROPERTY TAPEFLOW_RANDOM_ZSTD_TOLD ON)
    endif()
  endif()
endfunction()
