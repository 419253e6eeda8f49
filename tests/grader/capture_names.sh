#!/usr/bin/env bash
# A name, not an address, in every CAPTURE / INFO of the tests (docs/graded-tasks.md, "The
# console teaches"). doctest 2.4.9 prints a `const char*` captured by CAPTURE(x) or streamed by
# INFO(... << x) as a pointer (0x55…), so a failing test would say "pairing := 0x5566…" where a
# student needs "pairing := half". Fails on every CAPTURE/INFO of
#   - a call of a function that src/ declares as returning `const char*` (rope_pairing_name, …),
#   - a name the same test file declares as `const char* NAME` (loop variables, struct fields),
# unless it is wrapped in std::string(...). Usage: tests/grader/capture_names.sh [REPO_ROOT]
set -euo pipefail
cd "${1:-$(dirname "$0")/../..}"
functions=$(grep -rhoE 'const char\* +[A-Za-z_][A-Za-z0-9_]*\(' src --include='*.hpp' \
              | sed -E 's/const char\* +//; s/\($//' | sort -u | paste -sd'|')
[ -n "$functions" ] || { echo "FAIL: found no const char* function in src/ (the grep is broken)"; exit 1; }
bad=0
while IFS= read -r file; do
  vars=$(grep -hoE 'const char\* +[A-Za-z_][A-Za-z0-9_]*' "$file" | sed -E 's/const char\* +//' \
           | sort -u | paste -sd"|" || true)
  pattern="(CAPTURE\(|INFO\(.*<< *)((rf::)?($functions)\(|([a-z_]+\.)?(${vars:-@none@})\b[^(])"
  while IFS= read -r hit; do
    echo "FAIL: $file:$hit — a const char* prints as an address: wrap it, CAPTURE(std::string(...))"
    bad=1
  done < <(grep -nE "$pattern" "$file" | grep -vE "(CAPTURE|INFO)\(std::string\(" || true)
done < <(find tests -name '*.cpp' -o -name '*.hpp' | sort)
[ "$bad" = 0 ] && echo "capture_names: PASS (no const char* captured as a pointer in tests/)"
exit "$bad"
