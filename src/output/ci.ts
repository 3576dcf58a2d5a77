// CI awareness: which environments are CI (no animations, no prompts), and the GitHub Actions job summary.
import fs from 'node:fs';
import type { BaseContext } from '../base-context.js';
import type { Env } from '../shared/io.js';
import { formatBytes, formatDuration } from './format.js';
import { sanitizeLine } from './sanitize.js';

// The variables CI services set; any of them means no animations and no prompts.
const CI_VARS = ['CI', 'CONTINUOUS_INTEGRATION', 'GITHUB_ACTIONS', 'GITLAB_CI', 'BUILDKITE', 'CIRCLECI', 'JENKINS_URL', 'TF_BUILD', 'TEAMCITY_VERSION', 'BITBUCKET_BUILD_NUMBER', 'CODEBUILD_BUILD_ID', 'TRAVIS', 'DRONE', 'APPVEYOR'];

/** The first CI variable set (not empty, 0 or false), for a message that says why the CLI thinks it runs in CI. */
export function ciVariable(env: Env): string | undefined {
  return CI_VARS.find((name) => {
    const v = env[name];
    return v !== undefined && v !== '' && v !== '0' && v.toLowerCase() !== 'false';
  });
}

export function isCI(env: Env): boolean {
  return ciVariable(env) !== undefined;
}

/** Spinners and redrawn progress lines: only on a terminal stderr, outside CI, and not with --quiet or TERM=dumb. */
export function canAnimate(ctx: BaseContext): boolean {
  return ctx.io.stderr.isTTY === true && !isCI(ctx.env) && !ctx.global.quiet && ctx.env.TERM !== 'dumb';
}

/** What `build push` reports to the job summary. */
export interface PushedBuild {
  build_id: string;
  bytes: number;
  sha256: string;
  duration_ms: number;
}

/** A markdown table cell: no pipes or newlines from the data can break the table. */
const cell = (text: string) => sanitizeLine(text).replace(/\|/g, '\\|');

/**
 * Appends a short markdown summary of a pushed build to $GITHUB_STEP_SUMMARY (set by GitHub Actions); a
 * summary that cannot be written is a warning, never a failed push.
 */
export function appendBuildSummary(ctx: BaseContext, tag: string, build: PushedBuild): void {
  const file = ctx.env.GITHUB_STEP_SUMMARY;
  if (!file) return;
  const text = [
    `### gamehost build push: \`${cell(tag)}\``,
    '',
    '| | |',
    '|---|---|',
    `| Build | \`${cell(build.build_id)}\` |`,
    `| Tag | \`${cell(tag)}\` |`,
    `| Size | ${formatBytes(build.bytes)} (${build.bytes} bytes) |`,
    `| SHA-256 | \`${cell(build.sha256)}\` |`,
    `| Time | ${formatDuration(build.duration_ms)} |`,
    '',
    '',
  ].join('\n');
  appendSummary(ctx, file, text);
}

/** Appends to the job summary; one that cannot be written is a warning, never a failed command. */
function appendSummary(ctx: BaseContext, file: string, text: string): void {
  try {
    fs.appendFileSync(file, text);
  } catch (err) {
    ctx.warn(`could not append to $GITHUB_STEP_SUMMARY (${file}): ${(err as Error).message}`);
  }
}

/** What `deploy` reports to the job summary. */
export interface DeploySummary {
  version_id: string;
  display_name: string;
  namespace: string | null;
  builds: { game_mode: string | null; build_id: string; source: string }[];
}

/** Appends a short markdown summary of a deploy to $GITHUB_STEP_SUMMARY; one that cannot be written is a warning. */
export function appendDeploySummary(ctx: BaseContext, d: DeploySummary): void {
  const file = ctx.env.GITHUB_STEP_SUMMARY;
  if (!file) return;
  const text = [
    `### gamehost deploy: \`${cell(d.display_name)}\`${d.namespace === null ? '' : ` to \`${cell(d.namespace)}\``}`,
    '',
    '| | |',
    '|---|---|',
    `| Version | \`${cell(d.display_name)}\` (\`${cell(d.version_id)}\`) |`,
    `| Namespace | ${d.namespace === null ? 'none (--no-namespace)' : `\`${cell(d.namespace)}\``} |`,
    ...d.builds.map((b) => `| Build${b.game_mode === null ? '' : ` (${cell(b.game_mode)})`} | \`${cell(b.build_id)}\` (${cell(b.source)}) |`),
    '',
    '',
  ].join('\n');
  appendSummary(ctx, file, text);
}

/**
 * Under GitHub Actions, makes `build_id`, `upload_id`, `sha256` and `bytes` step outputs ($GITHUB_OUTPUT), so the next
 * step can use `${{ steps.push.outputs.build_id }}`. A file that cannot be written is a warning, never a failed push.
 */
export function writeStepOutputs(ctx: BaseContext, outputs: Record<string, string>): void {
  const file = ctx.env.GITHUB_OUTPUT;
  if (!file) return;
  // Values are ids and hex digests; a newline in one would forge another output, so it is dropped.
  const text = Object.entries(outputs).map(([k, v]) => `${k}=${v.replace(/[\r\n]/g, '')}\n`).join('');
  try {
    fs.appendFileSync(file, text);
  } catch (err) {
    ctx.warn(`could not append to $GITHUB_OUTPUT (${file}): ${(err as Error).message}`);
  }
}
