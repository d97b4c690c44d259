// The worker behind listTokensInWorker: counts the list it is given and posts the result.
import { parentPort, workerData } from 'node:worker_threads';
import { listTokens } from './index.js';

const { tools, stopAbove } = workerData as { tools: object[]; stopAbove?: number };
parentPort?.postMessage(listTokens(tools, stopAbove));
