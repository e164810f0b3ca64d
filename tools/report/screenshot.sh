#!/bin/sh
# Screenshots of the traceability report in a real browser (headless Chromium).
#   tools/report/screenshot.sh REPORT_DIR OUT_DIR
# Writes OUT_DIR/report-toc.png (the top of traceability.html: table of
# contents, summary, matrix, the first requirement's linked evidence) and OUT_DIR/report-link.png (the page a matrix
# link leads to: the rendered source copy at the linked line, highlighted).
# Then records what they show (OUT_DIR/screenshots.json: the PNGs' SHA-256 and
# the report's strings; tests/report/test_screenshots.py fails when stale).
# Installs Debian's chromium with apt-get when run as root and it is missing.
set -eu
report_dir=$(cd "${1:?usage: screenshot.sh REPORT_DIR OUT_DIR}" && pwd)
out_dir=${2:?usage: screenshot.sh REPORT_DIR OUT_DIR}
mkdir -p "$out_dir"
out_dir=$(cd "$out_dir" && pwd)
chromium=${CHROMIUM:-chromium}
if ! command -v "$chromium" >/dev/null 2>&1; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "chromium is missing; run as root: apt-get install -y --no-install-recommends chromium" >&2
        exit 1
    fi
    apt-get update
    apt-get install -y --no-install-recommends chromium
fi
[ -f "$report_dir/traceability.html" ] || { echo "no $report_dir/traceability.html: run sonnx-mul report first" >&2; exit 1; }
# The first link of the matrix's first requirement to a source copy, as the page names it.
link=$(grep -o 'href="sources/[^"]*#L[0-9]*"' "$report_dir/traceability.html" | head -n 1 | sed 's/^href="//; s/"$//')
[ -n "$link" ] || { echo "the report links to no source copy" >&2; exit 1; }
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
shot() {  # URL PNG HEIGHT
    "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$profile" --hide-scrollbars --window-size="1280,$3" \
        --screenshot="$2" "$1" 2>/dev/null
    [ -s "$2" ] || { echo "chromium wrote no $2" >&2; exit 1; }
    echo "wrote $2 ($1)"
}
# Tall enough for the contents, the summary, the matrix and the first details.
shot "file://$report_dir/traceability.html" "$out_dir/report-toc.png" 3000
shot "file://$report_dir/$link" "$out_dir/report-link.png" 900
"${PYTHON:-python3}" -m sonnx_mul_assurance.report.screenshots record "$report_dir" "$out_dir"
