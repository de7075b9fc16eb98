import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chown, mkdir, readdir } from 'node:fs/promises';
import { userInfo } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The server binaries of the installed PostgreSQL (the newest version under /usr/lib/postgresql). */
async function binaries(): Promise<string> {
  const versions = (await readdir('/usr/lib/postgresql')).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a));
  if (versions.length === 0) throw new Error('no PostgreSQL server binaries under /usr/lib/postgresql');
  return path.join('/usr/lib/postgresql', versions[0]!, 'bin');
}

/** PostgreSQL refuses to run as root: as root, the server and initdb run as the `postgres` user (its uid and gid). */
async function serverUser(): Promise<{ uid: number; gid: number } | undefined> {
  if (userInfo().uid !== 0) return undefined;
  const { stdout: uid } = await run('id', ['-u', 'postgres']);
  const { stdout: gid } = await run('id', ['-g', 'postgres']);
  return { uid: Number(uid.trim()), gid: Number(gid.trim()) };
}

/**
 * A PostgreSQL cluster of one spec's own, in `dir` (trust authentication,
 * listening on 127.0.0.1:`port`, no fsync): restarting it disturbs nobody
 * else's server. `start` resolves once it accepts connections; `stop` is a
 * fast shutdown (every connection terminated, as a restart does).
 */
export class PrivatePostgres {
  private server: ChildProcess | undefined;
  private bin = '';
  private user: { uid: number; gid: number } | undefined;

  constructor(readonly dir: string, readonly port: number) {}

  get data(): string {
    return path.join(this.dir, 'data');
  }

  /** initdb into `dir/data` (owned by the server user). */
  async init(): Promise<void> {
    this.bin = await binaries();
    this.user = await serverUser();
    await mkdir(this.data, { recursive: true });
    if (this.user) {
      await chown(this.dir, this.user.uid, this.user.gid);
      await chown(this.data, this.user.uid, this.user.gid);
    }
    await run(path.join(this.bin, 'initdb'), ['-D', this.data, '-A', 'trust', '-U', 'postgres', '--no-sync'], { cwd: this.dir, ...(this.user ?? {}) });
  }

  async start(): Promise<void> {
    const args = ['-D', this.data, '-p', String(this.port), '-k', this.dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off', '-c', 'max_connections=60'];
    const child = spawn(path.join(this.bin, 'postgres'), args, { cwd: this.dir, stdio: ['ignore', 'pipe', 'pipe'], ...(this.user ?? {}) });
    this.server = child;
    await new Promise<void>((resolve, reject) => {
      let out = '';
      const onData = (d: string) => {
        out += d;
        if (out.includes('ready to accept connections')) resolve();
      };
      child.stdout!.setEncoding('utf8').on('data', onData);
      child.stderr!.setEncoding('utf8').on('data', onData);
      child.once('close', (code) => reject(new Error(`postgres exited (${code}) before it was ready: ${out.slice(-2000)}`)));
    });
  }

  /** Fast shutdown (SIGINT: connections terminated, then a clean stop); resolves once the server is gone. Idempotent. */
  async stop(): Promise<void> {
    const child = this.server;
    this.server = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    child.removeAllListeners('close');
    const gone = new Promise((resolve) => child.once('close', resolve));
    child.kill('SIGINT');
    const killed = setTimeout(() => child.kill('SIGKILL'), 20_000);
    await gone;
    clearTimeout(killed);
  }
}
