// A base image for the server's Dockerfile without a registry (Linux): writes a Docker build context, `<dir>/Dockerfile`
// (FROM scratch) and `<dir>/rootfs/`, holding the Node.js that runs this script as /usr/bin/node, the shared
// libraries it has loaded (read from /proc/self/maps, so no ldd) and its ELF interpreter. Then:
//   node examples/node-sdk/node-base.mjs node-base && docker build -t local/node node-base
// The image runs only on machines like this one (the same architecture; the libraries come with it).
import fs from 'node:fs';
import path from 'node:path';

/** The interpreter an ELF binary names (PT_INTERP), e.g. /lib64/ld-linux-x86-64.so.2; undefined for a static one. */
function interpreterOf(file) {
  const elf = fs.readFileSync(file);
  if (elf.readUInt32BE(0) !== 0x7f454c46 || elf[4] !== 2) return undefined; // 64-bit ELF only
  const phoff = Number(elf.readBigUInt64LE(0x20));
  const size = elf.readUInt16LE(0x36);
  for (let i = 0; i < elf.readUInt16LE(0x38); i++) {
    const at = phoff + i * size;
    if (elf.readUInt32LE(at) !== 3) continue;
    const offset = Number(elf.readBigUInt64LE(at + 8));
    const length = Number(elf.readBigUInt64LE(at + 32));
    return elf.subarray(offset, offset + length - 1).toString();
  }
  return undefined;
}

/** Fills `root` with what Node needs to run from nothing: this Node, its libraries and their names, /tmp. */
function nodeRootfs(root) {
  const copy = (from, to = from) => {
    const target = path.join(root, to);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.copyFileSync(fs.realpathSync(from), target);
    fs.chmodSync(target, 0o755);
  };
  copy(process.execPath, '/usr/bin/node');
  const libs = new Set(
    fs
      .readFileSync('/proc/self/maps', 'utf8')
      .split('\n')
      .map((l) => (l.includes('/') ? l.slice(l.indexOf('/')) : ''))
      .filter((p) => /\/lib[^/]*\/.*\.so(\.\d+)*$/.test(p) && fs.existsSync(p)),
  );
  for (const lib of libs) {
    copy(lib);
    // The names the loader looks for (libstdc++.so.6) are links to the file mapped (libstdc++.so.6.0.30).
    const dir = path.dirname(lib);
    const stem = path.basename(lib).replace(/\.so(\.\d+)*$/, '.so');
    for (const name of fs.readdirSync(dir)) {
      const other = path.join(dir, name);
      if (name.startsWith(stem) && other !== lib && fs.lstatSync(other).isSymbolicLink() && fs.realpathSync(other) === fs.realpathSync(lib)) copy(other);
    }
  }
  const interp = interpreterOf(process.execPath);
  if (interp) copy(interp);
  fs.mkdirSync(path.join(root, 'tmp'), { recursive: true });
  fs.chmodSync(path.join(root, 'tmp'), 0o1777);
}

const dir = process.argv[2];
if (!dir || process.platform !== 'linux') {
  console.error(dir ? "node-base: Linux only (it copies this machine's Node.js and its libraries)" : 'usage: node node-base.mjs <dir>');
  process.exit(2);
}
nodeRootfs(path.join(dir, 'rootfs'));
fs.writeFileSync(path.join(dir, 'Dockerfile'), 'FROM scratch\nCOPY rootfs/ /\nENV PATH=/usr/bin\n');
console.log(`${dir}: a build context for a base image with Node.js ${process.version}; next: docker build -t local/node ${dir}`);
