#!/usr/bin/env bash
# Bundles the Agents SDK cases of dosim's differential test
# (internal/platformtest TestAgentsSDKAgainstWorkerd): installs the agents
# and esbuild versions pinned in
# internal/platformtest/testdata/agents/package.json into the user cache
# directory (${XDG_CACHE_HOME:-$HOME/.cache}/dosim/agents-<version>, Go's
# os.UserCacheDir), and bundles testdata/agents/worker.js with the SDK into
# bundle.js there, where the test looks for it. Needs node and npm. Prints
# the bundle's path. Run it again after changing worker.js.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
pin="$root/internal/platformtest/testdata/agents"
version=$(node -e 'process.stdout.write(require(process.argv[1]).dependencies.agents)' "$pin/package.json")
. "$root/scripts/cache-dir.sh"
dir="$(dosim_cache_dir)/agents-$version"
mkdir -p "$dir"
cp "$pin/package.json" "$pin/worker.js" "$pin/email-stub.js" "$dir/"
if [ ! -x "$dir/node_modules/.bin/esbuild" ] || [ ! -d "$dir/node_modules/agents" ]; then
	(cd "$dir" && npm install --no-audit --no-fund --loglevel=error >&2)
fi
# workerd's own modules stay imports; node's path is node:path; the email
# module the open-source workerd lacks is a stand-in (email-stub.js).
(cd "$dir" && node_modules/.bin/esbuild worker.js --bundle --format=esm --platform=neutral \
	--main-fields=module,main --conditions=workerd,worker,browser \
	--external:cloudflare:workers '--external:node:*' --alias:path=node:path \
	--alias:cloudflare:email=./email-stub.js --log-level=error --outfile=bundle.js >&2)
echo "$dir/bundle.js"
