#!/usr/bin/env node
// The agent command. Not built yet: it arrives with issue 5, so it says so and exits.
console.error('agent: not implemented yet (planned in issue 5 of agentwire); see the README for what works today.');
process.exit(2);
