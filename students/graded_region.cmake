# A graded task's answer is a marked region of the file that holds its op, right under the
# forward it belongs to (docs/graded-tasks.md):
#
#     // graded:begin TASK (students/tasks/TASK.cpp)
#     ... our implementation ...
#     // graded:end TASK
#
# This script is the one place that reads those markers. Two modes:
#   cmake -DMODE=cut -DIN=F -DOUT=G -P students/graded_region.cmake
#       G = F without its regions; each region becomes one comment naming the student's file
#       (the lesson build compiles this copy; a handout holds it in place of F).
#   cmake -DMODE=ours -DTASK=T -DIN=F -DOUT=G [-DLINE_FILE=P] -P students/graded_region.cmake
#       G = region T of F alone, with F's #include and namespace lines around it: our answer
#       as a file of its own (the reference a grade compiles, a handout's given task). With
#       LINE_FILE, a #line directive makes compilers and sanitizers name P and F's line numbers.
# IN = OUT is allowed. A region left open, or T not found, is an error.
cmake_minimum_required(VERSION 3.22)
if(NOT MODE MATCHES "^(cut|ours)$" OR NOT DEFINED IN OR NOT DEFINED OUT)
  message(FATAL_ERROR "graded_region: use -DMODE=cut|ours -DIN=FILE -DOUT=FILE [-DTASK=T]")
endif()
if(MODE STREQUAL "ours" AND NOT TASK MATCHES "^[a-z_]+$")
  message(FATAL_ERROR "graded_region: MODE=ours needs -DTASK=<task>")
endif()
file(READ "${IN}" text)
set(out "")
set(inside "")  # the task whose region the current line is in
set(found FALSE)
set(number 0)
while(NOT text STREQUAL "")
  string(FIND "${text}" "\n" nl)
  if(nl EQUAL -1)
    set(line "${text}")
    set(text "")
  else()
    string(SUBSTRING "${text}" 0 ${nl} line)
    math(EXPR nl "${nl} + 1")
    string(SUBSTRING "${text}" ${nl} -1 text)
  endif()
  math(EXPR number "${number} + 1")
  if(line MATCHES "^// graded:begin ([a-z_]+)")
    if(NOT inside STREQUAL "")
      message(FATAL_ERROR "graded_region: ${IN}:${number}: region ${CMAKE_MATCH_1} opens inside ${inside}")
    endif()
    set(inside "${CMAKE_MATCH_1}")
    if(MODE STREQUAL "cut")
      string(APPEND out "// Graded task ${inside}: students/tasks/${inside}.cpp holds it.\n")
    elseif(inside STREQUAL TASK)
      set(found TRUE)
      if(DEFINED LINE_FILE)
        math(EXPR next "${number} + 1")
        string(APPEND out "#line ${next} \"${LINE_FILE}\"\n")
      endif()
    endif()
  elseif(line MATCHES "^// graded:end ([a-z_]+)")
    if(NOT CMAKE_MATCH_1 STREQUAL inside)
      message(FATAL_ERROR "graded_region: ${IN}:${number}: graded:end ${CMAKE_MATCH_1} closes no open region")
    endif()
    set(inside "")
  elseif(inside STREQUAL "")
    # Outside every region: the whole line when cutting; only the frame of the code (includes,
    # namespaces) for our answer alone.
    if(MODE STREQUAL "cut" OR line MATCHES "^#include " OR line MATCHES "^namespace [^;]*\\{$"
       OR line MATCHES "^}  // namespace")
      string(APPEND out "${line}\n")
    endif()
  elseif(MODE STREQUAL "ours" AND inside STREQUAL TASK)
    string(APPEND out "${line}\n")
  endif()
endwhile()
if(NOT inside STREQUAL "")
  message(FATAL_ERROR "graded_region: ${IN}: region ${inside} has no graded:end")
endif()
if(MODE STREQUAL "ours" AND NOT found)
  message(FATAL_ERROR "graded_region: ${IN} has no region of task ${TASK}")
endif()
file(WRITE "${OUT}" "${out}")
