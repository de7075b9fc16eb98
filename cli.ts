#!/usr/bin/env node
import { runCli } from './plugins/cli/program.js';

process.exitCode = await runCli(process.argv.slice(2));
