# SPDX-License-Identifier: MIT
# Finds libpfm4 (perfmon2) and defines the imported target PFM::libpfm, as google/benchmark does.
find_path(PFM_INCLUDE_DIR NAMES perfmon/pfmlib_perf_event.h)
find_library(PFM_LIBRARY NAMES pfm)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(PFM REQUIRED_VARS PFM_LIBRARY PFM_INCLUDE_DIR)
if(PFM_FOUND AND NOT TARGET PFM::libpfm)
  add_library(PFM::libpfm UNKNOWN IMPORTED GLOBAL) # visible to tests/ as well as collectors/
  set_target_properties(PFM::libpfm PROPERTIES IMPORTED_LOCATION "${PFM_LIBRARY}"
                                               INTERFACE_INCLUDE_DIRECTORIES "${PFM_INCLUDE_DIR}")
endif()
mark_as_advanced(PFM_INCLUDE_DIR PFM_LIBRARY)
