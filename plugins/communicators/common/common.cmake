# What the communicators that need no MPI job share (tcp, mqtt): compiled once, as the object
# library dtnn_communicators_common, which each links. Included from each plugin's CMakeLists.txt.
include_guard(GLOBAL)
add_library(dtnn_communicators_common OBJECT
  ${CMAKE_CURRENT_LIST_DIR}/host_port.cpp
  ${CMAKE_CURRENT_LIST_DIR}/launch_settings.cpp
  ${CMAKE_CURRENT_LIST_DIR}/collective_queue.cpp)
set_target_properties(dtnn_communicators_common PROPERTIES POSITION_INDEPENDENT_CODE ON)
target_link_libraries(dtnn_communicators_common PUBLIC dtnn::core)
target_include_directories(dtnn_communicators_common PUBLIC ${CMAKE_CURRENT_LIST_DIR})
