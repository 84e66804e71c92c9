# SPDX-License-Identifier: MIT
# Bundled data made by a script with fixed seeds must come out byte-identical when the script runs again
# (determinism across runs and builds). SCRIPT is relative to DATASETS; FILES are compared with COMPARE_DIR.
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
execute_process(COMMAND bash "${DATASETS}/${SCRIPT}" "${LAYOUTLAB}" "${WORK}" RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${SCRIPT} failed: ${err}")
endif()
string(REPLACE "," ";" files "${FILES}")
foreach(name IN LISTS files)
  execute_process(COMMAND cmp "${DATASETS}/${COMPARE_DIR}/${name}" "${WORK}/${name}" RESULT_VARIABLE same OUTPUT_VARIABLE cmp_out)
  if(NOT same EQUAL 0)
    message(FATAL_ERROR "regenerated ${name} differs from the bundled file: ${cmp_out}")
  endif()
endforeach()
file(REMOVE_RECURSE "${WORK}")
