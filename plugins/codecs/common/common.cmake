# What the codecs that hide values share (secagg, ckks): pairwise key agreement and sealed
# messages, compiled once as the object library dtnn_codecs_common, which each links. Included from
# each such plugin's CMakeLists.txt, after OpenSSL 3 was found.
include_guard(GLOBAL)
add_library(dtnn_codecs_common OBJECT
  ${CMAKE_CURRENT_LIST_DIR}/pair_keys.cpp
  ${CMAKE_CURRENT_LIST_DIR}/sealed_box.cpp)
set_target_properties(dtnn_codecs_common PROPERTIES POSITION_INDEPENDENT_CODE ON)
target_link_libraries(dtnn_codecs_common PUBLIC dtnn::core OpenSSL::Crypto)
target_include_directories(dtnn_codecs_common PUBLIC ${CMAKE_CURRENT_LIST_DIR})
