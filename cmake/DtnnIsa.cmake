# Instruction-set levels (dtnn/isa.hpp, docs/architecture.md "Every CPU"). On x86-64:
#   portable  -march=x86-64-v2  (SSE4.2, POPCNT): the floor the default build runs on
#   avx2      -march=x86-64-v3  (AVX2, FMA, BMI2, ...)
#   avx512    -march=x86-64-v4  (AVX-512 F, BW, CD, DQ, VL)
# elsewhere `portable` alone, built for the build's own target. Code of a level above the floor is
# built two ways, both chosen at run time by the core (never run before the CPU said it has it):
#   dtnn_add_plugin(... ISA_VARIANTS)            the whole plugin once per level (DtnnPlugin.cmake)
#   dtnn_add_isa_variants(<target> SOURCES ...)  a kernel family inside a library (isa::Family)
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  set(DTNN_ISA_LEVELS portable avx2 avx512)
  set(DTNN_ISA_FLAGS_portable -march=x86-64-v2)
  set(DTNN_ISA_FLAGS_avx2 -march=x86-64-v3)
  set(DTNN_ISA_FLAGS_avx512 -march=x86-64-v4)
else()
  set(DTNN_ISA_LEVELS portable)
  set(DTNN_ISA_FLAGS_portable "")
endif()
# Fewer levels for builds that need not run every level's code (the fuzzing build: its targets read
# files, whatever kernels the plugins hold). `portable`, the floor, is always built. The test suite
# expects every level: it checks that each was built.
set(DTNN_ISA_ONLY "" CACHE STRING "Build only these instruction-set levels (default: all)")
if(DTNN_ISA_ONLY)
  foreach(level IN LISTS DTNN_ISA_ONLY)
    if(NOT level IN_LIST DTNN_ISA_LEVELS)
      message(FATAL_ERROR "DTNN_ISA_ONLY: '${level}' is not a level (${DTNN_ISA_LEVELS})")
    endif()
  endforeach()
  string(REPLACE ";" "|" dtnn_isa_only_regex "${DTNN_ISA_ONLY}")
  list(FILTER DTNN_ISA_LEVELS INCLUDE REGEX "^(portable|${dtnn_isa_only_regex})$")
endif()

# dtnn_isa_compile_options(<target> <level>): compiles <target>'s C++ for <level>. The -march given
# here comes after the build's own (x86-64-v2, or DTNN_NATIVE's -march=native) and overrides it.
function(dtnn_isa_compile_options target level)
  foreach(flag IN LISTS DTNN_ISA_FLAGS_${level})
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:${flag}>)
  endforeach()
endfunction()

# dtnn_add_isa_variants(<target> SOURCES <files...>)
# Compiles <files> once per level into <target>. Each compilation gets DTNN_ISA_VARIANT=<level>:
# the code puts everything it defines in namespace DTNN_ISA_VARIANT, so that no inline function of
# one level can stand in for another's (tests/isa_variant_symbols.cmake checks the objects), and
# defines there the function its isa::Family lists for that level; <target> gets
# DTNN_HAVE_ISA_<level> for each level built.
function(dtnn_add_isa_variants target)
  cmake_parse_arguments(P "" "" "SOURCES" ${ARGN})
  if(NOT P_SOURCES)
    message(FATAL_ERROR "dtnn_add_isa_variants needs SOURCES")
  endif()
  foreach(level IN LISTS DTNN_ISA_LEVELS)
    set(objects ${target}_isa_${level})
    add_library(${objects} OBJECT ${P_SOURCES})
    if(target STREQUAL "dtnn_core")  # the core's own families: its headers, not a link to it
      target_include_directories(${objects} PRIVATE $<TARGET_PROPERTY:dtnn_core,INCLUDE_DIRECTORIES>)
      target_link_libraries(${objects} PRIVATE OpenMP::OpenMP_CXX)
    else()
      target_link_libraries(${objects} PRIVATE dtnn::core)
    endif()
    target_compile_definitions(${objects} PRIVATE DTNN_ISA_VARIANT=${level})
    dtnn_isa_compile_options(${objects} ${level})
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")  # clang makes no STB_GNU_UNIQUE symbols
      target_compile_options(${objects} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-fno-gnu-unique>)
    endif()
    set_target_properties(${objects} PROPERTIES POSITION_INDEPENDENT_CODE ON)
    target_sources(${target} PRIVATE $<TARGET_OBJECTS:${objects}>)
    target_compile_definitions(${target} PRIVATE DTNN_HAVE_ISA_${level})
    set_property(TARGET ${target} APPEND PROPERTY DTNN_ISA_OBJECT_LIBRARIES ${objects})
  endforeach()
endfunction()
