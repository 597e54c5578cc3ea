# dtnn_add_isa_variants(<target> SOURCES <files...>)
# Compiles <files> once per instruction set into <target>, for code that picks the best variant
# the CPU runs when it starts (plugins/conv/winograd/kernels.hpp does). On x86-64 the variants are
#   avx512    -march=x86-64-v4  (AVX-512 F, BW, CD, DQ, VL)
#   avx2      -march=x86-64-v3  (AVX2, FMA, BMI2)
#   portable  -march=x86-64     (SSE2)
# and elsewhere `portable` alone, built for the build's own target. Each compilation gets
# DTNN_ISA=<variant> (the code puts everything in namespace DTNN_ISA, so that no inline function
# of one variant can stand in for another's), and <target> gets DTNN_HAVE_ISA_<variant> for each.
# The -march given here comes after DTNN_NATIVE's -march=native and overrides it.
function(dtnn_add_isa_variants target)
  cmake_parse_arguments(P "" "" "SOURCES" ${ARGN})
  if(NOT P_SOURCES)
    message(FATAL_ERROR "dtnn_add_isa_variants needs SOURCES")
  endif()
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
    set(variants avx512 avx2 portable)
    set(flags_avx512 -march=x86-64-v4)
    set(flags_avx2 -march=x86-64-v3)
    set(flags_portable -march=x86-64)
  else()
    set(variants portable)
    set(flags_portable "")
  endif()
  foreach(variant IN LISTS variants)
    set(objects ${target}_${variant})
    add_library(${objects} OBJECT ${P_SOURCES})
    target_link_libraries(${objects} PRIVATE dtnn::core)
    target_compile_definitions(${objects} PRIVATE DTNN_ISA=${variant})
    target_compile_options(${objects} PRIVATE ${flags_${variant}}
      $<$<COMPILE_LANGUAGE:CXX>:-fno-gnu-unique>)
    set_target_properties(${objects} PROPERTIES POSITION_INDEPENDENT_CODE ON)
    target_sources(${target} PRIVATE $<TARGET_OBJECTS:${objects}>)
    target_compile_definitions(${target} PRIVATE DTNN_HAVE_ISA_${variant})
  endforeach()
endfunction()
