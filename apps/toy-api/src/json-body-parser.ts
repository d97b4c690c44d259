// Parses JSON bodies like Fastify does (prototype-poisoning keys refused), but keeps the
// parser's reason, so a 400 says where the JSON broke instead of only that it did.
import type { FastifyInstance } from 'fastify';
import secureJson from 'secure-json-parse';
import { EnvelopeError } from './envelope-error.js';

export function useJsonBodyParser(app: FastifyInstance): void {
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') {
      done(
        new EnvelopeError(
          'invalid_request_error',
          'body is empty but Content-Type is application/json; send a JSON object, or no Content-Type',
        ),
        undefined,
      );
      return;
    }
    try {
      done(null, secureJson.parse(text, null, { protoAction: 'error', constructorAction: 'error' }));
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      done(
        new EnvelopeError(
          'invalid_request_error',
          /forbidden (prototype|constructor)/i.test(message)
            ? 'body refused: it has a __proto__ or constructor.prototype key'
            : `body is not valid JSON: ${message}`,
        ),
        undefined,
      );
    }
  });
}
