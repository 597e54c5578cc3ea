# Runs COMMAND (a ;-list), checks its exit code and that stdout+stderr match EXPECT_REGEX (and,
# when given, do not match REFUSE_REGEX).
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(REPLACE "\n" " " all "${out} ${err}")
if(NOT code EQUAL EXPECT_CODE)
  message(FATAL_ERROR "exit code ${code}, expected ${EXPECT_CODE}; output:\n${out}\n${err}")
endif()
if(NOT all MATCHES "${EXPECT_REGEX}")
  message(FATAL_ERROR "output does not match '${EXPECT_REGEX}':\n${out}\n${err}")
endif()
if(DEFINED REFUSE_REGEX AND all MATCHES "${REFUSE_REGEX}")
  message(FATAL_ERROR "output matches '${REFUSE_REGEX}', which it must not:\n${out}\n${err}")
endif()
