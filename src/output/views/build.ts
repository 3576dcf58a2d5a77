// The tables of builds (`build list`, `emulator builds`); what `build push` prints is in push.ts, which does not load
// the table renderer.
import type { BuildSummary, EmulatorBuild } from '../../api/types.js';
import { formatBytes, formatTime } from '../format.js';
import { formatTable } from '../table.js';
import { fit, paint, timeStyle, type ViewOptions } from './options.js';

/**
 * `emulator builds`: a row per build, newest first. Nothing is cut, since builds of one game differ at the end of
 * their tags and names: the build id and the tag stay; the hash, the time, the size, the state and then the name
 * are left out when the row is too wide (and come back, the name first, when they fit in the room the others
 * left). Scripts get every column, the whole hash and the size in bytes.
 */
export function formatBuilds(builds: readonly EmulatorBuild[], o: ViewOptions & { wide?: boolean }): string {
  if (o.tty && builds.length === 0) return fit(paint(o).dim('No builds yet: push one with `gamehost build push`.'), o) + '\n';
  const rows = builds.map((b) => [
    b.build_id,
    b.image_tag,
    b.display_name,
    o.tty ? formatBytes(b.content_length) : b.content_length,
    b.complete ? 'complete' : 'uploading',
    formatTime(b.create_ts, timeStyle(o)),
    // A terminal shows the start of the hash, as git shows commits; scripts get all of it.
    b.sha256 === null ? '-' : o.tty ? b.sha256.slice(0, 12) : b.sha256,
  ]);
  const head = ['BUILD', 'TAG', 'NAME', 'SIZE', 'STATE', 'CREATED', 'SHA-256'];
  return formatTable({ head, rows, right: [3], keep: [0, 1], shrink: [], drop: [6, 5, 3, 4, 2] }, o);
}

/**
 * `build list`: the service's builds, newest first, as `emulator builds` shows the emulator's. The service's build
 * summary has no image tag field: the tag is its `image_tag` tag when it has one. Anything the spec allows may
 * arrive, so a missing field is a `-`, never a crash.
 */
export function formatBuildSummaries(builds: readonly BuildSummary[], o: ViewOptions & { wide?: boolean }): string {
  if (o.tty && builds.length === 0) return fit(paint(o).dim('No builds yet: push one with `gamehost build push`.'), o) + '\n';
  const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : '-');
  const rows = builds.map((b) => [
    text(b?.build_id),
    text(b?.tags?.image_tag),
    text(b?.display_name),
    typeof b?.content_length !== 'number' ? '-' : o.tty ? formatBytes(b.content_length) : b.content_length,
    b?.complete === true ? 'complete' : b?.complete === false ? 'uploading' : '-',
    typeof b?.create_ts === 'string' ? formatTime(b.create_ts, timeStyle(o)) : '-',
  ]);
  const head = ['BUILD', 'TAG', 'NAME', 'SIZE', 'STATE', 'CREATED'];
  return formatTable({ head, rows, right: [3], keep: [0, 1], shrink: [], drop: [5, 3, 4, 2] }, o);
}
