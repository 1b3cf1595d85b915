# Driver for the package consumption tests; run with cmake -P.
#
#   cmake -DACTION=<action> [-D...] -P package_test.cmake
#
# ACTION
#   install          configure + build + install tapeflow (SOURCE_DIR) into
#                    PREFIX, without its tests, examples and benchmarks, and
#                    check that every header landed there
#   consumer         configure + build the project SOURCE_DIR and run its
#                    executable `app`; with PREFIX, tapeflow must be found there
#   reject_version   configure the project SOURCE_DIR asking for tapeflow
#                    REQUESTED_VERSION from PREFIX; passes only if configuring
#                    fails because the installed EXPECTED_VERSION is incompatible
#
# Common variables: BINARY_DIR (wiped first), GENERATOR, GENERATOR_PLATFORM,
# GENERATOR_TOOLSET, MAKE_PROGRAM, CXX_COMPILER, BUILD_TYPE, EXE_SUFFIX.
# Extra for `consumer`: TAPEFLOW_SOURCE_TREE (passed on to the project).
cmake_minimum_required(VERSION 3.16)

foreach(var IN ITEMS ACTION SOURCE_DIR BINARY_DIR GENERATOR)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "package_test.cmake: -D${var}=... is required")
  endif()
endforeach()

# Runs a command; stops with its output unless its exit status is 0.
function(run_step what)
  message(STATUS "${what}")
  execute_process(COMMAND ${ARGN}
                  RESULT_VARIABLE result
                  OUTPUT_VARIABLE output
                  ERROR_VARIABLE output)
  if(NOT result EQUAL 0)
    string(REPLACE ";" " " command "${ARGN}")
    message("Command: ${command}\n${output}")
    message(FATAL_ERROR "${what} failed (exit status: ${result}); its output is above.")
  endif()
  set(step_output "${output}" PARENT_SCOPE)
endfunction()

# Arguments that make a sub-build use the same toolchain as the parent build.
set(configure_args -G "${GENERATOR}")
if(GENERATOR_PLATFORM)
  list(APPEND configure_args -A "${GENERATOR_PLATFORM}")
endif()
if(GENERATOR_TOOLSET)
  list(APPEND configure_args -T "${GENERATOR_TOOLSET}")
endif()
if(MAKE_PROGRAM)
  list(APPEND configure_args "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()
if(CXX_COMPILER)
  list(APPEND configure_args "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")
endif()
set(config_args)
if(BUILD_TYPE)
  list(APPEND configure_args "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}")
  set(config_args --config "${BUILD_TYPE}")
endif()

file(REMOVE_RECURSE "${BINARY_DIR}")

if(ACTION STREQUAL "install")
  if(NOT PREFIX)
    message(FATAL_ERROR "install: -DPREFIX=... is required")
  endif()
  file(REMOVE_RECURSE "${PREFIX}")
  run_step("Configuring tapeflow (${SOURCE_DIR})"
    "${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${BINARY_DIR}" ${configure_args}
    -DTAPEFLOW_BUILD_TESTS=OFF -DTAPEFLOW_BUILD_EXAMPLES=OFF -DTAPEFLOW_BUILD_BENCHMARKS=OFF)
  run_step("Building tapeflow" "${CMAKE_COMMAND}" --build "${BINARY_DIR}" ${config_args})
  run_step("Installing tapeflow into ${PREFIX}"
    "${CMAKE_COMMAND}" --install "${BINARY_DIR}" --prefix "${PREFIX}" ${config_args})

  # The package files, wherever GNUInstallDirs put the library directory.
  file(GLOB_RECURSE installed LIST_DIRECTORIES false "${PREFIX}/*")
  foreach(name IN ITEMS tapeflowConfig.cmake tapeflowConfigVersion.cmake tapeflowTargets.cmake)
    set(found ${installed})
    list(FILTER found INCLUDE REGEX "/cmake/tapeflow/${name}$")
    if(NOT found)
      message(FATAL_ERROR "install: ${name} is not installed under ${PREFIX}")
    endif()
  endforeach()
  # Every header of the source tree, and nothing else, under include/.
  file(GLOB_RECURSE source_headers LIST_DIRECTORIES false RELATIVE "${SOURCE_DIR}/include"
       "${SOURCE_DIR}/include/*")
  file(GLOB_RECURSE installed_headers LIST_DIRECTORIES false RELATIVE "${PREFIX}/include"
       "${PREFIX}/include/*")
  list(SORT source_headers)
  list(SORT installed_headers)
  set(missing ${source_headers})
  set(extra ${installed_headers})
  if(installed_headers)
    list(REMOVE_ITEM missing ${installed_headers})
  endif()
  if(source_headers)
    list(REMOVE_ITEM extra ${source_headers})
  endif()
  if(missing OR extra OR NOT installed_headers)
    message(FATAL_ERROR "install: the installed headers differ from the source tree's include/.\n"
                        "Not installed: ${missing}\nInstalled but not in the source tree: ${extra}")
  endif()
  list(LENGTH installed_headers count)
  message(STATUS "Installed ${count} headers and the CMake package files")

elseif(ACTION STREQUAL "consumer")
  set(project_args)
  if(PREFIX)
    list(APPEND project_args "-DCMAKE_PREFIX_PATH=${PREFIX}")
  endif()
  if(TAPEFLOW_SOURCE_TREE)
    list(APPEND project_args "-DTAPEFLOW_SOURCE_TREE=${TAPEFLOW_SOURCE_TREE}")
  endif()
  run_step("Configuring ${SOURCE_DIR}"
    "${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${BINARY_DIR}" ${configure_args} ${project_args})
  if(PREFIX)
    # find_package must have used the test prefix, not some other installation.
    file(STRINGS "${BINARY_DIR}/CMakeCache.txt" dir_line REGEX "^tapeflow_DIR:")
    string(REGEX REPLACE "^tapeflow_DIR:[A-Z]+=" "" tapeflow_dir "${dir_line}")
    get_filename_component(real_prefix "${PREFIX}" REALPATH)
    get_filename_component(real_dir "${tapeflow_dir}" REALPATH)
    string(FIND "${real_dir}/" "${real_prefix}/" at)
    if(NOT at EQUAL 0)
      message(FATAL_ERROR "find_package(tapeflow) used ${tapeflow_dir}, not the package in ${PREFIX}")
    endif()
    message(STATUS "Found tapeflow in ${tapeflow_dir}")
  endif()
  run_step("Building ${SOURCE_DIR}" "${CMAKE_COMMAND}" --build "${BINARY_DIR}" ${config_args})

  set(app)
  foreach(candidate IN ITEMS "${BINARY_DIR}/app${EXE_SUFFIX}" "${BINARY_DIR}/${BUILD_TYPE}/app${EXE_SUFFIX}")
    if(NOT app AND EXISTS "${candidate}" AND NOT IS_DIRECTORY "${candidate}")
      set(app "${candidate}")
    endif()
  endforeach()
  if(NOT app)
    message(FATAL_ERROR "consumer: the executable app was not found in ${BINARY_DIR}")
  endif()
  run_step("Running ${app}" "${app}")
  message("${step_output}")

elseif(ACTION STREQUAL "reject_version")
  foreach(var IN ITEMS PREFIX REQUESTED_VERSION EXPECTED_VERSION)
    if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
      message(FATAL_ERROR "reject_version: -D${var}=... is required")
    endif()
  endforeach()
  message(STATUS "Configuring ${SOURCE_DIR} with find_package(tapeflow ${REQUESTED_VERSION}): must fail")
  execute_process(
    COMMAND "${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${BINARY_DIR}" ${configure_args}
            "-DCMAKE_PREFIX_PATH=${PREFIX}" "-DTAPEFLOW_REQUESTED_VERSION=${REQUESTED_VERSION}"
    RESULT_VARIABLE result
    OUTPUT_VARIABLE output
    ERROR_VARIABLE output)
  if(result EQUAL 0)
    message("${output}")
    message(FATAL_ERROR "find_package(tapeflow ${REQUESTED_VERSION}) accepted tapeflow "
                        "${EXPECTED_VERSION}; the version file should reject it.")
  endif()
  # The package must have been found and turned down for its version, not
  # missed altogether. CMake wraps long lines, so normalise white space.
  string(REGEX REPLACE "[ \t\r\n]+" " " flat "${output}")
  string(REPLACE "." "\\." requested_re "${REQUESTED_VERSION}")
  string(REPLACE "." "\\." expected_re "${EXPECTED_VERSION}")
  if(NOT flat MATCHES "compatible with requested version \"${requested_re}\""
     OR NOT flat MATCHES "tapeflowConfig\\.cmake, version: ${expected_re}")
    message("${output}")
    message(FATAL_ERROR "Configuring failed (output above), but not because tapeflow "
                        "${EXPECTED_VERSION} was found and rejected as incompatible.")
  endif()
  message(STATUS "Rejected as expected: tapeflow ${EXPECTED_VERSION} does not satisfy ${REQUESTED_VERSION}")

else()
  message(FATAL_ERROR "package_test.cmake: unknown ACTION '${ACTION}'")
endif()
