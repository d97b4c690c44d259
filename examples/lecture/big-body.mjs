// Prints a POST /digest whose JSON body is about N bytes (default 70,000), for `agent raw -`:
//   node examples/lecture/big-body.mjs 70000 | pnpm agent raw -
// The toy API reads at most 64 KiB (65,536 bytes) of body; a bigger one is refused with 413.
const size = Number(process.argv[2] ?? 70_000);
if (!Number.isInteger(size) || size < 30 || size > 120_000) {
  console.error(`big-body.mjs: N must be a whole number of bytes from 30 to 120000, got '${process.argv[2]}'`);
  process.exit(2);
}
const body = JSON.stringify({ date: '2026-06-10', pad: 'x'.repeat(size - 30) });
process.stdout.write(
  'POST /digest HTTP/1.1\r\nHost: {{HOST}}\r\nAuthorization: Bearer {{API_KEY}}\r\n' +
    `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
);
