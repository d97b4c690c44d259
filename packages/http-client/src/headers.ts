// Reading a response header that Node may give as a string or a list: the first value counts.
import type { IncomingHttpHeaders } from 'node:http';

export function firstHeader(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}
