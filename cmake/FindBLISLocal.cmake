# BLIS ships no pkg-config file or CMake package on Debian; find libblis and <blis.h> directly.
# Link libblis explicitly: -lblas may be BLIS or netlib depending on update-alternatives.
find_path(BLIS_INCLUDE_DIR blis.h PATH_SUFFIXES blis)
find_library(BLIS_LIBRARY NAMES blis)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(BLISLocal REQUIRED_VARS BLIS_LIBRARY BLIS_INCLUDE_DIR)
if(BLISLocal_FOUND AND NOT TARGET BLIS::BLIS)
  add_library(BLIS::BLIS UNKNOWN IMPORTED)
  set_target_properties(BLIS::BLIS PROPERTIES IMPORTED_LOCATION "${BLIS_LIBRARY}"
                        INTERFACE_INCLUDE_DIRECTORIES "${BLIS_INCLUDE_DIR}")
endif()
