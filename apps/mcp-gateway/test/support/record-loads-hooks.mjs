// The load hook of record-loads.mjs (it runs on the hooks thread): one line per module loaded.
import { appendFileSync } from 'node:fs';

let file = '';

export function initialize(data) {
  file = data.file;
}

export async function load(url, context, nextLoad) {
  appendFileSync(file, `${url}\n`);
  return nextLoad(url, context);
}
