// V8 settings for a process that serves the gateway: imported first by the mcp-gateway command,
// before anything else loads. (A program that embeds createGateway decides for itself.)
//
// V8 moves an allocation site to the old generation ("pretenures" it) once most objects made there
// outlive a young-generation collection. In the gateway, during start-up and the first calls, it
// sometimes (6 runs of 8) picked a site that every tool call allocates from; each call's objects
// then went straight to the old generation and died there: 6.6 KB promoted a call instead of
// 0.47 KB, young collections 3.5x as long, and full collections where there were none (with the
// per-call cuts of the same day, own CPU per call 198 -> 170 µs at 32 connections;
// `node bench/allocations.mjs`, BENCHMARKS.md "Memory per call"). Off, unless node's own command
// line names the setting (`node --allocation-site-pretenuring ...`, or with underscores, as V8
// takes it; NODE_OPTIONS cannot carry it).
import { setFlagsFromString } from 'node:v8';

const NAMED = /^--(?:no-)?allocation-site-pretenuring(?:=|$)/;
if (!process.execArgv.some((arg) => NAMED.test(arg.replaceAll('_', '-')))) {
  setFlagsFromString('--no-allocation-site-pretenuring');
}
