// Preloaded with `--import` by the start-up test: appends the location of every module the
// process loads to the file named by LOADS_FILE, a line each. ES modules (and CommonJS ones they
// import) through a load hook; `require` calls (createRequire, CommonJS inside packages) through
// Module._load, which Node 20's hooks do not see.
import { appendFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';

const file = process.env.LOADS_FILE;
if (file) {
  register(new URL('./record-loads-hooks.mjs', import.meta.url), { data: { file } });
  const Module = createRequire(import.meta.url)('node:module');
  const load = Module._load;
  Module._load = function recordLoad(request, parent, isMain) {
    try {
      appendFileSync(file, `${Module._resolveFilename(request, parent, isMain)}\n`);
    } catch {
      // A built-in or a request that will fail anyway: the real load says what went wrong.
    }
    return load.call(this, request, parent, isMain);
  };
}
