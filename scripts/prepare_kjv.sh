#!/usr/bin/env bash
# Stage 6 — data: reproduce data/kjv.txt from Debian's bible-kjv package.
#
# Output format: one verse per line (verse numbers removed), chapters separated by one blank
# line, no book/chapter headings. Plain ASCII (a subset of UTF-8), LF line endings.
# Usage: scripts/prepare_kjv.sh [OUTPUT]   (default: data/kjv.txt next to this script)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${1:-$here/../data/kjv.txt}"

if ! command -v bible >/dev/null 2>&1; then
    echo "bible (Debian package bible-kjv) not found; installing it" >&2
    if [ "$(id -u)" -eq 0 ]; then apt-get install -y bible-kjv
    else sudo apt-get install -y bible-kjv; fi
fi

# bible prints "Book N" heading lines, blank lines, and verses as "  V text". A huge line
# width (-l100000) keeps every verse on one line, so no wrapping has to be undone.
bible -l100000 "Ge1:1-Re22:21" | awk '
    /^  [0-9]+ / { sub(/^  [0-9]+ /, ""); sub(/[ \t]+$/, ""); print; verses++; next }
    /^$/         { next }
                 { if (chapters++ > 0) print ""; next }   # a heading starts a new chapter
    END { if (chapters != 1189 || verses != 31102)
              { printf "expected 1189 chapters / 31102 verses, got %d / %d\n", chapters, verses > "/dev/stderr"; exit 1 } }
' > "$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out: $(wc -l < "$out") lines, $(wc -c < "$out") bytes" >&2
