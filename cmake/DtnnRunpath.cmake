# dtnn_set_runpath(<target> <runpath>): links target with its install RUNPATH (e.g. "$ORIGIN/../lib")
# in the build too. CMake otherwise pads a build RUNPATH for later rewriting with a trailing ':',
# which glibc reads as the current folder (tests/runpath.py checks every ELF for it).
function(dtnn_set_runpath target runpath)
  set_target_properties(${target} PROPERTIES INSTALL_RPATH "${runpath}" BUILD_WITH_INSTALL_RPATH ON
                                             INSTALL_RPATH_USE_LINK_PATH ON)
endfunction()
