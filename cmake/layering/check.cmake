# check.cmake — run by the layering_* tests: builds TARGET in BUILD_DIR and
# checks the outcome is EXPECT (fail: the compile stops on HEADER not
# found; pass: it compiles).
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target ${TARGET}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
string(REPLACE "." "\\." header_re "${HEADER}")
if(EXPECT STREQUAL "fail")
  if(rc EQUAL 0)
    message(FATAL_ERROR "layering: ${TARGET} includes ${HEADER} and compiles, but its layer may not use it")
  endif()
  if(NOT out MATCHES "${header_re}[:']* *(No such file|file not found)")
    message(FATAL_ERROR "layering: ${TARGET} failed to build, but not on ${HEADER} being out of reach:\n${out}")
  endif()
  message(STATUS "layering: ${TARGET}: ${HEADER} is out of reach, as it must be")
else()
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "layering: ${TARGET} may include ${HEADER} but does not compile:\n${out}")
  endif()
  message(STATUS "layering: ${TARGET}: ${HEADER} is reachable, as it must be")
endif()
