#!/usr/bin/env bash
# Installs the workerd that dosim's differential test (internal/platformtest)
# runs against: exactly the version pinned in
# internal/platformtest/testdata/workerd/package.json and its package-lock.json
# (npm ci), into the user cache directory where the test looks for it:
# ${XDG_CACHE_HOME:-$HOME/.cache}/dosim/workerd-<version> (Go's
# os.UserCacheDir; on macOS ~/Library/Caches). Needs node and npm.
# Prints the path of the binary. Run it again to repair an install.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
pin="$root/internal/platformtest/testdata/workerd"
version=$(node -e 'process.stdout.write(require(process.argv[1]).dependencies.workerd)' "$pin/package.json")
. "$root/scripts/cache-dir.sh"
dir="$(dosim_cache_dir)/workerd-$version"
bin="$dir/node_modules/.bin/workerd"
if [ -x "$bin" ] && "$bin" --version >/dev/null 2>&1; then
	echo "$bin"
	exit 0
fi
mkdir -p "$dir"
cp "$pin/package.json" "$pin/package-lock.json" "$dir/"
# workerd's postinstall puts the platform's binary in place: allow it.
(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >&2)
"$bin" --version >&2
echo "$bin"
