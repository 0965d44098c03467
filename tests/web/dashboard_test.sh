#!/usr/bin/env bash
# The dashboard in a real browser (issue 5, point 2): a server that has run a dry-run
# submission of tiny-bert; headless Debian Chromium driven by playwright-core checks that
# the submission, its groups and a rendered plot are on the page, and that a second
# submission appears without a reload (live updates). Saves a screenshot.
#   tests/web/dashboard_test.sh BUILD_DIR SOURCE_DIR
# Needs /usr/bin/chromium and Node.js; playwright-core is installed from the npm registry
# into BUILD_DIR/web-test (package-lock.json pins it).
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd)
source "$src/tests/lib/stack.sh"
chromium=${CHROMIUM:-/usr/bin/chromium}
[ -x "$chromium" ] || { echo "FAIL: no Chromium at $chromium (apt-get install chromium; scripts/install-deps.sh --test)"; exit 1; }
command -v node > /dev/null || { echo "FAIL: no node (apt-get install nodejs npm)"; exit 1; }

# playwright-core, pinned by the lock file, only when the lock file changed.
t=$build/web-test
mkdir -p "$t" "$build/test-artifacts"
if ! cmp -s "$src/tests/web/package-lock.json" "$t/package-lock.json" || [ ! -d "$t/node_modules/playwright-core" ]; then
  cp "$src/tests/web/package.json" "$src/tests/web/package-lock.json" "$t/"
  (cd "$t" && npm ci --no-audit --no-fund --loglevel=error) || { echo "FAIL: npm ci (playwright-core) failed"; exit 1; }
fi
cp "$src/tests/web/dashboard.mjs" "$t/"

# With a token, as deployed: the browser signs in at /login first.
STACK_TOKEN=1 stack_start "$build"
models=$src/tests/data/models
"$build/client/mono-submit" "$models/tiny-bert-opset20/model.onnx" --server "$addr" "${client_flags[@]}" --dry-run --wait \
  > "$work/submit1.out" 2> "$work/submit1.log" || stack_fail "the dry-run submission of tiny-bert failed"
sub=$(tail -n 1 "$work/submit1.out")
# A baseline recorded through the API shows in the result view.
curl -sf -X POST -H "Authorization: Bearer $(cat "$work/token")" -d "{\"submission_id\": \"$sub\", \"name\": \"torch.compile (test value)\", \"latency_us\": 99.5, \"source\": \"dashboard_test\"}" \
  "http://127.0.0.1:$http/api/baselines" > /dev/null || stack_fail "POST /api/baselines failed"

# The second submission is started by the browser script once the page is open, so the
# page must pick it up by itself.
second="$build/client/mono-submit $models/tiny-resnet-opset20/model.onnx --server $addr ${client_flags[*]} --dry-run --wait"
(cd "$t" && CHROMIUM=$chromium MONO_TOKEN=$(cat "$work/token") node dashboard.mjs "http://127.0.0.1:$http/" "$sub" "$build/test-artifacts/dashboard.png" "$second") \
  > "$work/browser.log" 2>&1 || { cat "$work/browser.log"; stack_fail "browser checks failed"; }
cat "$work/browser.log"
echo "screenshot: $build/test-artifacts/dashboard.png"
