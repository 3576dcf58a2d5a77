// Turns what the user named into one file to upload: a file as is, a directory packed into a tar, standard
// input or an image of the local Docker daemon spooled to disk (the service needs the length up front), and LZ4
// compression when asked. Temporary files live in one private directory that cleanup() removes on every exit path.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { BaseContext } from '../base-context.js';
import type { BuildCompression, BuildKind } from '../api/types.js';
import { UsageError } from '../errors.js';
import { compressFileLz4, startsWithLz4Magic } from '../shared/lz4.js';

export interface PreparedInput {
  /** The file whose bytes are uploaded. */
  file: string;
  size: number;
  mtimeMs: number;
  kind: BuildKind;
  compression: BuildCompression;
  /** For messages: what the user named. */
  source: string;
  /** True when `file` is one of ours (a tar, a spool, a compressed copy): never resumable across runs. */
  temporary: boolean;
  cleanup(): Promise<void>;
}

/** docker save tars hold manifest.json; OCI bundles hold config.json and rootfs/. */
export function detectKind(dir: string): BuildKind | undefined {
  if (fs.existsSync(path.join(dir, 'manifest.json'))) return 'docker_image';
  if (fs.existsSync(path.join(dir, 'config.json')) && fs.statSync(path.join(dir, 'rootfs'), { throwIfNoEntry: false })?.isDirectory()) {
    return 'oci_bundle';
  }
  return undefined;
}

export async function prepareInput(
  ctx: BaseContext,
  source: string,
  want: { kind?: BuildKind; compression?: BuildCompression; /** `source` names an image of the local Docker daemon. */ dockerImage?: boolean },
): Promise<PreparedInput> {
  let tempDir: string | undefined;
  const temp = async (name: string) => {
    tempDir ??= await fs.promises.mkdtemp(path.join(ctx.env.TMPDIR || os.tmpdir(), 'gamehost-'));
    return path.join(tempDir, name);
  };
  const cleanup = async () => {
    if (tempDir) await fs.promises.rm(tempDir, { recursive: true, force: true });
  };
  try {
    let file: string;
    let kind = want.kind;
    let temporary = false;
    if (want.dockerImage) {
      const { exportImage, localDocker } = await import('./docker.js');
      const docker = await localDocker(ctx.env);
      try {
        ctx.info(`Exporting ${source} from the Docker daemon…`);
        file = await temp('image.tar');
        await exportImage(docker, source, file, ctx.signal);
      } finally {
        await docker.close();
      }
      kind = 'docker_image';
      temporary = true;
    } else if (source === '-') {
      if (ctx.io.stdin.isTTY) throw new UsageError('the image is - (standard input), but standard input is a terminal', 'pipe the build in: docker save game:v1 | gamehost build push - --tag game:v1');
      ctx.info('Reading the build from standard input…');
      file = await temp('stdin.tar');
      await pipeline(ctx.io.stdin, fs.createWriteStream(file, { mode: 0o600 }), { signal: ctx.signal });
      temporary = true;
    } else {
      const resolved = path.resolve(ctx.cwd, source);
      if (fs.statSync(resolved).isDirectory()) {
        const detected = detectKind(resolved);
        if (!kind && !detected) {
          throw new UsageError(
            `${source}: a directory with neither manifest.json (docker_image) nor config.json and rootfs/ (oci_bundle)`,
            'pass --kind to say which it is',
          );
        }
        kind ??= detected;
        ctx.info(`Packing ${source} into a tar…`);
        file = await temp('build.tar');
        const tar = await import('tar');
        const entries = await fs.promises.readdir(resolved);
        await tar.create({ cwd: resolved, file, portable: true }, entries);
        temporary = true;
      } else {
        file = resolved;
      }
    }

    let compression = want.compression;
    const isLz4 = await startsWithLz4Magic(file);
    if (compression === 'lz4' && !isLz4) {
      ctx.info('Compressing with LZ4…');
      const out = await temp('build.lz4');
      await compressFileLz4(file, out, ctx.signal);
      file = out;
      temporary = true;
    }
    // An LZ4 frame is sent as it is, and said to be one, unless the user chose otherwise.
    compression ??= isLz4 ? 'lz4' : 'none';

    const stat = fs.statSync(file);
    if (stat.size === 0) throw new UsageError(`${source}: the build is empty`);
    return { file, size: stat.size, mtimeMs: stat.mtimeMs, kind: kind ?? 'docker_image', compression, source, temporary, cleanup };
  } catch (err) {
    await cleanup();
    throw err;
  }
}
