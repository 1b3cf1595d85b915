# Configures SOURCE_DIR with -fsanitize=thread and only the threaded tests
# (TAPEFLOW_THREADED_TESTS_ONLY), builds them and runs them; any report
# fails the run (halt_on_error).
execute_process(
  COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${BINARY_DIR} -G ${GENERATOR}
          -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_BUILD_TYPE=RelWithDebInfo
          "-DCMAKE_CXX_FLAGS=-fsanitize=thread -O1 -g"
          -DTAPEFLOW_THREADED_TESTS_ONLY=ON -DTAPEFLOW_BUILD_EXAMPLES=OFF
          -DTAPEFLOW_BUILD_BENCHMARKS=OFF -DTAPEFLOW_SANITIZER_TESTS=OFF
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring the ThreadSanitizer build failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BINARY_DIR} -j2 RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building the ThreadSanitizer tests failed")
endif()
set(ENV{TSAN_OPTIONS} "halt_on_error=1 second_deadlock_stack=1")
execute_process(COMMAND ${CMAKE_CTEST_COMMAND} --test-dir ${BINARY_DIR} --output-on-failure
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "threaded tests failed under ThreadSanitizer")
endif()
