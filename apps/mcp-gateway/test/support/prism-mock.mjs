// A mock of an API made from its OpenAPI document by Stoplight Prism, in its own process: it
// validates every request against the spec (parameters with their styles, bodies) and answers
// 422 to one the spec does not allow, else with the spec's examples or generated data.
// Usage: node prism-mock.mjs SPEC_FILE -> prints its base URL on stdout.
// Prism 5.16 throws out of its request handler on a few inputs (issues #2710, #2289 upstream);
// in its own process such a request fails alone instead of taking the test runner with it.
import { createLogger } from '@stoplight/prism-core';
import { getHttpOperationsFromSpec } from '@stoplight/prism-http';
import { createServer } from '@stoplight/prism-http-server';

process.on('uncaughtException', (error) => process.stderr.write(`prism: ${error.stack ?? error}\n`));
const operations = await getHttpOperationsFromSpec(process.argv[2]);
const server = createServer(operations, {
  cors: false,
  components: { logger: createLogger('PRISM', { level: 'silent' }) },
  config: {
    isProxy: false,
    validateRequest: true,
    validateResponse: false,
    // The gateway's upstream key is not under test here; request shapes are.
    checkSecurity: false,
    errors: false,
    upstreamProxy: undefined,
    mock: { dynamic: false },
  },
});
console.log(await server.listen(0, '127.0.0.1'));
