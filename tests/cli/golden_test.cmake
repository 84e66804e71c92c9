# SPDX-License-Identifier: MIT
# Runs one golden scenario: `layoutlab <args from cmd.txt>` in the datasets directory, writes the output to
# ACTUAL, and compares it with expected.txt (diff -u on mismatch). LAYOUTLAB_UPDATE_GOLDEN=1 rewrites
# the expected file instead; review the diff before committing it.
file(READ "${SCENARIO_DIR}/cmd.txt" cmd)
string(STRIP "${cmd}" cmd)
separate_arguments(args UNIX_COMMAND "${cmd}")
set(expected_rc 0)
if(EXISTS "${SCENARIO_DIR}/exit-code.txt")
  file(READ "${SCENARIO_DIR}/exit-code.txt" expected_rc)
  string(STRIP "${expected_rc}" expected_rc)
endif()
# Runs are stored in a database next to the .actual file, never in the source tree (the directory must
# exist first: on a fresh build nothing has created it yet).
get_filename_component(actual_dir "${ACTUAL}" DIRECTORY)
file(MAKE_DIRECTORY "${actual_dir}")
set(ENV{LAYOUTLAB_DB} "${ACTUAL}.db")
file(REMOVE "${ACTUAL}.db" "${ACTUAL}.db-wal" "${ACTUAL}.db-shm")
execute_process(COMMAND "${LAYOUTLAB}" ${args}
                WORKING_DIRECTORY "${DATASETS}"
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc STREQUAL expected_rc)
  message(FATAL_ERROR "layoutlab ${cmd}\nexited ${rc}, expected ${expected_rc}\nstderr:\n${err}")
endif()
if(NOT expected_rc STREQUAL "0")
  set(out "${err}")  # error scenarios compare the message
endif()
file(WRITE "${ACTUAL}" "${out}")
if(DEFINED ENV{LAYOUTLAB_UPDATE_GOLDEN})
  file(WRITE "${SCENARIO_DIR}/expected.txt" "${out}")
  message(STATUS "updated ${SCENARIO_DIR}/expected.txt")
  return()
endif()
execute_process(COMMAND diff -u "${SCENARIO_DIR}/expected.txt" "${ACTUAL}" OUTPUT_VARIABLE diff RESULT_VARIABLE diff_rc)
if(NOT diff_rc EQUAL 0)
  message(FATAL_ERROR "golden mismatch for `layoutlab ${cmd}`:\n${diff}")
endif()
