// Preloaded (--import) into a server by bench/allocations.mjs. On the first SIGUSR2 it starts
// V8's GC profiler (and, with ALLOC_SAMPLE set, the sampling heap profiler); on the second it
// writes both to ALLOC_OUT as JSON. Nothing runs until the first signal.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { GCProfiler } from 'node:v8';

const sample = process.env.ALLOC_SAMPLE; // 'all' (garbage too) or 'survivors' (what outlived a young collection)
let session;
const post = (method, params) =>
  new Promise((resolve, reject) => session.post(method, params, (e, r) => (e ? reject(e) : resolve(r))));
let gc;
process.on('SIGUSR2', async () => {
  if (!gc) {
    gc = new GCProfiler();
    gc.start();
    if (sample) {
      session = new Session();
      session.connect();
      await post('HeapProfiler.enable');
      await post('HeapProfiler.startSampling', {
        samplingInterval: 1024,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: sample === 'all',
      });
    }
    return;
  }
  const profile = sample ? (await post('HeapProfiler.stopSampling')).profile : undefined;
  writeFileSync(process.env.ALLOC_OUT, JSON.stringify({ gc: gc.stop(), profile }));
});
