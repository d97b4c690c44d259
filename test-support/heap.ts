// Live heap size for the tests that check memory comes back: a full collection first (the gc
// function, exposed at run time), so garbage not yet collected does not count.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Heap in use after two full collections, in MB. */
export function heapMb(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed / 1024 / 1024;
}
