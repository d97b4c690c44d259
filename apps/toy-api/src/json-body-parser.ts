// Parses JSON bodies like Fastify does (prototype-poisoning keys refused), but keeps the
// parser's reason, so a 400 says where the JSON broke instead of only that it did.
// A key written twice in one object is refused too: JSON says names SHOULD be unique, and
// parsers disagree on which value wins (JSON.parse keeps the last, others the first), so a
// body that means two things to two programs is an error here, not a guess.
import type { FastifyInstance } from 'fastify';
import { visit } from 'jsonc-parser';
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
      const value = secureJson.parse(text, null, { protoAction: 'error', constructorAction: 'error' });
      const duplicate = firstDuplicateKey(text);
      if (duplicate) {
        done(
          new EnvelopeError(
            'invalid_request_error',
            `body has the key '${duplicate.key}' twice in one object (line ${duplicate.line}, column ${duplicate.column}); ` +
              'send each key once (parsers disagree on which value wins)',
          ),
          undefined,
        );
        return;
      }
      done(null, value);
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

/** The first key repeated within one object, with where its second copy starts (1-based). */
export function firstDuplicateKey(text: string): { key: string; line: number; column: number } | undefined {
  // Cheap exit: with no object holding two keys there is nothing to look for.
  if (!text.includes(',')) return undefined;
  const open: Array<Set<string>> = [];
  let found: { key: string; line: number; column: number } | undefined;
  visit(text, {
    onObjectBegin: () => {
      open.push(new Set());
      return !found;
    },
    onObjectEnd: () => {
      open.pop();
    },
    onObjectProperty: (key, _offset, _length, line, column) => {
      const keys = open[open.length - 1];
      if (!keys || found) return;
      if (keys.has(key)) found = { key, line: line + 1, column: column + 1 };
      keys.add(key);
    },
  });
  return found;
}
