// Where traced servers send their spans during the benchmark: accepts OTLP/HTTP and counts the
// exports and their bytes without parsing them (the sink shares the machine with what is
// measured), so a run can check that tracing was really on.
// Usage: node servers/otlp-sink.mjs -> prints its URL; GET /count -> {exports, bytes}.
import { createServer } from 'node:http';

let exports = 0;
let bytes = 0;
const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/count') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ exports, bytes }));
    return;
  }
  req.on('data', (c) => {
    bytes += c.length;
  });
  req.on('end', () => {
    exports++;
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
server.listen(0, '127.0.0.1', () => console.log(`http://127.0.0.1:${server.address().port}`));
process.once('SIGTERM', () => server.close(() => process.exit(0)));
