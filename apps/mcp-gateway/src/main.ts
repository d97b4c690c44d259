#!/usr/bin/env node
// The mcp-gateway command. Not built yet: it arrives with issue 4, so it says so and exits.
console.error(
  'mcp-gateway: not implemented yet (planned in issue 4 of agentwire); see the README for what works today.',
);
process.exit(2);
