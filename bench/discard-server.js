// A local stand-in for the service's upload path that throws bytes away: build creation answers 100 MiB parts
// pointing back here, parts and curl's PUT are read and dropped, completion answers {}. Prints its port.
import http from 'node:http';
import { randomUUID } from 'node:crypto';

const PART = 100 * 1024 * 1024;
const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  const origin = `http://${req.headers.host}`;
  if (req.method === 'POST' && /\/cloud\/games\/[^/]+\/builds$/.test(url.pathname)) {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const size = JSON.parse(body).image_file.content_length;
      const parts = [];
      for (let offset = 0, n = 1; offset < size; offset += PART, n++) {
        parts.push({ path: 'image.tar', url: `${origin}/put/${n}`, byte_offset: offset, content_length: Math.min(PART, size - offset) });
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ build_id: randomUUID(), upload_id: randomUUID(), image_presigned_requests: parts }));
    });
    return;
  }
  req.on('data', () => {});
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(req.method === 'POST' ? '{}' : '');
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
