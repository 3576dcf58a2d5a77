// Namespaces for the benches that make more lobbies than one namespace may run (production's lobby_count_max, 128
// by default): made through the emulator's cloud API, each with its public token, and a load that spreads its
// creates over them in turn, as a shared staging emulator's CI jobs each use their own namespace.
import autocannon from 'autocannon';

/** `n` new namespaces of the emulator's game (`info`: what `emulator serve --json` printed): each one's public token. */
export async function namespaceTokens(info, n) {
  const api = async (method, at, body) => {
    const res = await fetch(`${info.endpoint}/cloud/games/${info.game_id}${at}`, {
      method,
      headers: { authorization: `Bearer ${info.tokens.cloud}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} ${at}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  const { namespace } = await api('GET', `/namespaces/${info.namespace_id}`);
  const tokens = [];
  for (let i = 0; i < n; i++) {
    const { namespace_id } = await api('POST', '/namespaces', { display_name: `Bench ${i}`, version_id: namespace.version_id, name_id: `bench-${i}` });
    tokens.push((await api('POST', `/namespaces/${namespace_id}/tokens/public`)).token);
  }
  return tokens;
}

/** Lobby creates on `endpoint` for `duration` s, each with the next of `tokens` (none: no authorization header). */
export function createLoad(endpoint, { tokens, connections, duration }) {
  let next = 0;
  const headers = { 'content-type': 'application/json' };
  return autocannon({
    url: `${endpoint}/matchmaker/lobbies/create`,
    connections,
    duration,
    requests: [
      {
        method: 'POST',
        headers,
        body: JSON.stringify({ game_mode: 'default', region: 'lnd-fra', tags: { map: 'dust' } }),
        setupRequest: (req) => (tokens ? { ...req, headers: { ...headers, authorization: `Bearer ${tokens[next++ % tokens.length]}` } } : req),
      },
    ],
  });
}
