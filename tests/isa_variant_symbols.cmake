# cmake -DLEVEL=<level> -DOBJECTS=<a.o;b.o> -DNM=<nm> -P isa_variant_symbols.cmake
# Fails when an object compiled for <level> (dtnn_add_isa_variants) defines a weak or unique
# symbol outside the namespace of its level (`::<level>::`): such a symbol (an inline function, a
# template instantiation, std::fill<...>) is merged by the linker with the other levels' copies,
# and the one it keeps, perhaps built for AVX-512, then runs for every level.
if(NOT LEVEL OR NOT OBJECTS OR NOT NM)
  message(FATAL_ERROR "usage: cmake -DLEVEL=... -DOBJECTS=... -DNM=... -P ${CMAKE_CURRENT_LIST_FILE}")
endif()
set(shared "")
foreach(object IN LISTS OBJECTS)
  execute_process(COMMAND ${NM} -C --defined-only ${object} OUTPUT_VARIABLE symbols
                  RESULT_VARIABLE failed)
  if(failed)
    message(FATAL_ERROR "${NM} could not read ${object}")
  endif()
  string(REPLACE "\n" ";" lines "${symbols}")
  foreach(line IN LISTS lines)
    # "<address> <type> <name>": W/V weak, u unique; local and strong symbols are the level's own
    # or, strong, would be a duplicate-definition link error.
    if(line MATCHES "^[0-9a-f]+ ([WVu]) (.*)$")
      set(name "${CMAKE_MATCH_2}")
      string(FIND "${name}" "::${LEVEL}::" at)
      # DW.ref.__gxx_personality_v0: a pointer (data) that exception tables share, not code.
      if(at EQUAL -1 AND NOT name STREQUAL "DW.ref.__gxx_personality_v0")
        string(APPEND shared "  ${name}\n")
      endif()
    endif()
  endforeach()
endforeach()
if(shared)
  message(FATAL_ERROR "${LEVEL}: shared symbols outside namespace ${LEVEL}:\n${shared}")
endif()
list(LENGTH OBJECTS count)
message(STATUS "${LEVEL}: ${count} object(s), no shared symbol outside namespace ${LEVEL}")
