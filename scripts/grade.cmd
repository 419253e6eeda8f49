@echo off
rem Graded tasks on Windows without a shell (docs/graded-tasks.md): the same as scripts/grade.sh.
rem Needs CMake, a C++ compiler (MSYS2 UCRT64 g++, or Visual Studio) and xtensor + doctest where
rem CMake finds them (MSYS2: ./install.sh; Visual Studio: vcpkg, with CMAKE_TOOLCHAIN_FILE in
rem GRADE_CMAKE_ARGS). Builds the grader (students\grader\) and hands it the arguments:
rem   scripts\grade.cmd                list the tasks
rem   scripts\grade.cmd rope_forward   grade one task; all: every task
rem   scripts\grade.cmd --hint TASK    a deeper hint for TASKs last failure
setlocal
cd /d "%~dp0.."
if "%GRADE_BUILD_DIR%"=="" set GRADE_BUILD_DIR=build-student
if not exist "%GRADE_BUILD_DIR%\CMakeCache.txt" (
  cmake -S students -B "%GRADE_BUILD_DIR%" -DCMAKE_BUILD_TYPE=Release %GRADE_CMAKE_ARGS% > "%TEMP%\grade-configure.log" 2>&1
  if errorlevel 1 (
    type "%TEMP%\grade-configure.log"
    echo grade: configuring the lesson build failed: is every package of install.sh there?
    if exist "%GRADE_BUILD_DIR%\CMakeCache.txt" del "%GRADE_BUILD_DIR%\CMakeCache.txt"
    exit /b 1
  )
)
cmake --build "%GRADE_BUILD_DIR%" --config Release --target grader > "%GRADE_BUILD_DIR%\grader-build.log" 2>&1
if errorlevel 1 (
  type "%GRADE_BUILD_DIR%\grader-build.log"
  echo grade: building the grader failed
  exit /b 1
)
if exist "%GRADE_BUILD_DIR%\Release\grader.exe" ("%GRADE_BUILD_DIR%\Release\grader.exe" %* & exit /b) 
"%GRADE_BUILD_DIR%\grader.exe" %*
exit /b
