# SPDX-License-Identifier: MIT
# layoutlab_warnings(target): the project's warning set, applied per target (never globally).
function(layoutlab_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
                                           -Wold-style-cast -Wcast-align -Woverloaded-virtual)
endfunction()
