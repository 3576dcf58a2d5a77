#!/usr/bin/env bash
# The GitHub Actions' CLI (action.yml, game/action.yml), from the action's own directory, the repository at the
# ref the workflow names. Both check the runner's Node.js first (one line and exit 1 when it is too old or missing).
# `key`: the cache key of what `install` makes (the runner's OS, architecture and Node.js, and a hash of the
# lockfile and the sources), as the cache step's key and path outputs. `install`: unless the cache step restored
# them, the runtime dependencies only (no install scripts: nothing is compiled, the emulator's SQLite is not used
# by a push) and the CLI built with TypeScript and the type packages as the lockfile holds them, installed apart
# and removed after, so the cache holds the runtime alone; then `gamehost` on the job's PATH.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# package.json's engines: ^20.18.1 || >=22.13.0.
need='Node.js 20.18.1 or later (22.13 or later on 22)'
if ! version="$(node -p 'process.versions.node' 2>/dev/null)"; then
  echo "::error::gamehost needs $need on the runner, and there is no node on the PATH: add actions/setup-node before this action" >&2
  exit 1
fi
IFS=. read -r major minor patch <<<"$version"
if ! { { [ "$major" -eq 20 ] && { [ "$minor" -gt 18 ] || { [ "$minor" -eq 18 ] && [ "$patch" -ge 1 ]; }; }; } ||
  { [ "$major" -eq 22 ] && [ "$minor" -ge 13 ]; } || [ "$major" -gt 22 ]; }; then
  echo "::error::gamehost needs $need on the runner, not $version: add actions/setup-node with node-version: 22 before this action" >&2
  exit 1
fi

case "${1:-}" in
  key)
    hash="$(cd "$root" && node -e '
      const fs = require("node:fs"), path = require("node:path"), hash = require("node:crypto").createHash("sha256");
      const files = ["package-lock.json", "tsconfig.json", ...fs.readdirSync("src", { recursive: true }).map((f) => path.join("src", f))];
      for (const f of files.sort()) if (fs.statSync(f).isFile()) hash.update(f + "\0").update(fs.readFileSync(f));
      process.stdout.write(hash.digest("hex").slice(0, 32));')"
    echo "key=gamehost-cli-${RUNNER_OS:-$(uname -s)}-${RUNNER_ARCH:-$(uname -m)}-node${version}-${hash}" >> "$GITHUB_OUTPUT"
    echo "dir=$root" >> "$GITHUB_OUTPUT"
    ;;
  install)
    if [ -f "$root/dist/cli.js" ] && [ -d "$root/node_modules" ]; then
      echo "gamehost: the CLI in $root is installed (restored from the cache)"
    else
      (cd "$root" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund)
      # TypeScript and the @types the sources need, outside the CLI's tree: `npm ci` of a lockfile cut from the
      # CLI's own (those packages and what they depend on, at the versions and integrity it holds), so the build
      # uses what the repository's CI built with, and npm needs only their tarballs.
      tools="$(mktemp -d "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/gamehost-build.XXXXXX")"
      (cd "$root" && node -e '
        const fs = require("node:fs"), path = require("node:path");
        const lock = require("./package-lock.json"), dev = require("./package.json").devDependencies;
        const names = ["typescript", ...Object.keys(dev).filter((n) => n.startsWith("@types/"))];
        // As Node looks a package up in the tree the lockfile describes: <from>/node_modules/<name>, then each folder up.
        const find = (from, name) => {
          for (let dir = from; ; dir = dir.includes("/node_modules/") ? dir.slice(0, dir.lastIndexOf("/node_modules/")) : "") {
            const at = `${dir ? `${dir}/` : ""}node_modules/${name}`;
            if (lock.packages[at]) return at;
            if (!dir) throw new Error(`${name} (needed by ${from || "the build"}) is not in package-lock.json`);
          }
        };
        // A package reached only through optionalDependencies stays optional: TypeScript 7 is a native compiler, one
        // package per platform, and npm installs the one that fits the runner and skips the others.
        const packages = {};
        const todo = names.map((n) => [find("", n), false]);
        while (todo.length) {
          const [at, optional] = todo.pop();
          if (packages[at] && (optional || !packages[at].optional)) continue;
          const { dev: _d, devOptional: _o, optional: _p, peer: _e, ...entry } = lock.packages[at];
          packages[at] = optional ? { ...entry, optional: true } : entry;
          for (const dep of Object.keys(entry.dependencies ?? {})) todo.push([find(at, dep), optional]);
          for (const dep of Object.keys(entry.optionalDependencies ?? {})) todo.push([find(at, dep), true]);
        }
        const dependencies = Object.fromEntries(names.map((n) => [n, lock.packages[`node_modules/${n}`].version]));
        const name = "gamehost-build-tools";
        fs.writeFileSync(path.join(process.argv[1], "package.json"), JSON.stringify({ name, private: true, dependencies }));
        fs.writeFileSync(path.join(process.argv[1], "package-lock.json"),
          JSON.stringify({ name, lockfileVersion: 3, requires: true, packages: { "": { name, dependencies }, ...packages } }));
      ' "$tools")
      (cd "$tools" && npm ci --ignore-scripts --no-audit --no-fund)
      # The sources find the types where Node would find a package: a link for the build, then gone.
      if [ -e "$root/node_modules/@types" ]; then
        echo "::error::gamehost: $root/node_modules/@types is there already: the runtime install is not what this script expects" >&2
        exit 1
      fi
      ln -s "$tools/node_modules/@types" "$root/node_modules/@types"
      status=0
      (cd "$root" && node "$tools/node_modules/typescript/bin/tsc" -p tsconfig.json) || status=$?
      rm -f "$root/node_modules/@types"
      rm -rf "$tools"
      if [ "$status" -ne 0 ]; then
        echo "::error::gamehost: the CLI in $root did not build (tsc exit $status)" >&2
        exit 1
      fi
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
