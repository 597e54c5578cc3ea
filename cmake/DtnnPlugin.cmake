# dtnn_add_plugin(NAME <name> KIND <kind> SOURCES <files...> [LIBRARIES <targets...>])
# Builds plugins/<kind>/<name> as a MODULE library <kind>_<name>.so in DTNN_PLUGIN_OUTPUT_DIR.
function(dtnn_add_plugin)
  cmake_parse_arguments(P "" "NAME;KIND;OUTPUT_DIR" "SOURCES;LIBRARIES" ${ARGN})
  if(NOT P_NAME OR NOT P_KIND OR NOT P_SOURCES)
    message(FATAL_ERROR "dtnn_add_plugin needs NAME, KIND and SOURCES")
  endif()
  if(NOT P_OUTPUT_DIR)
    set(P_OUTPUT_DIR ${DTNN_PLUGIN_OUTPUT_DIR})
  endif()
  set(target dtnn_${P_KIND}_${P_NAME})
  add_library(${target} MODULE ${P_SOURCES})
  target_link_libraries(${target} PRIVATE dtnn::core ${P_LIBRARIES})
  set_target_properties(${target} PROPERTIES PREFIX "" OUTPUT_NAME "${P_KIND}_${P_NAME}"
    LIBRARY_OUTPUT_DIRECTORY ${P_OUTPUT_DIR} INSTALL_RPATH "$ORIGIN/../..")
  target_link_options(${target} PRIVATE "LINKER:--no-undefined")
  # gcc's STB_GNU_UNIQUE symbols would pin the .so in memory and hide lifetime bugs.
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-fno-gnu-unique> $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-fno-gnu-unique>)
  set_property(GLOBAL APPEND PROPERTY DTNN_PLUGIN_TARGETS ${target})
  if(P_OUTPUT_DIR STREQUAL DTNN_PLUGIN_OUTPUT_DIR)
    install(TARGETS ${target} LIBRARY DESTINATION lib/dtnn/plugins)
  endif()
endfunction()
