import { describe, expect, it } from 'vitest';
import { normalizeEndpoint } from '../../src/config/endpoint.js';

describe('normalizeEndpoint', () => {
  it.each([
    ['api.rivet.gg', 'https://api.rivet.gg'],
    ['https://api.rivet.gg/', 'https://api.rivet.gg'],
    ['127.0.0.1:6420', 'http://127.0.0.1:6420'],
    ['localhost:6420/', 'http://localhost:6420'],
    ['[::1]:6420', 'http://[::1]:6420'],
    ['http://127.0.0.1:6420///', 'http://127.0.0.1:6420'],
    ['https://example.com/base/', 'https://example.com/base'],
  ])('%s -> %s', (raw, want) => expect(normalizeEndpoint(raw)).toBe(want));

  it('refuses plain http off this machine unless allowed', () => {
    expect(() => normalizeEndpoint('http://api.example.com')).toThrow(/plain-http/);
    expect(normalizeEndpoint('http://api.example.com', true)).toBe('http://api.example.com');
  });

  it('refuses other schemes and garbage', () => {
    expect(() => normalizeEndpoint('ftp://x')).toThrow(/http\(s\)/);
    expect(() => normalizeEndpoint('  ')).toThrow(/empty/);
    expect(() => normalizeEndpoint('https://exa mple.com')).toThrow(/not a valid URL/);
    // A mistyped scheme is not a host named after it: `https://ht!tp//::` is never what was meant.
    expect(() => normalizeEndpoint('ht!tp://::')).toThrow(/not a valid URL: ht!tp:\/\/:: \("ht!tp" is not a scheme\)/);
    expect(() => normalizeEndpoint('ht!tp')).toThrow(/not a valid URL/);
    expect(() => normalizeEndpoint('https://user:pw@api.example.com')).toThrow(/not a valid URL/);
    expect(() => normalizeEndpoint('https://api.example.com/?x=1')).toThrow(/not a valid URL/);
    expect(normalizeEndpoint('https://game_api.internal:8443/base')).toBe('https://game_api.internal:8443/base');
  });
});
