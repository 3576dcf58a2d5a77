// A Rivet project's config for `gamehost deploy`, read as the Rivet CLI v1.3.4 reads it. Followed:
// rivet-gg/cli cli/src/commands/config.rs (`read_config_inner`: `rivet.*`, legacy `rivet.version.*`, then
// `rivet.<ns>.*` and `rivet.version.<ns>.*`, then the `-o` overrides) and the merge of the config-rs fork it pins,
// rivet-gg/config-rs src/path/mod.rs (`Expression::set`: a mapping is merged key by key into the mapping below it,
// anything else, lists included, replaces what was there; keys keep their case since the fork's revert of
// lowercasing). Where Rivet is loose we are strict, and say so: two of rivet.yaml/yml/toml/json in one folder is an
// error (config-rs takes whichever its HashMap lists first), and no file at all is an error (config-rs reads `{}`).
import fs from 'node:fs/promises';
import path from 'node:path';
import { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, visit } from 'yaml';
import { parse as parseToml, TomlDate, TomlError } from 'smol-toml';
import { UsageError, describeFsError } from '../errors.js';

export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

export type ConfigFormat = 'yaml' | 'toml' | 'json';
const FORMATS: Record<string, ConfigFormat> = { yaml: 'yaml', yml: 'yaml', toml: 'toml', json: 'json' };
const EXTENSIONS = Object.keys(FORMATS);

export interface LoadProjectConfigOptions {
  /** The project's folder, where rivet.yaml (or .yml, .toml, .json) is looked for. */
  dir: string;
  /** The namespace deployed to: `rivet.<namespace>.*` beside the config is laid over it when present. */
  namespace?: string;
  /** `-c`: this file instead of looking in `dir` (relative to `cwd`); its format is its extension's. */
  configFile?: string;
  /** `-o key=<json>`, applied in order after the files. */
  overrides?: string[];
  cwd?: string;
}

export interface ProjectConfig {
  config: JsonObject;
  /** The files read, in the order they were laid over each other. */
  files: string[];
}

export async function loadProjectConfig(options: LoadProjectConfigOptions): Promise<ProjectConfig> {
  const overrides = (options.overrides ?? []).map(parseOverride);
  if (options.namespace !== undefined && !/^[A-Za-z0-9_-]+$/.test(options.namespace)) {
    throw new UsageError(`a namespace is letters, digits, "-" and "_", not "${options.namespace}"`);
  }
  const cwd = options.cwd ?? process.cwd();
  const files: string[] = [];
  if (options.configFile !== undefined) {
    const file = options.configFile;
    const ext = path.extname(file).slice(1).toLowerCase();
    if (!FORMATS[ext]) throw new UsageError(`-c ${file}: a config file ends in .yaml, .yml, .toml or .json`);
    files.push(file);
    // The overlay of `-c deploy/game.yaml` for namespace prod is deploy/game.prod.* (rivet.prod.* for rivet.yaml).
    if (options.namespace !== undefined) {
      const stem = path.basename(file, path.extname(file));
      const overlay = await findOne(path.resolve(cwd, path.dirname(file)), path.dirname(file), `${stem}.${options.namespace}`);
      if (overlay) files.push(overlay);
    }
  } else {
    const dir = options.dir;
    const abs = path.resolve(cwd, dir);
    const stems = ['rivet', 'rivet.version'];
    if (options.namespace !== undefined) stems.push(`rivet.${options.namespace}`, `rivet.version.${options.namespace}`);
    const found: (string | undefined)[] = [];
    for (const stem of stems) found.push(await findOne(abs, dir, stem));
    if (!found[0] && !found[1]) {
      throw new UsageError(
        `no Rivet config in ${dir}: looked for ${EXTENSIONS.map((e) => `rivet.${e}`).join(', ')}`,
        'run it in the project folder, or name the file with -c <file>',
      );
    }
    for (const f of found) if (f) files.push(f);
  }

  const config: JsonObject = {};
  for (const file of files) {
    const text = await readText(path.resolve(cwd, file), file);
    const format = FORMATS[path.extname(file).slice(1).toLowerCase()]!;
    mergeConfig(config, parseConfigText(text, format, file));
  }
  for (const { path: keys, value } of overrides) setPath(config, keys, value);
  return { config, files };
}

/** The one file named `<stem>.<yaml|yml|toml|json>` in the folder, or undefined; more than one is an error. */
async function findOne(abs: string, shown: string, stem: string): Promise<string | undefined> {
  let names: string[];
  try {
    names = await fs.readdir(abs);
  } catch (err) {
    throw new UsageError(`cannot read the folder ${shown}: ${describeFsError(err)}`);
  }
  const matches = EXTENSIONS.map((ext) => `${stem}.${ext}`).filter((name) => names.includes(name));
  if (matches.length > 1) {
    throw new UsageError(`more than one Rivet config in ${shown}: ${matches.join(', ')}`, 'keep one of them, or name one with -c <file>');
  }
  return matches[0] === undefined ? undefined : path.join(shown, matches[0]);
}

async function readText(abs: string, shown: string): Promise<string> {
  try {
    // A UTF-8 byte order mark is skipped, as the config-rs fork does (its "BOM sniffing").
    return (await fs.readFile(abs, 'utf8')).replace(/^\uFEFF/, '');
  } catch (err) {
    throw new UsageError(`cannot read ${shown}: ${describeFsError(err)}`);
  }
}

/**
 * A config file's text as a JSON object. Integers beyond 2^53 are refused with their line: a JavaScript number
 * would round them silently, and nothing in a Rivet config (ports, player counts, milliseconds) comes near them.
 */
export function parseConfigText(text: string, format: ConfigFormat, file: string): JsonObject {
  let value: JsonValue;
  if (format === 'json') {
    const read = readJson(text);
    if ('reason' in read) throw atOffset(file, text, read.offset, read.reason);
    value = read.value;
  } else if (format === 'toml') {
    value = fromToml(text, file);
  } else {
    value = fromYaml(text, file);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new UsageError(`${file}: the top level must be a mapping of keys to values, not ${describe(value)}`);
  }
  return value;
}

function fromToml(text: string, file: string): JsonValue {
  let table: unknown;
  try {
    // smol-toml refuses an integer a number cannot hold exactly ("cannot be represented losslessly") with its line.
    table = parseToml(text);
  } catch (err) {
    if (err instanceof TomlError) {
      const reason = err.message.split('\n')[0]!.replace(/^Invalid TOML document: /, '');
      throw new UsageError(`${file}:${err.line}:${err.column}: ${reason}`);
    }
    throw err;
  }
  return toJson(table, file, []);
}

function fromYaml(text: string, file: string): JsonValue {
  const lines = new LineCounter();
  // YAML 1.2's core schema (no dates, no yes/no booleans), as yaml-rust2 under config-rs reads; integers as BigInt so
  // that a big one can be seen before it is rounded.
  const doc = parseDocument(text, { intAsBigInt: true, lineCounter: lines, prettyErrors: true });
  const problem = doc.errors[0] ?? doc.warnings[0];
  if (problem) {
    const at = problem.linePos?.[0];
    const reason = problem.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
    throw new UsageError(at ? `${file}:${at.line}:${at.col}: ${reason}` : `${file}: ${reason}`);
  }
  const refuse = (offset: number | undefined, reason: string): never => {
    const at = lines.linePos(offset ?? 0);
    throw new UsageError(`${file}:${at.line}:${at.col}: ${reason}`);
  };
  visit(doc, {
    Pair(_, pair) {
      if (isPair(pair) && pair.key !== null && !isScalar(pair.key)) {
        refuse((pair.key as { range?: number[] }).range?.[0], 'a mapping key must be a plain value, not a list or mapping');
      }
    },
    Scalar(_, node) {
      const v = node.value;
      if (typeof v === 'bigint' && (v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER))) {
        refuse(node.range?.[0], `integer ${v} is beyond 2^53 and would lose precision; write it as a string`);
      }
      if (typeof v === 'number' && !Number.isFinite(v)) refuse(node.range?.[0], `${node.source ?? v} is not a number JSON can hold`);
      if (v !== null && !['string', 'number', 'bigint', 'boolean'].includes(typeof v)) {
        refuse(node.range?.[0], `${node.tag ?? 'this tag'} is not a JSON value; write a string`);
      }
    },
    Map(_, node) {
      if (node.tag && node.tag !== 'tag:yaml.org,2002:map') refuse(node.range?.[0], `${node.tag} is not a JSON value; write a mapping`);
    },
    Seq(_, node) {
      if (node.tag && node.tag !== 'tag:yaml.org,2002:seq') refuse(node.range?.[0], `${node.tag} is not a JSON value; write a list`);
    },
  });
  let js: unknown;
  try {
    js = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    throw new UsageError(`${file}: ${(err as Error).message}`);
  }
  // An empty file (or only comments) is an empty config, as config-rs reads zero documents.
  return js === null && !(isMap(doc.contents) || isSeq(doc.contents) || isScalar(doc.contents)) ? {} : toJson(js, file, []);
}

/** A parser's output as plain JSON: TOML dates as their TOML text (as config-rs does), safe BigInts as numbers. */
function toJson(value: unknown, file: string, at: string[]): JsonValue {
  const where = () => `${file}: ${at.join('.') || 'the top level'}`;
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new UsageError(`${where()} is ${value}, which JSON cannot hold`);
    return value;
  }
  if (typeof value === 'bigint') {
    if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER)) {
      throw new UsageError(`${where()}: integer ${value} is beyond 2^53 and would lose precision; write it as a string`);
    }
    return Number(value);
  }
  if (value instanceof TomlDate) return value.toISOString();
  if (Array.isArray(value)) return value.map((v, i) => toJson(v, file, [...at, String(i)]));
  const proto = typeof value === 'object' ? Object.getPrototypeOf(value) : undefined;
  if (proto === Object.prototype || proto === null) {
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(value as object)) setOwn(out, k, toJson(v, file, [...at, k]));
    return out;
  }
  throw new UsageError(`${where()} is not a JSON value (${Object.prototype.toString.call(value)})`);
}

/**
 * Lays `overlay` over `base` in place, as config-rs does: mappings merged key by key, anything else (a list, a
 * scalar, null) replaces. A mapping laid over a scalar or a list replaces it.
 */
export function mergeConfig(base: JsonObject, overlay: JsonObject): JsonObject {
  for (const [key, value] of Object.entries(overlay)) mergeKey(base, key, value);
  return base;
}

function mergeKey(target: JsonObject, key: string, value: JsonValue): void {
  if (isObject(value)) {
    let below = Object.hasOwn(target, key) ? target[key] : undefined;
    if (!isObject(below)) {
      below = {};
      setOwn(target, key, below);
    }
    mergeConfig(below, value);
  } else {
    setOwn(target, key, structuredClone(value));
  }
}

/** Sets a dotted path, creating (or replacing non-mapping) parents; a mapping value is merged, as config-rs's `set_override`. */
function setPath(config: JsonObject, keys: string[], value: JsonValue): void {
  let target = config;
  for (const key of keys.slice(0, -1)) {
    let next = Object.hasOwn(target, key) ? target[key] : undefined;
    if (!isObject(next)) {
      next = {};
      setOwn(target, key, next);
    }
    target = next;
  }
  mergeKey(target, keys[keys.length - 1]!, value);
}

export interface ConfigOverride {
  path: string[];
  value: JsonValue;
}

/** `-o matchmaker.max_players=16`: a dotted path and a JSON value. */
export function parseOverride(arg: string): ConfigOverride {
  const eq = arg.indexOf('=');
  const hint = `e.g. -o matchmaker.max_players=16, or -o 'matchmaker.docker.image_id="<build id>"' (strings in double quotes)`;
  if (eq < 0) throw new UsageError(`-o ${arg}: an override is key=<json>`, hint);
  const key = arg.slice(0, eq);
  const keys = key.split('.');
  if (keys.some((k) => k === '')) throw new UsageError(`-o ${arg}: "${key}" is not a dotted key path`, hint);
  if (/[[\]]/.test(key)) throw new UsageError(`-o ${arg}: list indexes ([n]) are not supported; set the whole list`, hint);
  const read = readJson(arg.slice(eq + 1));
  if ('reason' in read) throw new UsageError(`-o ${arg}: the value is not JSON (${read.reason})`, hint);
  return { path: keys, value: read.value };
}

/**
 * JSON.parse, after a scan that finds where the text goes wrong (Node 20's messages do not always say) and any
 * integer beyond 2^53, which JSON.parse would round without a word.
 */
function readJson(text: string): { value: JsonValue } | { offset: number; reason: string } {
  const failure = scanJson(text);
  if (failure) return failure;
  return { value: JSON.parse(text) as JsonValue };
}

function scanJson(text: string): { offset: number; reason: string } | undefined {
  let i = 0;
  class Stop {
    constructor(readonly offset: number, readonly reason: string) {}
  }
  const fail = (reason: string, at = i): never => {
    throw new Stop(at, reason);
  };
  const unexpected = (): never => fail(i >= text.length ? 'unexpected end of the text' : `unexpected ${JSON.stringify(text[i])}`);
  const space = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const expect = (c: string) => (text[i] === c ? i++ : fail(`expected '${c}'${i >= text.length ? ' before the end' : ''}`));
  const string = () => {
    i++;
    for (;;) {
      if (i >= text.length) fail('unterminated string');
      const c = text[i]!;
      if (c === '"') return void i++;
      if (c === '\\') {
        if ('"\\/bfnrt'.includes(text[i + 1] ?? 'x')) i += 2;
        else if (text[i + 1] === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) i += 6;
        else fail('bad escape in a string');
      } else if (c < ' ') {
        fail('a control character (a line break?) inside a string');
      } else i++;
    }
  };
  const NUMBER = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;
  const value = (depth: number): void => {
    if (depth > 1000) fail('nested too deeply');
    space();
    const c = text[i];
    if (c === '{' || c === '[') {
      const close = c === '{' ? '}' : ']';
      i++;
      space();
      if (text[i] === close) return void i++;
      for (;;) {
        space();
        if (c === '{') {
          if (text[i] !== '"') fail('expected a key in double quotes');
          string();
          space();
          expect(':');
        }
        value(depth + 1);
        space();
        if (text[i] === ',') i++;
        else if (text[i] === close) return void i++;
        else fail(`expected ',' or '${close}'`);
      }
    }
    if (c === '"') return string();
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text);
    if (m) {
      const n = Number(m[0]);
      if (!Number.isFinite(n)) fail(`${m[0]} is too large for a number`);
      if (!m[1] && !m[2] && !Number.isSafeInteger(n)) fail(`integer ${m[0]} is beyond 2^53 and would lose precision; write it as a string`);
      i += m[0].length;
      return;
    }
    for (const word of ['true', 'false', 'null']) if (text.startsWith(word, i)) return void (i += word.length);
    unexpected();
  };
  try {
    value(0);
    space();
    if (i < text.length) fail('unexpected text after the end of the JSON value');
    return undefined;
  } catch (err) {
    if (err instanceof Stop) return { offset: err.offset, reason: err.reason };
    throw err;
  }
}

function atOffset(file: string, text: string, offset: number, reason: string): UsageError {
  const before = text.slice(0, offset).split('\n');
  return new UsageError(`${file}:${before.length}:${before[before.length - 1]!.length + 1}: ${reason}`);
}

export type DockerSource = {
  /** Where the block is: `matchmaker.docker` or `matchmaker.game_modes.<name>.docker`. */
  path: string;
  /** The game mode of a game mode's block. */
  gameMode?: string;
} & (
  | { kind: 'image_id'; imageId: string }
  | { kind: 'dockerfile'; dockerfile: string; buildArgs: Record<string, string> }
  | { kind: 'image'; image: string }
  /** A game mode's block naming none of these: it runs the top-level block's image. */
  | { kind: 'top_level' }
  /** A game mode's block naming none of these with no top-level block: no image (the service will refuse it). */
  | { kind: 'none' }
);

/**
 * Every docker block and what `deploy` must do for it, in Rivet's order of preference (cli/src/commands/deploy.rs,
 * `build_and_push_image`): an `image_id` is kept, else the `dockerfile` is built, else the local `image` is pushed,
 * else a game mode's block gets the top-level image id.
 */
export function dockerSources(config: JsonObject): DockerSource[] {
  const matchmaker = config.matchmaker;
  if (matchmaker === undefined || matchmaker === null) return [];
  if (!isObject(matchmaker)) throw new UsageError(`matchmaker must be a mapping, not ${describe(matchmaker)}`);
  const sources: DockerSource[] = [];
  const top = matchmaker.docker;
  const hasTop = isObject(top);
  if (top !== undefined && top !== null) {
    const source = dockerSource(top, 'matchmaker.docker');
    sources.push(source ?? { path: 'matchmaker.docker', kind: 'none' });
  }
  const modes = matchmaker.game_modes;
  if (modes !== undefined && modes !== null) {
    if (!isObject(modes)) throw new UsageError(`matchmaker.game_modes must be a mapping, not ${describe(modes)}`);
    for (const [name, mode] of Object.entries(modes)) {
      if (mode === null) continue;
      if (!isObject(mode)) throw new UsageError(`matchmaker.game_modes.${name} must be a mapping, not ${describe(mode)}`);
      if (mode.docker === undefined || mode.docker === null) continue;
      const where = `matchmaker.game_modes.${name}.docker`;
      const source = dockerSource(mode.docker, where);
      sources.push({ ...(source ?? { path: where, kind: hasTop ? 'top_level' : 'none' }), gameMode: name });
    }
  }
  return sources;
}

function dockerSource(block: JsonValue, where: string): DockerSource | undefined {
  if (!isObject(block)) throw new UsageError(`${where} must be a mapping, not ${describe(block)}`);
  const text = (key: string): string | undefined => {
    const v = block[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string' || v === '') throw new UsageError(`${where}.${key} must be a non-empty string, not ${describe(v)}`);
    return v;
  };
  const imageId = text('image_id');
  if (imageId !== undefined) return { path: where, kind: 'image_id', imageId };
  const dockerfile = text('dockerfile');
  if (dockerfile !== undefined) {
    const buildArgs: Record<string, string> = {};
    const args = block.build_args;
    if (args !== undefined && args !== null) {
      if (!isObject(args)) throw new UsageError(`${where}.build_args must be a mapping of names to values, not ${describe(args)}`);
      for (const [k, v] of Object.entries(args)) {
        if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') {
          throw new UsageError(`${where}.build_args.${k} must be a string, not ${describe(v)}`);
        }
        setOwn(buildArgs as JsonObject, k, String(v));
      }
    }
    return { path: where, kind: 'dockerfile', dockerfile, buildArgs };
  }
  const image = text('image');
  if (image !== undefined) return { path: where, kind: 'image', image };
  return undefined;
}

function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An own property even for a key named `__proto__`, which plain assignment would turn into a prototype. */
function setOwn(target: JsonObject, key: string, value: JsonValue): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function describe(value: JsonValue | undefined): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return JSON.stringify(value);
}
