// The import rules of src/, checked from the source text: which layer each file is in, what each layer may import,
// and that no relative imports go round in a circle. Every relative import counts: static, `import type`,
// `export … from`, and `import()` (of values or in a type), since each makes the importer depend on the module.
import fs from 'node:fs';
import path from 'node:path';

export interface Layer {
  name: string;
  /** Its files: a folder (`emulator/`) or one file (`cli.ts`), relative to the root. */
  holds: string[];
  /** The layers it may import, itself included; npm packages and node: modules are always allowed. */
  may: string[];
}

export interface Import {
  /** Both relative to the root, with `/`. */
  from: string;
  to: string;
  specifier: string;
}

const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])(\.{1,2}\/[^'"]+)\1/g;

function sourceFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? sourceFiles(path.join(dir, e.name)) : /\.c?ts$/.test(e.name) ? [path.join(dir, e.name)] : []));
}

const slash = (p: string) => p.split(path.sep).join('/');

/** Every relative import of the .ts files under `root`, the target resolved to its .ts file. */
export function relativeImports(root: string): Import[] {
  return sourceFiles(root).flatMap((file) =>
    [...fs.readFileSync(file, 'utf8').matchAll(SPECIFIER)].map((m) => ({
      from: slash(path.relative(root, file)),
      to: slash(path.relative(root, path.resolve(path.dirname(file), m[2]!))).replace(/\.(c?)js$/, '.$1ts'),
      specifier: m[2]!,
    })),
  );
}

function layerOf(layers: readonly Layer[], file: string): Layer | undefined {
  return layers.find((l) => l.holds.some((h) => (h.endsWith('/') ? file.startsWith(h) : file === h)));
}

/** Each import the table does not allow, as `from -> specifier (layer -> layer)`, and each file in no layer. */
export function layerViolations(root: string, layers: readonly Layer[]): string[] {
  const found: string[] = [];
  for (const file of sourceFiles(root).map((f) => slash(path.relative(root, f)))) {
    if (!layerOf(layers, file)) found.push(`${file} is in no layer`);
  }
  for (const i of relativeImports(root)) {
    const from = layerOf(layers, i.from);
    const to = layerOf(layers, i.to);
    if (!from) continue;
    if (!to) found.push(`${i.from} -> ${i.specifier} (outside every layer)`);
    else if (!from.may.includes(to.name)) found.push(`${i.from} -> ${i.specifier} (${from.name} -> ${to.name})`);
  }
  return found;
}

/** The import circles under `root`, one per strongly connected group of files, each as `a.ts -> b.ts -> a.ts`. */
export function importCircles(root: string): string[] {
  const edges = new Map<string, Set<string>>();
  for (const i of relativeImports(root)) edges.set(i.from, (edges.get(i.from) ?? new Set()).add(i.to));
  // Tarjan's strongly connected components.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const groups: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const group: string[] = [];
    let w: string;
    do group.push((w = stack.pop()!));
    while (w !== v);
    if (group.length > 1 || edges.get(v)?.has(v)) groups.push(group);
  };
  for (const v of [...edges.keys()].sort()) if (!index.has(v)) visit(v);
  return groups.map((group) => circleThrough(group.sort()[0]!, new Set(group), edges).join(' -> ')).sort();
}

/** The shortest way from `start` back to itself inside its group. */
function circleThrough(start: string, group: Set<string>, edges: Map<string, Set<string>>): string[] {
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift()!;
    for (const w of edges.get(v) ?? []) {
      if (!group.has(w)) continue;
      if (w === start) {
        const way = [v];
        while (way[0] !== start) way.unshift(cameFrom.get(way[0]!)!);
        return [...way, start];
      }
      if (!cameFrom.has(w)) {
        cameFrom.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start];
}
