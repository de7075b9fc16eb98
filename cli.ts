#!/usr/bin/env node
import { runCli } from './plugins/cli/program.js';

// `hookgate run --json | head` closes stdout early: that is not an error.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw err;
});

// Nothing left to wait for, yet the command never finished (a promise nobody settles): exit 1, a
// documented code, instead of Node's 13 for an unsettled top-level await.
let finished = false;
process.on('beforeExit', () => {
  if (finished) return;
  finished = true;
  process.stderr.write('error: hookgate stopped: the command was waiting on something that can never finish\n');
  process.exitCode = 1;
});

process.exitCode = await runCli(process.argv.slice(2));
finished = true;
