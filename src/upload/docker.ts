// The local Docker daemon as a source of builds: an image exported as a docker-archive tar (`build push --image`),
// and a Dockerfile built into an image (for `deploy`). Both through the Engine API the emulator's runner already
// speaks (no docker CLI, no BuildKit: the legacy builder works offline). Nothing here prints: progress goes to the
// caller's callback, and every failure is one DockerError line.
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { Env } from '../shared/io.js';
import { DockerError, ExitCode, UsageError } from '../errors.js';
import type { DockerEngine } from '../emulator/runtime/engine-api.js';

/** The daemon the docker CLI would use (DOCKER_HOST, the current context, the default socket), once it answers. */
export async function localDocker(env: Env): Promise<DockerEngine> {
  const { connectDocker } = await import('../emulator/runtime/docker.js');
  try {
    return await connectDocker(env);
  } catch (err) {
    // connectDocker's own line: "no Docker daemon answers at /var/run/docker.sock (ENOENT): start one, or set DOCKER_HOST".
    throw new DockerError((err as Error).message, ExitCode.UNAVAILABLE);
  }
}

/** What an image export wrote: the tar's length, and the image's ID as the daemon named it. */
export interface ExportedImage {
  bytes: number;
  imageId: string;
}

/**
 * `docker save <image> -o <file>` through the Engine API (GET /images/{name}/get), streamed to `file`. The tar's
 * length is not known before it is written (the image's Size counts its layers unpacked, not the archive's
 * headers and padding), and the upload needs it up front: so the export lands in a file first, as stdin does.
 */
export async function exportImage(docker: DockerEngine, image: string, file: string, signal?: AbortSignal): Promise<ExportedImage> {
  const inspect = await docker.inspectImage(image).catch((err: unknown) => {
    throw new DockerError(`the Docker daemon at ${docker.where} failed to inspect '${image}': ${(err as Error).message}`);
  });
  if (!inspect) throw new DockerError(`no image '${image}' in the local Docker daemon`, ExitCode.NOT_FOUND);
  // By the name given, as `docker save` does: the archive's manifest then names it (RepoTags), which an export by ID leaves empty.
  const body = await docker.exportImage(image, signal);
  // Each chunk written before the next is read, not pipeline() into a WriteStream: that paused the daemon's answer
  // at every 16 KiB, and each pause cost about 0.1 s (a 100 MiB image took 90-190 s, against 1.4 s this way).
  const out = await fs.promises.open(file, 'w', 0o600);
  let bytes = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      await out.write(chunk);
      bytes += chunk.length;
    }
  } finally {
    await out.close();
    body.destroy();
  }
  return { bytes, imageId: inspect.Id };
}

/** What to build: the context directory, its Dockerfile (relative to it), build arguments and the tag to give. */
export interface DockerfileBuild {
  contextDir: string;
  /** Relative to contextDir; default `Dockerfile`. */
  dockerfile?: string;
  buildArgs?: Record<string, string>;
  /** `name:tag` for the image, as `docker build -t`; none leaves it untagged (addressed by the ID returned). */
  tag?: string;
  /** The service's endpoint, given to the build as the build arg RIVET_API_ENDPOINT (as `rivet deploy` does). */
  apiEndpoint?: string;
  docker: DockerEngine;
  signal?: AbortSignal;
  /** Each line of the builder's output (`Step 1/3 : FROM scratch`), without its newline. */
  onLine?: (line: string) => void;
}

/**
 * `docker build`: the context folder tarred (minus what .dockerignore names) and streamed to the daemon's legacy
 * builder; answers the image ID. Build args named RIVET_* are the service's own and refused, as the Rivet CLI
 * refuses them; RIVET_API_ENDPOINT is added when `apiEndpoint` is given.
 */
export async function buildDockerfile(b: DockerfileBuild): Promise<string> {
  const dockerfile = b.dockerfile ?? 'Dockerfile';
  const args = { ...b.buildArgs };
  for (const name of Object.keys(args)) {
    if (/^RIVET_/i.test(name)) throw new UsageError(`build arg ${name}: RIVET_* build args are reserved for the service`, 'name it without the RIVET_ prefix');
  }
  if (b.apiEndpoint !== undefined) args.RIVET_API_ENDPOINT = b.apiEndpoint;

  const contextDir = path.resolve(b.contextDir);
  const dockerfilePath = path.resolve(contextDir, dockerfile);
  const inContext = path.relative(contextDir, dockerfilePath);
  if (inContext.startsWith('..') || path.isAbsolute(inContext)) throw new UsageError(`${dockerfile}: the Dockerfile must be inside the build context ${b.contextDir}`);
  if (!fs.statSync(dockerfilePath, { throwIfNoEntry: false })?.isFile()) throw new UsageError(`${dockerfile}: no such file in ${b.contextDir}`);

  const ignored = dockerignore(contextDir);
  const dockerfileName = inContext.split(path.sep).join('/');
  const tar = await import('tar');
  // Streamed as it is made: a context of gigabytes costs no disk and no memory beyond the pipe's.
  const context = tar.create(
    {
      cwd: contextDir,
      portable: true,
      // The Dockerfile and .dockerignore always go, as the docker CLI sends them (the daemon reads the first).
      filter: (p) => {
        const rel = p.replace(/^\.\//, '');
        return rel === dockerfileName || rel === '.dockerignore' || !ignored(rel);
      },
    },
    fs.readdirSync(contextDir),
  );
  const lines = new LineBuffer(b.onLine);
  try {
    return await b.docker.buildImage(Readable.from(context), { tag: b.tag, dockerfile: dockerfileName, buildArgs: args, signal: b.signal }, (text) => lines.push(text));
  } catch (err) {
    if (b.signal?.aborted) throw b.signal.reason;
    // The daemon's own words (`dockerfile parse error line 1: unknown instruction: FORM`, `COPY failed: …`), on one line.
    const message = ((err as Error).message ?? String(err)).replace(/\s*\n\s*/g, ' ').trim();
    throw new DockerError(`docker build of ${path.join(b.contextDir, dockerfile)} failed: ${message}`);
  } finally {
    lines.end();
    context.destroy();
  }
}

/** The builder's `stream` texts cut into lines (it sends `Step 1/2 : FROM scratch` and its `\n` apart). */
class LineBuffer {
  private pending = '';
  constructor(private readonly onLine?: (line: string) => void) {}
  push(text: string): void {
    if (!this.onLine) return;
    const parts = (this.pending + text).split('\n');
    this.pending = parts.pop()!;
    for (const line of parts) this.onLine(line);
  }
  end(): void {
    if (this.pending) this.onLine?.(this.pending);
    this.pending = '';
  }
}

/**
 * Whether a path of the context (relative, `/`-separated) is excluded by its .dockerignore: the docker CLI's rules
 * for the patterns most files hold. Lines are globs relative to the context (`*` and `?` within one path segment,
 * `**` across any number), a leading `/` is dropped, `#` lines are comments, a pattern that names a directory
 * excludes all under it, and `!` makes an exception, the last matching line winning. Not supported: character
 * classes (`[a-z]`), escapes, and re-including a file under a directory already excluded whole (the directory is
 * not walked at all).
 */
export function dockerignore(contextDir: string): (rel: string) => boolean {
  let text: string;
  try {
    text = fs.readFileSync(path.join(contextDir, '.dockerignore'), 'utf8');
  } catch {
    return () => false;
  }
  return ignoreMatcher(text);
}

/** The matcher of a .dockerignore's text (see dockerignore). */
export function ignoreMatcher(text: string): (rel: string) => boolean {
  const rules = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => {
      const exception = l.startsWith('!');
      const pattern = path.posix.normalize((exception ? l.slice(1).trim() : l).replace(/^\/+/, ''));
      return { exception, re: globToRegExp(pattern) };
    })
    .filter((r) => r.re !== undefined);
  return (rel) => {
    let ignored = false;
    for (const r of rules) if (r.re!.test(rel)) ignored = !r.exception;
    return ignored;
  };
}

function globToRegExp(glob: string): RegExp | undefined {
  if (glob === '.' || glob === '') return undefined;
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*' && glob[i + 1] === '*') {
      // `**/` any number of directories (none too); a trailing `**` everything.
      re += glob[i + 2] === '/' ? '(?:.*/)?' : '.*';
      i += glob[i + 2] === '/' ? 2 : 1;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  // The path itself, or anything under it when it is a directory.
  return new RegExp(`^${re}(?:/.*)?$`);
}
