// A local stand-in for the service's upload path that throws bytes away: build creation answers parts pointing
// back here, parts and curl's PUT are read and dropped, completion answers {}. Prints its port.
//   --part-size <bytes>   the layout it hands out (default 100 MiB, the service's)
//   --read-rate <bytes/s> reads each connection no faster than this, as a long network path does
// A build whose tag starts with `refuse` gets part URLs that answer S3's 403 XML at once (a refused first part).
import http from 'node:http';
import { randomUUID } from 'node:crypto';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
};
const PART = arg('--part-size', 100 * 1024 * 1024);
const READ_RATE = arg('--read-rate', 0);
const EXPIRED = '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>';

/** Reads `req` to its end, pausing so that it never goes faster than READ_RATE. */
function drain(req, done) {
  const started = performance.now();
  let bytes = 0;
  req.on('data', (chunk) => {
    bytes += chunk.length;
    if (!READ_RATE) return;
    const ahead = (bytes / READ_RATE) * 1000 - (performance.now() - started);
    if (ahead > 1) {
      req.pause();
      setTimeout(() => req.resume(), ahead);
    }
  });
  req.on('end', done);
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  const origin = `http://${req.headers.host}`;
  if (req.method === 'POST' && /\/cloud\/games\/[^/]+\/builds$/.test(url.pathname)) {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const create = JSON.parse(body);
      const size = create.image_file.content_length;
      const prefix = create.image_tag.startsWith('refuse') ? 'refuse' : 'put';
      const parts = [];
      for (let offset = 0, n = 1; offset < size; offset += PART, n++) {
        parts.push({ path: 'image.tar', url: `${origin}/${prefix}/${n}`, byte_offset: offset, content_length: Math.min(PART, size - offset) });
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ build_id: randomUUID(), upload_id: randomUUID(), image_presigned_requests: parts }));
    });
    return;
  }
  if (url.pathname.startsWith('/refuse/')) {
    res.writeHead(403, { 'content-type': 'application/xml', connection: 'close' });
    res.end(EXPIRED);
    return;
  }
  drain(req, () => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(req.method === 'POST' ? '{}' : '');
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
