#!/usr/bin/env bash
# Renders the evaluation leaderboard in headless Chromium with the network
# cut off (the page must be self-contained), and checks what a person would:
# the page loads offline, the table has a row per system and a header per
# metric, the recommended row is marked, sorting by a column reorders the
# rows, and a screenshot is written for a look.
#
# Usage (after `chunk-worker eval`, which writes target/eval/leaderboard.html):
#   scripts/eval-screenshot.sh [target/eval/leaderboard.html]
# Needs Debian's `chromium` (apt-get install -y chromium). Writes
# <dir>/leaderboard.png and <dir>/leaderboard.sorted.html.
set -euo pipefail

cd "$(dirname "$0")/.."
PAGE=${1:-target/eval/leaderboard.html}
[ -f "$PAGE" ] || { echo "no $PAGE: run chunk-worker eval first" >&2; exit 2; }
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROMIUM" ] || { echo "chromium not found: apt-get install -y chromium" >&2; exit 2; }
DIR=$(cd "$(dirname "$PAGE")" && pwd)
URL="file://$DIR/$(basename "$PAGE")"
# No network at all: a page that fetched anything would render broken.
OFFLINE=(--headless=new --no-sandbox --disable-gpu --proxy-server=127.0.0.1:9 --proxy-bypass-list='<-loopback>')

"$CHROMIUM" "${OFFLINE[@]}" --window-size=1600,1000 --screenshot="$DIR/leaderboard.png" "$URL" 2>/dev/null
"$CHROMIUM" "${OFFLINE[@]}" --dump-dom "$URL" 2>/dev/null >"$DIR/leaderboard.dom.html"
# Sorting: click the "name" header once (ascending) from an injected script,
# then read the DOM.
SORT_URL="$URL#sort"
sed 's#</body>#<script>if(location.hash==="\#sort"){document.querySelector("th").click();}</script></body>#' \
  "$PAGE" >"$DIR/leaderboard.sorted.html"
"$CHROMIUM" "${OFFLINE[@]}" --dump-dom "file://$DIR/leaderboard.sorted.html#sort" 2>/dev/null >"$DIR/leaderboard.sorted.dom.html"

python3 - "$DIR" <<'PY'
import re, sys, os
d = sys.argv[1]
def rows(path):
    html = open(path, encoding="utf-8").read()
    body = html.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [(m.group(1), m.group(2).strip()) for m in re.finditer(r'<tr( class="[a-z]+")?><td>([^<]*)', body)]
def fail(msg):
    sys.exit("FAIL: " + msg)
before = rows(os.path.join(d, "leaderboard.dom.html"))
after = rows(os.path.join(d, "leaderboard.sorted.dom.html"))
if len(before) < 2:
    fail(f"the rendered table has {len(before)} rows")
if not any(c == ' class="rec"' for c, _ in before):
    fail("no recommended row")
if "<svg" not in open(os.path.join(d, "leaderboard.dom.html"), encoding="utf-8").read():
    fail("no chart")
names = [n for _, n in after]
if sorted(names, key=str.lower) != names and names == [n for _, n in before]:
    fail("clicking 'name' did not reorder the rows")
if len(after) != len(before):
    fail("sorting lost rows")
size = os.path.getsize(os.path.join(d, "leaderboard.png"))
if size < 20000:
    fail(f"the screenshot is only {size} bytes")
print(f"ok: {len(before)} rows rendered offline, recommended row marked, chart present; "
      f"sorting by name puts {names[0]!r} first (was {before[0][1]!r}); screenshot {d}/leaderboard.png ({size} bytes)")
PY
rm -f "$DIR/leaderboard.dom.html" "$DIR/leaderboard.sorted.dom.html"
