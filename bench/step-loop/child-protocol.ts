import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { ContenderResult, ContenderSession, RoundResult } from './measure.js';

/**
 * The parent drives each contender's child process over stdin/stdout, one
 * JSON line per command and per reply, so rounds of different contenders
 * can alternate in time (noise from other processes on the machine then
 * hits every contender alike). Replies start with {@link REPLY_PREFIX}; any
 * other stdout line is ignored.
 */
export type Command = { cmd: 'setup' } | { cmd: 'warmup'; n: number } | { cmd: 'round'; n: number; rewarm?: number } | { cmd: 'finish' };

type Reply = { ok: true; round?: RoundResult; result?: ContenderResult } | { ok: false; error: string };

const REPLY_PREFIX = 'STEP_LOOP_REPLY ';

/** Child side: answers commands until `finish`, then exits. A failure is replied and ends the process with code 1. */
export async function serveCommands(session: ContenderSession): Promise<void> {
  const reply = (r: Reply) => process.stdout.write(`${REPLY_PREFIX}${JSON.stringify(r)}\n`);
  for await (const line of createInterface({ input: process.stdin })) {
    if (!line.trim()) continue;
    const command = JSON.parse(line) as Command;
    try {
      switch (command.cmd) {
        case 'setup':
          await session.setup();
          reply({ ok: true });
          break;
        case 'warmup':
          await session.warmup(command.n);
          reply({ ok: true });
          break;
        case 'round':
          reply({ ok: true, round: await session.round(command.n, command.rewarm ?? 0) });
          break;
        case 'finish':
          reply({ ok: true, result: await session.finish() });
          return;
      }
    } catch (err) {
      reply({ ok: false, error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
      process.exitCode = 1;
      return;
    }
  }
}

/** Parent side: one child process running one contender (`node <execArgs>`, or `<command> <execArgs>`, e.g. under valgrind). */
export class ContenderProcess {
  private readonly proc: ChildProcess;
  private readonly replies: Array<(r: Reply) => void> = [];
  private exited: string | undefined;

  constructor(readonly name: string, execArgs: string[], command: string = process.execPath) {
    this.proc = spawn(command, execArgs, { stdio: ['pipe', 'pipe', 'inherit'] });
    createInterface({ input: this.proc.stdout! }).on('line', (line) => {
      if (line.startsWith(REPLY_PREFIX)) this.replies.shift()?.(JSON.parse(line.slice(REPLY_PREFIX.length)) as Reply);
    });
    this.proc.on('exit', (code, signal) => {
      this.exited = `exited with ${signal ?? `code ${code}`}`;
      for (const waiter of this.replies.splice(0)) waiter({ ok: false, error: this.exited });
    });
  }

  /** Sends a command and resolves with the child's reply; rejects on a failure reply or an early exit. */
  async send(command: Command): Promise<Extract<Reply, { ok: true }>> {
    if (this.exited) throw new Error(`contender ${this.name} ${this.exited}`);
    const reply = await new Promise<Reply>((resolve) => {
      this.replies.push(resolve);
      this.proc.stdin!.write(`${JSON.stringify(command)}\n`);
    });
    if (!reply.ok) throw new Error(`contender ${this.name}: ${reply.error}`);
    return reply;
  }

  /** The child's process id (under valgrind, the id callgrind_control addresses). */
  get pid(): number {
    return this.proc.pid!;
  }

  /** Closes the child's stdin (after `finish` it then exits) and resolves when it has exited. */
  end(): Promise<void> {
    if (this.exited) return Promise.resolve();
    const exited = new Promise<void>((resolve) => this.proc.once('exit', () => resolve()));
    this.proc.stdin!.end();
    return exited;
  }

  kill(): void {
    if (!this.exited) this.proc.kill();
  }
}
