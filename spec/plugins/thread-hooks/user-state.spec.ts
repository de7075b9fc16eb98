import assert from 'node:assert/strict';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import path from 'node:path';
import { isHookgateError } from '../../../kernel/errors.js';
import type { UserScopeCalls } from '../../../kernel/runtime/thread-hooks-port.js';
import { ThreadHooks } from '../../../kernel/tokens.js';
import { MAX_USER_VALUE_BYTES } from '../../../kernel/user-values.js';
import { userHookHostOf } from '../../../kernel/user-hook-host.js';
import { MAX_USER_CHANGE_DEPTH } from '../../../plugins/thread-hooks/user-scope.js';
import { defineHook, openUserState, type UserState, type UserValueChange } from '../../../threads.js';
import { startKernel, useSqliteRestart, type RuntimeFixture } from '../../helpers/runtime-fixtures.js';

/** One user-scope hook call as a hook saw it. */
interface Seen {
  hook: string;
  userId: string;
  argCount: number;
  change?: UserValueChange;
}

/** User-scope hooks of document 003 (issue 15): UserState over the stored user values, user_value_changed, errors, scoping, attacks. */
describe('thread hooks: UserState and user_value_changed', () => {
  let fx: RuntimeFixture;
  let seen: Seen[];

  const open = (agentId: string, userId: string): UserScopeCalls => fx.kernel.resolve(ThreadHooks).openUser(userHookHostOf(fx.kernel), agentId, userId);
  const hookLogs = () => fx.logs.filter((l) => l.msg.startsWith('[Hooks] ✗'));
  const record = (hook: string) => (user: UserState, ...rest: unknown[]) => {
    seen.push({ hook, userId: user.userId, argCount: 1 + rest.length, ...(hook === 'user_value_changed' ? { change: rest[0] as UserValueChange } : {}) });
  };

  beforeEach(async () => {
    seen = [];
    fx = await startKernel();
    fx.kernel.resolve(ThreadHooks).addAgentHooks('presence', [
      defineHook({ hook: 'user_value_changed', id: 'broken_change', execute: () => { throw new Error('change hook broke'); } }),
      defineHook({ hook: 'user_value_changed', id: 'record_change', execute: record('user_value_changed') }),
    ], 'code');
  });
  afterEach(async () => {
    await fx.cleanup();
  });

  it('setValue stores the value and runs user_value_changed with the key, the new and the old value; getValue reads it back', async () => {
    const user = open('presence', 'u-1');
    await user.setValue('plan', { tier: 'free' });
    await user.setValue('plan', { tier: 'pro' });
    await user.setValue('plan', undefined);
    assert.deepEqual(seen.map((s) => [s.userId, s.argCount, s.change]), [
      ['u-1', 2, { key: 'plan', newValue: { tier: 'free' }, oldValue: undefined }],
      ['u-1', 2, { key: 'plan', newValue: { tier: 'pro' }, oldValue: { tier: 'free' } }],
      ['u-1', 2, { key: 'plan', newValue: undefined, oldValue: { tier: 'pro' } }],
    ]);
    assert.equal(await user.getValue('plan'), undefined);
    await user.setValue('seats', 3);
    assert.equal(await fx.kernel.store.getUserValue('u-1', 'seats'), 3);
    assert.equal(await open('presence', 'u-1').getValue('seats'), 3);
  });

  it('a write of an equal value (key order aside) runs no hook', async () => {
    const user = open('presence', 'u-1');
    await user.setValue('prefs', { a: 1, b: [1, 2] });
    await user.setValue('prefs', { b: [1, 2], a: 1 });
    await user.setValue('gone', undefined);
    assert.equal(seen.length, 1);
  });

  it('a throwing user_value_changed hook is logged with [Hooks] ✗ and its id; the next hook runs and the write stays', async () => {
    const user = open('presence', 'u-1');
    await user.setValue('k', 'v');
    assert.equal(await fx.kernel.store.getUserValue('u-1', 'k'), 'v');
    assert.equal(seen.length, 1);
    const logged = hookLogs();
    assert.equal(logged.length, 1);
    assert.equal(logged[0]!.hookId, 'broken_change');
    assert.equal(logged[0]!.hookType, 'user_value_changed');
    assert.match(String(logged[0]!.error), /change hook broke/);
  });

  it('client hooks: a throwing user_client_attached is logged with [Hooks] ✗, the next one runs with (user, client) only, and the call resolves', async () => {
    const clients: unknown[][] = [];
    fx.kernel.resolve(ThreadHooks).addAgentHooks('desk', [
      defineHook({ hook: 'user_client_attached', id: 'broken_attach', execute: async () => { throw new Error('attach broke'); } }),
      defineHook({ hook: 'user_client_attached', id: 'record_attach', execute: (...args: unknown[]) => void clients.push(['attached', (args[0] as UserState).userId, ...args.slice(1)]) }),
      defineHook({ hook: 'user_client_detached', id: 'record_detach', execute: (...args: unknown[]) => void clients.push(['detached', (args[0] as UserState).userId, ...args.slice(1)]) }),
    ], 'code');
    const scope = open('desk', 'u-7');
    assert.deepEqual([scope.has('user_client_attached'), scope.has('user_client_detached'), scope.has('user_value_changed')], [true, true, false]);
    const client = { clientId: 'client_1', agentId: 'desk', threadId: 't-1', connectedAt: '2026-01-01T00:00:00.000Z' };
    await scope.clientAttached(client);
    await scope.clientDetached(client);
    assert.deepEqual(clients, [['attached', 'u-7', client], ['detached', 'u-7', client]]);
    assert.ok(Object.isFrozen(clients[0]![2]));
    const logged = hookLogs();
    assert.deepEqual(logged.map((l) => [l.hookId, l.hookType, l.error]), [['broken_attach', 'user_client_attached', 'attach broke']]);
  });

  it('the change a hook gets is frozen: a hook cannot alter what the next one sees', async () => {
    fx.kernel.resolve(ThreadHooks).addAgentHooks('frozen', [
      defineHook({ hook: 'user_value_changed', id: 'meddle', execute: (_u, change) => { (change.newValue as { n: number }).n = 99; } }),
      defineHook({ hook: 'user_value_changed', id: 'record_change', execute: record('user_value_changed') }),
    ], 'code');
    await open('frozen', 'u-1').setValue('k', { n: 1 });
    assert.deepEqual(seen[0]!.change, { key: 'k', newValue: { n: 1 }, oldValue: undefined });
    assert.equal(hookLogs().length, 1);
  });

  it('a change hook that writes through its UserState runs again, at most 8 rounds deep, then the write is stored without hooks (logged)', async () => {
    let rounds = 0;
    fx.kernel.resolve(ThreadHooks).addAgentHooks('looping', [
      defineHook({ hook: 'user_value_changed', id: 'count_up', execute: async (user, change) => { rounds++; await user.setValue(change.key, (change.newValue as number) + 1); } }),
    ], 'code');
    await open('looping', 'u-1').setValue('n', 0);
    assert.equal(rounds, MAX_USER_CHANGE_DEPTH);
    assert.equal(await fx.kernel.store.getUserValue('u-1', 'n'), MAX_USER_CHANGE_DEPTH);
    assert.ok(hookLogs().some((l) => /user_value_changed did not run: the change of "n" was made 8 rounds deep/.test(l.msg)), JSON.stringify(hookLogs()));
  });

  it('code outside hooks: openUserState gives the same values and its writes run the agent\'s hooks; a write through the store runs none', async () => {
    const user = openUserState(fx.kernel, { agentId: 'presence', userId: 'u-5' });
    assert.ok(Object.isFrozen(user));
    await user.setValue('plan', 'pro');
    assert.deepEqual(seen.map((s) => s.change), [{ key: 'plan', newValue: 'pro', oldValue: undefined }]);
    await fx.kernel.store.setUserValue('u-5', 'plan', 'team');
    assert.equal(seen.length, 1);
    assert.equal(await user.getValue('plan'), 'team');
    assert.throws(() => openUserState(fx.kernel, { agentId: 'presence', userId: '' }), (err: unknown) => isHookgateError(err, 'USER_VALUE_INVALID'));
  });

  it('only the agent whose UserState wrote runs its hooks; an agent with no user-scope hook writes without any', async () => {
    await open('someone-else', 'u-1').setValue('k', 1);
    assert.equal(seen.length, 0);
    assert.equal(await open('presence', 'u-1').getValue('k'), 1);
  });

  it('hooks from the hooks folder run when the agent file lists them (threadHooks), with their ids resolved once', async () => {
    await fx.cleanup();
    const dir = fx.dir;
    // A fresh kernel whose hooks folder holds a user-scope hook, selected by an agent file.
    const hooksDir = path.join(dir, 'agents', 'hooks');
    await mkdir(hooksDir, { recursive: true });
    const threads = pathToFileURL(path.resolve('dist/threads.js')).href;
    await writeFile(path.join(hooksDir, 'note.mjs'), `import { defineHook } from ${JSON.stringify(threads)};\nexport default defineHook({ hook: 'user_value_changed', id: 'note_change', execute: async (user, change) => { if (change.key !== 'noted') await user.setValue('noted', change.key); } });\n`);
    fx = await startKernel({ dir, keepDir: true });
    fx.kernel.agents.define({ id: 'filed', model: { provider: 'scripted', turns: [{ text: 'x' }] }, threadHooks: ['note_change'] });
    fx.kernel.agents.define({ id: 'unlisted', model: { provider: 'scripted', turns: [{ text: 'x' }] } });
    await open('filed', 'u-2').setValue('plan', 'pro');
    assert.equal(await fx.kernel.store.getUserValue('u-2', 'noted'), 'plan');
    await open('unlisted', 'u-3').setValue('plan', 'pro');
    assert.equal(await fx.kernel.store.getUserValue('u-3', 'noted'), undefined);
    await fx.cleanup();
    await rm(dir, { recursive: true, force: true });
  });

  describe('attacks', () => {
    it('a path-like user id is an opaque key: it names no file and reaches no other user', async () => {
      await open('presence', '../x').setValue('k', 'mine');
      await open('presence', '..%2Fx').setValue('k', 'other');
      assert.equal(await open('presence', '../x').getValue('k'), 'mine');
      assert.equal(await fx.kernel.store.getUserValue('x', 'k'), undefined);
      assert.deepEqual(seen.map((s) => s.userId), ['../x', '..%2Fx']);
    });

    it('a bad user id is refused when the scope opens (USER_VALUE_INVALID), before anything runs', () => {
      for (const bad of ['', 'a\u0000b', 'x'.repeat(257)]) {
        assert.throws(() => open('presence', bad), (err: unknown) => isHookgateError(err, 'USER_VALUE_INVALID'), JSON.stringify(bad.slice(0, 5)));
      }
    });

    it('a huge value is refused with a clear error: nothing stored, no hook run, the old value kept', async () => {
      const user = open('presence', 'u-1');
      await user.setValue('notes', 'short');
      seen = [];
      await assert.rejects(user.setValue('notes', 'x'.repeat(MAX_USER_VALUE_BYTES + 1)), (err: unknown) => {
        assert.ok(isHookgateError(err, 'USER_VALUE_INVALID'));
        assert.match((err as Error).message, /the value of "notes" is 65539 bytes of JSON; a user value is at most 65536 bytes/);
        return true;
      });
      await assert.rejects(user.setValue('', 1), /UserState\.setValue: the key must be 1 to 256 characters/);
      await assert.rejects(user.getValue('bad\u0007key'), /UserState\.getValue: the key must not contain control characters/);
      assert.equal(await user.getValue('notes'), 'short');
      assert.equal(seen.length, 0);
    });

    it('prototype keys are ordinary keys: __proto__ and constructor are stored and read back, nothing is polluted', async () => {
      const user = open('presence', 'u-1');
      await user.setValue('__proto__', { polluted: true });
      await user.setValue('constructor', JSON.parse('{"__proto__": {"polluted": true}}'));
      assert.deepEqual(await user.getValue('__proto__'), { polluted: true });
      const value = (await user.getValue('constructor')) as object;
      assert.deepEqual(Object.keys(value), ['__proto__']);
      assert.equal(({} as { polluted?: boolean }).polluted, undefined);
      assert.deepEqual(seen.map((s) => s.change!.key), ['__proto__', 'constructor']);
    });
  });
});

describe('thread hooks: user values across a restart (SQLite)', () => {
  const kernels = useSqliteRestart();

  it('values a UserState stored are there for the next process, and its change hooks see them as the old value', async () => {
    const first = await kernels.first();
    const a = first.kernel.resolve(ThreadHooks).openUser(userHookHostOf(first.kernel), 'any', 'u-9');
    await a.setValue('plan', { tier: 'pro' });
    await first.cleanup();
    const next = await kernels.next();
    const changes: UserValueChange[] = [];
    next.kernel.resolve(ThreadHooks).addAgentHooks('any', [defineHook({ hook: 'user_value_changed', id: 'record', execute: (_u, c) => void changes.push(c) })], 'code');
    const b = next.kernel.resolve(ThreadHooks).openUser(userHookHostOf(next.kernel), 'any', 'u-9');
    assert.deepEqual(await b.getValue('plan'), { tier: 'pro' });
    await b.setValue('plan', { tier: 'team' });
    assert.deepEqual(changes, [{ key: 'plan', newValue: { tier: 'team' }, oldValue: { tier: 'pro' } }]);
  });
});
