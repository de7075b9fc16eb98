import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Redis } from 'ioredis';
import { CLI, ROOT, cliEnv } from '../../helpers/cli-process.js';
import { relayConnectionName } from '../../../plugins/execution-queue/redis-event-relay.js';
import { REDIS_URL } from './queue-fixtures.js';

/**
 * An agent function whose tool writes a progress line (`context.log`)
 * every 100 ms until a file `release-<instance id>` appears next to it, then
 * answers; the model's first turn calls it and every later turn says
 * `worked`. Live-only chunks (tool-log) keep coming while the step runs in a
 * worker, for as long as the spec wants.
 */
const STREAMER_MODULE = `import { existsSync } from 'node:fs';
import { useModel, useTool } from 'hookgate';
export function Streamer({ id }) {
  useModel({ provider: 'scripted', turns: [{ toolCalls: [{ identifier: 'agent', apiName: 'work', args: {} }] }, { text: 'worked' }], onEnd: 'repeat-last' });
  useTool({
    name: 'work',
    description: 'Works until released',
    run: async ({ log }) => {
      const release = new URL('./release-' + id, import.meta.url);
      for (let line = 1; line < 900; line++) {
        log.info('line ' + line);
        if (existsSync(release)) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      return 'done';
    },
  });
  return 'Work when asked.';
}
`;

/** Writes the Streamer module into `dir` (with \`hookgate\` resolvable there) and returns its path. */
export async function writeStreamer(dir: string): Promise<string> {
  await mkdir(path.join(dir, 'node_modules'), { recursive: true });
  await symlink(ROOT, path.join(dir, 'node_modules', 'hookgate'), 'dir').catch(() => undefined);
  const file = path.join(dir, 'streamer.mjs');
  await writeFile(file, STREAMER_MODULE);
  return file;
}

/** Lets instance `id`'s tool call answer. */
export async function release(dir: string, id: string): Promise<void> {
  await writeFile(path.join(dir, `release-${id}`), '');
}

/** `hookgate serve <modules>` in queue mode: its URL once it listens. */
export function startServeWith(cwd: string, modules: readonly string[]): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [CLI, 'serve', ...modules, '--port', '0'], { cwd, env: cliEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (out += d));
  return new Promise((resolve, reject) => {
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const match = /hookgate serve listening on (http:\/\/\S+)/.exec(out);
      if (match) resolve({ child, url: match[1]! });
    });
    child.on('close', (code) => reject(new Error(`hookgate serve exited (${code}) before listening: ${out}`)));
  });
}

/** SIGKILLs a child and resolves once it is gone. */
export async function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  child.removeAllListeners('close');
  const gone = new Promise((r) => child.once('close', r));
  child.kill('SIGKILL');
  await gone;
}

/** `CLIENT KILL`s every relay subscriber connection of `prefix` (serve's and the workers'); resolves how many it killed. */
export async function killRelaySubscribers(prefix: string): Promise<number> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true });
  await redis.connect();
  try {
    const name = relayConnectionName(prefix, 'sub');
    const list = (await redis.call('CLIENT', 'LIST')) as string;
    const ids = list.split('\n').filter((l) => l.includes(` name=${name} `)).map((l) => /(?:^|\s)id=(\d+)/.exec(l)![1]!);
    for (const id of ids) await redis.call('CLIENT', 'KILL', 'ID', id);
    return ids.length;
  } finally {
    redis.disconnect();
  }
}

/** How many relay subscriber connections of `prefix` Redis has now. */
export async function relaySubscribers(prefix: string): Promise<number> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true });
  await redis.connect();
  try {
    const list = (await redis.call('CLIENT', 'LIST')) as string;
    return list.split('\n').filter((l) => l.includes(` name=${relayConnectionName(prefix, 'sub')} `)).length;
  } finally {
    redis.disconnect();
  }
}
