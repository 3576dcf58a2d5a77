// The builds a deploy pushes: a local image of the Docker daemon (`docker.image`), or one the daemon builds from the
// project's Dockerfile (`docker.dockerfile`), each exported and pushed as `build push --image` pushes it.
import path from 'node:path';
import type { ApiClient } from '../api/client.js';
import type { DockerSource } from '../config/rivet-project.js';
import type { Context } from '../context.js';

export interface SourceOptions {
  /** The version's name: each build is named after it, as `rivet deploy` names them. */
  displayName: string;
  buildArgs: Record<string, string>;
  concurrency: number;
  /** The folder the Dockerfile and its context are relative to (the config file's). */
  configDir: string;
}

/** Pushes the image of a docker block that names `image` or `dockerfile`; answers its build id. */
export async function pushDockerSource(ctx: Context, api: ApiClient, s: Extract<DockerSource, { kind: 'image' | 'dockerfile' }>, o: SourceOptions): Promise<string> {
  const [{ prepareInput }, { pushSession }, { progressMode }, { localDocker, buildDockerfile }] = await Promise.all([
    import('../upload/input.js'),
    import('../upload/session.js'),
    import('../upload/progress.js'),
    import('../upload/docker.js'),
  ]);
  const started = performance.now();
  let image: string;
  if (s.kind === 'image') image = s.image;
  else {
    const docker = await localDocker(ctx.env);
    try {
      const dockerfile = path.resolve(o.configDir, s.dockerfile);
      ctx.info(`Building ${path.relative(ctx.cwd, dockerfile) || s.dockerfile} for ${s.path}…`);
      image = await buildDockerfile({
        contextDir: path.dirname(dockerfile),
        dockerfile: path.basename(dockerfile),
        buildArgs: { ...s.buildArgs, ...o.buildArgs },
        apiEndpoint: (await ctx.target()).endpoint,
        docker,
        signal: ctx.signal,
        onLine: (line) => ctx.verbose(line),
      });
    } finally {
      await docker.close();
    }
  }
  // One build per block, tagged after the version and where the block is, as `rivet deploy` tags its pushes.
  const tag = `deploy:${(o.displayName + '-' + (s.gameMode ?? 'top')).toLowerCase().replace(/[^0-9a-z_-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 100) || 'build'}`;
  const input = await prepareInput(ctx, image, { dockerImage: true });
  try {
    const session = { tag, name: o.displayName, contentType: 'binary/octet-stream', concurrency: o.concurrency, stallMs: 60_000, resume: false, progress: progressMode(ctx, 'auto'), kind: input.kind, compression: input.compression };
    const result = await pushSession(ctx, api, session, input, started);
    return result.build_id;
  } finally {
    await input.cleanup();
  }
}
