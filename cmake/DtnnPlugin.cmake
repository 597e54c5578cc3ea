# dtnn_add_plugin(NAME <name> KIND <kind> SOURCES <files...> [LIBRARIES <targets...>]
#                 [OUTPUT_DIR <dir>] [ISA_VARIANTS])
# Builds plugins/<kind>/<name> as a MODULE library <kind>_<name>.so in DTNN_PLUGIN_OUTPUT_DIR.
# ISA_VARIANTS (a plugin whose loops are worth compiling for wider vectors): the plugin is built
# once per instruction-set level of DtnnIsa.cmake, <kind>_<name>.so for the floor (portable) and
# <kind>_<name>.<level>.so above it (conv_direct.avx2.so, conv_direct.avx512.so); the registry
# loads the best one this CPU runs and never opens the others. Each level's target is
# dtnn_<kind>_<name>_<level> (compiled with DTNN_ISA_VARIANT=<level>, as the floor's is).
include(${CMAKE_CURRENT_LIST_DIR}/DtnnRunpath.cmake)
function(dtnn_add_plugin)
  cmake_parse_arguments(P "ISA_VARIANTS" "NAME;KIND;OUTPUT_DIR" "SOURCES;LIBRARIES" ${ARGN})
  if(NOT P_NAME OR NOT P_KIND OR NOT P_SOURCES)
    message(FATAL_ERROR "dtnn_add_plugin needs NAME, KIND and SOURCES")
  endif()
  if(NOT P_OUTPUT_DIR)
    set(P_OUTPUT_DIR ${DTNN_PLUGIN_OUTPUT_DIR})
  endif()
  set(target dtnn_${P_KIND}_${P_NAME})
  set(levels "")
  if(P_ISA_VARIANTS)
    set(levels ${DTNN_ISA_LEVELS})
    list(REMOVE_ITEM levels portable)
  endif()
  _dtnn_plugin_library(${target} "${P_KIND}_${P_NAME}" "${P_OUTPUT_DIR}" "${P_SOURCES}" "${P_LIBRARIES}")
  if(P_ISA_VARIANTS)
    dtnn_isa_compile_options(${target} portable)
    target_compile_definitions(${target} PRIVATE DTNN_ISA_VARIANT=portable)
  endif()
  foreach(level IN LISTS levels)
    _dtnn_plugin_library(${target}_${level} "${P_KIND}_${P_NAME}.${level}" "${P_OUTPUT_DIR}"
                         "${P_SOURCES}" "${P_LIBRARIES}")
    dtnn_isa_compile_options(${target}_${level} ${level})
    target_compile_definitions(${target}_${level} PRIVATE DTNN_ISA_VARIANT=${level})
  endforeach()
endfunction()

# dtnn_add_cuda_plugin(NAME <name> KIND <kind> SOURCES <files...> [LIBRARIES <targets...>])
# A plugin's CUDA twin, built beside it from the same folder where CUDA was found (DTNN_HAVE_CUDA;
# elsewhere nothing): linked with dtnn::cuda (plugins/cuda/common: the context, the twins'
# headers), its .cu sources compiled by nvcc, so a twin's kernels live in its own folder. Out of
# the tree the same works against an installed dtnn that has CUDA.
function(dtnn_add_cuda_plugin)
  cmake_parse_arguments(P "" "NAME;KIND" "SOURCES;LIBRARIES" ${ARGN})
  if(NOT P_NAME OR NOT P_KIND OR NOT P_SOURCES)
    message(FATAL_ERROR "dtnn_add_cuda_plugin needs NAME, KIND and SOURCES")
  endif()
  if(DTNN_HAVE_CUDA)
    _dtnn_plugin_library(dtnn_${P_KIND}_${P_NAME} "${P_KIND}_${P_NAME}" "${DTNN_PLUGIN_OUTPUT_DIR}"
                         "${P_SOURCES}" "dtnn::cuda;${P_LIBRARIES}")
    set_property(GLOBAL APPEND PROPERTY DTNN_CUDA_PLUGIN_TARGETS dtnn_${P_KIND}_${P_NAME})
  endif()
endfunction()

function(_dtnn_plugin_library target output_name output_dir sources libraries)
  add_library(${target} MODULE ${sources})
  target_link_libraries(${target} PRIVATE dtnn::core ${libraries})
  set_target_properties(${target} PROPERTIES PREFIX "" OUTPUT_NAME "${output_name}"
    LIBRARY_OUTPUT_DIRECTORY ${output_dir})
  # Every symbol resolved at link time, except under clang's sanitizers, whose runtime lives in the
  # executable that loads the plugin.
  if(NOT (DTNN_SANITIZE AND CMAKE_CXX_COMPILER_ID STREQUAL "Clang"))
    target_link_options(${target} PRIVATE "LINKER:--no-undefined")
  endif()
  # gcc's STB_GNU_UNIQUE symbols would pin the .so in memory and hide lifetime bugs (clang makes none).
  target_compile_options(${target} PRIVATE
    $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:GNU>>:-fno-gnu-unique>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-fno-gnu-unique>)
  set_property(GLOBAL APPEND PROPERTY DTNN_PLUGIN_TARGETS ${target})
  if(output_dir STREQUAL DTNN_PLUGIN_OUTPUT_DIR)
    # lib/dtnn/plugins has the install's layout in the build tree too.
    dtnn_set_runpath(${target} "$ORIGIN/../..")
    install(TARGETS ${target} LIBRARY DESTINATION lib/dtnn/plugins)
  endif()
endfunction()
