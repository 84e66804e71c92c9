# SPDX-License-Identifier: MIT
# The bundled traces are the output of `layoutlab gen` with fixed seeds: regenerating them must give
# byte-identical files (determinism across runs and builds).
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
execute_process(COMMAND bash "${DATASETS}/traces/regenerate.sh" "${LAYOUTLAB}" "${WORK}" RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "regenerate.sh failed: ${err}")
endif()
foreach(name seed-k16-v96.lltrace mixed-sizes.lltrace)
  execute_process(COMMAND cmp "${DATASETS}/traces/${name}" "${WORK}/${name}" RESULT_VARIABLE same OUTPUT_VARIABLE cmp_out)
  if(NOT same EQUAL 0)
    message(FATAL_ERROR "regenerated ${name} differs from the bundled file: ${cmp_out}")
  endif()
endforeach()
file(REMOVE_RECURSE "${WORK}")
