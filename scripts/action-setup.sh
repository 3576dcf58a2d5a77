#!/usr/bin/env bash
# The GitHub Actions' CLI (action.yml, game/action.yml), from the action's own directory, the repository at the
# ref the workflow names. `key`: the cache key of what `install` makes (the runner's OS, architecture and Node.js,
# and a hash of the lockfile and the sources), as the cache step's key and path outputs. `install`: unless the
# cache step restored them, the dependencies without install scripts (nothing is compiled: the emulator's SQLite
# is not used by a push) and the CLI built, then dev dependencies pruned; then `gamehost` on the job's PATH.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
case "${1:-}" in
  key)
    hash="$(cd "$root" && node -e '
      const fs = require("node:fs"), path = require("node:path"), hash = require("node:crypto").createHash("sha256");
      const files = ["package-lock.json", "tsconfig.json", ...fs.readdirSync("src", { recursive: true }).map((f) => path.join("src", f))];
      for (const f of files.sort()) if (fs.statSync(f).isFile()) hash.update(f + "\0").update(fs.readFileSync(f));
      process.stdout.write(hash.digest("hex").slice(0, 32));')"
    echo "key=gamehost-cli-${RUNNER_OS:-$(uname -s)}-${RUNNER_ARCH:-$(uname -m)}-node$(node -p 'process.versions.node')-${hash}" >> "$GITHUB_OUTPUT"
    echo "dir=$root" >> "$GITHUB_OUTPUT"
    ;;
  install)
    if [ -f "$root/dist/cli.js" ] && [ -d "$root/node_modules" ]; then
      echo "gamehost: the CLI in $root is installed (restored from the cache)"
    else
      (cd "$root" && npm ci --ignore-scripts --no-audit --no-fund && npm run build && npm prune --omit=dev --ignore-scripts --no-audit --no-fund)
    fi
    shim="$RUNNER_TEMP/gamehost-bin"
    mkdir -p "$shim"
    printf '#!/usr/bin/env bash\nexec node "%s/bin/gamehost.js" "$@"\n' "$root" > "$shim/gamehost"
    chmod +x "$shim/gamehost"
    echo "$shim" >> "$GITHUB_PATH"
    "$shim/gamehost" --version
    ;;
  *)
    echo "usage: action-setup.sh key|install" >&2
    exit 2
    ;;
esac
