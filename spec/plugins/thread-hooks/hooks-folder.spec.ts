import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { HookgateError } from '../../../kernel/errors.js';
import { DEFAULT_HOOKS_FOLDER, loadHooksFolder, ThreadHookSet } from '../../../threads.js';

const THREADS_ENTRY = pathToFileURL(join(dirname(fileURLToPath(import.meta.url)), '../../../threads.js')).href;

/** A hook module file's text: default-exports defineHook({ hook, id, execute }). */
function hookModule(hook: string, id: string): string {
  return `import { defineHook } from ${JSON.stringify(THREADS_ENTRY)};\nexport default defineHook({ hook: ${JSON.stringify(hook)}, id: ${JSON.stringify(id)}, execute: async (state, value) => value });\n`;
}

async function refusal(promise: Promise<unknown>, pattern: RegExp, file?: string): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof HookgateError, `expected a HookgateError, got ${String(err)}`);
    assert.equal(err.code, 'THREAD_HOOK_INVALID');
    assert.match(err.message, pattern);
    if (file !== undefined) assert.equal(err.details.file, file);
    return true;
  });
}

describe('thread hooks: loading a hooks folder', () => {
  let root: string;
  let counter = 0;
  /** A new project folder with `agents/hooks/` holding the given files (path -> text). */
  function project(files: Record<string, string>): string {
    const dir = join(root, `p${counter++}`);
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, DEFAULT_HOOKS_FOLDER, path)), { recursive: true });
      writeFileSync(join(dir, DEFAULT_HOOKS_FOLDER, path), text);
    }
    mkdirSync(join(dir, DEFAULT_HOOKS_FOLDER), { recursive: true });
    return dir;
  }

  before(() => { root = mkdtempSync(join(tmpdir(), 'hookgate-hooks-folder-')); });
  after(() => rmSync(root, { recursive: true, force: true }));

  it('loads every module file, any name, subfolders too, in code-point order of their paths', async () => {
    const dir = project({
      'sanitize_pii.js': hookModule('before_store_tool_result', 'sanitize_pii'),
      'A-first.mjs': hookModule('filter_messages', 'remove_failed_tools'),
      'nested/limit.js': hookModule('prefilter_llm_history', 'limit_to_20'),
      'nested/limit.d.ts': 'export {};\n',
      'nested/limit.js.map': '{}',
      'limit.ts': 'export default 1;\n',
      'limit.js': hookModule('before_create_message', 'tag_with_agent_name'),
      'README.md': '# not a hook\n',
    });
    const hooks = await loadHooksFolder({ folder: DEFAULT_HOOKS_FOLDER, baseDir: dir, required: false });
    assert.deepEqual(hooks.map((h) => [h.definition.id, h.source.slice(join(dir, DEFAULT_HOOKS_FOLDER).length + 1)]), [
      ['remove_failed_tools', 'A-first.mjs'],
      ['tag_with_agent_name', 'limit.js'],
      ['limit_to_20', 'nested/limit.js'],
      ['sanitize_pii', 'sanitize_pii.js'],
    ]);
    const set = new ThreadHookSet(hooks);
    assert.deepEqual(set.forHook('filter_messages').map((h) => h.id), ['remove_failed_tools']);
  });

  it('follows a symlink to a file, and refuses a dangling one naming it', async () => {
    const dir = project({});
    const target = join(root, `outside-${counter++}.mjs`);
    writeFileSync(target, hookModule('tool_call_done', 'log_tool_done'));
    const folder = join(dir, DEFAULT_HOOKS_FOLDER);
    symlinkSync(target, join(folder, 'linked.mjs'));
    assert.deepEqual((await loadHooksFolder({ folder, baseDir: '/', required: true })).map((h) => h.definition.id), ['log_tool_done']);
    symlinkSync(join(root, 'missing.mjs'), join(folder, 'dangling.mjs'));
    await refusal(loadHooksFolder({ folder, baseDir: '/', required: true }), /dangling\.mjs: a symbolic link whose target does not exist/, join(folder, 'dangling.mjs'));
  });

  it('refuses a file without a default export, naming the file', async () => {
    const dir = project({ 'named.mjs': `export const hook = 1;\n` });
    const file = join(dir, DEFAULT_HOOKS_FOLDER, 'named.mjs');
    await refusal(loadHooksFolder({ folder: DEFAULT_HOOKS_FOLDER, baseDir: dir, required: false }), /named\.mjs: no default export/, file);
  });

  it('refuses an unknown hook name and a bad id, naming the file', async () => {
    const dir = project({ 'typo.mjs': `export default { hook: 'before_create_mesage', id: 'x', execute() {} };\n` });
    await refusal(loadHooksFolder({ folder: DEFAULT_HOOKS_FOLDER, baseDir: dir, required: false }), /typo\.mjs: defineHook hook: unknown hook type "before_create_mesage".*did you mean "before_create_message"/, join(dir, DEFAULT_HOOKS_FOLDER, 'typo.mjs'));
    const other = project({ 'bad-id.mjs': `export default { hook: 'filter_messages', id: 'Bad-Id', execute() {} };\n` });
    await refusal(loadHooksFolder({ folder: DEFAULT_HOOKS_FOLDER, baseDir: other, required: false }), /bad-id\.mjs: defineHook id: "Bad-Id" is not a snake_case id/);
  });

  it('refuses duplicate ids across files, naming both', async () => {
    const dir = project({ 'a.mjs': hookModule('filter_messages', 'same_id'), 'b.mjs': hookModule('tool_call_done', 'same_id') });
    const hooks = await loadHooksFolder({ folder: DEFAULT_HOOKS_FOLDER, baseDir: dir, required: false });
    const folder = join(dir, DEFAULT_HOOKS_FOLDER);
    assert.throws(() => new ThreadHookSet(hooks), (err: unknown) => err instanceof HookgateError && err.message === `duplicate thread hook id "same_id": defined in ${join(folder, 'a.mjs')} and in ${join(folder, 'b.mjs')} (ids are unique per agent)`);
  });

  it('refuses a module that fails to import, and a TypeScript file with no compiled .js, naming the file', async () => {
    const dir = project({ 'broken.mjs': `throw new Error('boom at import');\n` });
    await refusal(loadHooksFolder({ folder: DEFAULT_HOOKS_FOLDER, baseDir: dir, required: false }), /broken\.mjs: the module failed to load: boom at import/);
    const ts = project({ 'only_source.ts': 'export default {};\n' });
    await refusal(loadHooksFolder({ folder: DEFAULT_HOOKS_FOLDER, baseDir: ts, required: false }), /only_source\.ts: a TypeScript hook file must be compiled/);
  });

  it('treats a missing default folder as no hooks, and a missing configured folder, an empty path or a file as errors', async () => {
    const empty = join(root, `none-${counter++}`);
    mkdirSync(empty);
    assert.deepEqual(await loadHooksFolder({ folder: DEFAULT_HOOKS_FOLDER, baseDir: empty, required: false }), []);
    await refusal(loadHooksFolder({ folder: 'agents/hoks', baseDir: empty, required: true }), /agents\/hoks: the hooks folder does not exist/, join(empty, 'agents/hoks'));
    await refusal(loadHooksFolder({ folder: '  ', baseDir: empty, required: true }), /hooks folder: the path is empty/);
    writeFileSync(join(empty, 'file.js'), '');
    await refusal(loadHooksFolder({ folder: 'file.js', baseDir: empty, required: true }), /file\.js: the hooks folder is not a folder/);
  });
});
