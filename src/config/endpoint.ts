import { UsageError } from '../errors.js';

/** 127.0.0.0/8, localhost and ::1 (with or without brackets): this machine, where `gamehost emulator serve` listens. */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/** A DNS name (underscores allowed, as container names have them), an IPv4 address, or a bracketed IPv6 address. */
const HOST = /^(?:[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?)*\.?|\[[0-9a-f:.]+\])$/i;

/**
 * Normalises an endpoint as the official CLI does: no scheme means https (http for loopback), no trailing
 * slash. A plain-http endpoint off this machine would send tokens in clear, so it needs `allowInsecure`.
 */
export function normalizeEndpoint(raw: string, allowInsecure = false): string {
  let value = raw.trim();
  if (!value) throw new UsageError('--endpoint is empty');
  // `ht!tp://host` is a mistyped scheme, not a host named `ht!tp` with the rest as its path.
  const scheme = /^([^/?#]*):\/\//.exec(value)?.[1];
  if (scheme !== undefined && !/^[a-z][a-z0-9+.-]*$/i.test(scheme)) {
    throw new UsageError(`--endpoint is not a valid URL: ${raw} ("${scheme}" is not a scheme)`, 'e.g. https://api.rivet.gg or 127.0.0.1:6420');
  }
  if (scheme === undefined) {
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
  if (!HOST.test(url.hostname) || url.username || url.password || url.search || url.hash) {
    throw new UsageError(`--endpoint is not a valid URL: ${raw} (an endpoint is scheme://host[:port][/path])`, 'e.g. https://api.rivet.gg or 127.0.0.1:6420');
  }
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname) && !allowInsecure) {
    throw new UsageError(
      `refusing plain-http endpoint ${url.host}: tokens would travel unencrypted`,
      'use https://, or pass --insecure-http if you really mean it',
    );
  }
  return (url.origin + url.pathname).replace(/\/+$/, '');
}
