import { UsageError } from '../errors.js';

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK_HOSTS.has(hostname) || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}

/**
 * Normalises an endpoint as the official CLI does: no scheme means https (http for loopback), no trailing
 * slash. A plain-http endpoint off this machine would send tokens in clear, so it needs `allowInsecure`.
 */
export function normalizeEndpoint(raw: string, allowInsecure = false): string {
  let value = raw.trim();
  if (!value) throw new UsageError('--endpoint is empty');
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) {
    const host = value.replace(/^\[([^\]]+)\].*$/, '[$1]').split(/[:/]/)[0]!;
    value = (isLoopbackHost(host) || value.startsWith('[::1]') ? 'http://' : 'https://') + value;
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`--endpoint is not a valid URL: ${raw}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`--endpoint must be an http(s) URL, not ${url.protocol.replace(':', '')}: ${raw}`);
  }
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname) && !allowInsecure) {
    throw new UsageError(
      `refusing plain-http endpoint ${url.host}: tokens would travel unencrypted`,
      'use https://, or pass --insecure-http if you really mean it',
    );
  }
  return (url.origin + url.pathname).replace(/\/+$/, '');
}
