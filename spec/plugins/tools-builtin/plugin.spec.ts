import assert from 'node:assert/strict';
import { mkdtemp, realpath, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { withDefaults } from '../../../config/defaults.js';
import { createLogger } from '../../../kernel/logger.js';
import { Config, Logger, ToolSources } from '../../../kernel/tokens.js';
import type { Token } from '../../../kernel/token.js';
import toolsBuiltin from '../../../plugins/tools-builtin/index.js';
import { createPluginContext } from './plugin-harness.js';
import { toolContext } from './sandbox-fixture.js';

describe('tools-builtin plugin', () => {
  let base: string;

  beforeEach(async () => {
    base = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-tools-plugin-')));
  });
  afterEach(() => rm(base, { recursive: true, force: true }));

  function contextFor(sandboxRoot: string) {
    const config = withDefaults({ sandbox: { root: sandboxRoot } }, base);
    const values: Array<[Token<unknown>, unknown]> = [
      [Config, config],
      [Logger, createLogger({ level: 'silent' })],
    ];
    return createPluginContext(toolsBuiltin, values);
  }

  it('declares id tools-builtin, requires Config and Logger, provides ToolSources', () => {
    assert.equal(toolsBuiltin.id, 'tools-builtin');
    assert.deepEqual(toolsBuiltin.requires, [Config, Logger]);
    assert.deepEqual(toolsBuiltin.provides, [ToolSources]);
  });

  it('binds the builtin tool source without touching the disk', () => {
    const ctx = contextFor('nested/sandbox');
    toolsBuiltin.register(ctx);
    const sources = ctx.resolveAll(ToolSources);
    assert.deepEqual(sources.map((s) => s.id), ['builtin']);
    assert.equal(sources[0]!.list().some((t) => t.identifier === 'fs' && t.apiName === 'readFile'), true);
    return assert.rejects(stat(path.join(base, 'nested')));
  });

  it('creates the sandbox folder on start, resolved against the config folder', async () => {
    const ctx = contextFor('nested/sandbox');
    toolsBuiltin.register(ctx);
    await toolsBuiltin.start?.(ctx);
    assert.equal((await stat(path.join(base, 'nested', 'sandbox'))).isDirectory(), true);
  });

  it('confines the bound tools to the configured sandbox root', async () => {
    const ctx = contextFor('box');
    toolsBuiltin.register(ctx);
    await toolsBuiltin.start?.(ctx);
    const [source] = ctx.resolveAll(ToolSources);
    await source!.execute({ identifier: 'fs', apiName: 'writeFile', args: { path: 'a.txt', content: 'A' } }, toolContext());
    assert.equal((await stat(path.join(base, 'box', 'a.txt'))).size, 1);
    await assert.rejects(source!.execute({ identifier: 'fs', apiName: 'readFile', args: { path: '../a.txt' } }, toolContext()), /outside the sandbox/);
  });

  it('fails to start when the sandbox root is a file', async () => {
    await writeFile(path.join(base, 'not-a-dir'), 'x');
    const ctx = contextFor('not-a-dir');
    toolsBuiltin.register(ctx);
    await assert.rejects(Promise.resolve(toolsBuiltin.start?.(ctx)), /sandbox\.root ".*not-a-dir" is not a folder/);
  });
});
