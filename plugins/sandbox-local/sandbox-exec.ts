import { spawn } from 'node:child_process';
import { constants as osConstants } from 'node:os';
import { HookgateError } from '../../kernel/errors.js';
import type { SandboxExecResult } from '../../kernel/sandbox.js';

/** What one command runs with, already checked and resolved by the sandbox. */
export interface ExecPlan {
  readonly command: string;
  /** The real host folder it runs in (inside the sandbox). */
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  /** Per stream: bytes kept of stdout and of stderr. */
  readonly maxOutputBytes: number;
  readonly signal?: AbortSignal;
}

/**
 * Runs a shell command as its own process group (`/bin/sh -c`), so a
 * timeout or an abort kills everything it started (SIGKILL to the group),
 * not just the shell. Each stream keeps its first `maxOutputBytes` bytes and
 * drains the rest (a noisy command neither blocks on a full pipe nor grows
 * memory); a note says how much was dropped. Rejects with
 * SANDBOX_EXEC_TIMEOUT past the deadline, with the signal's reason on abort,
 * SANDBOX_EXEC_FAILED when the shell cannot be started.
 */
export function runCommand(plan: ExecPlan): Promise<SandboxExecResult> {
  return new Promise((resolve, reject) => {
    if (plan.signal?.aborted) return reject(abortReason(plan.signal));
    const child = spawn('/bin/sh', ['-c', plan.command], { cwd: plan.cwd, env: { ...plan.env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const stdout = boundedSink(plan.maxOutputBytes);
    const stderr = boundedSink(plan.maxOutputBytes);
    child.stdout.on('data', stdout.push);
    child.stderr.on('data', stderr.push);
    let settled = false;
    const killGroup = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    };
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      plan.signal?.removeEventListener('abort', onAbort);
      outcome();
    };
    // A process that left the group (setsid) may still hold the pipes: a timeout or an abort settles at once, without
    // waiting for the streams to close.
    const stop = (error: unknown) => {
      killGroup();
      child.stdout.destroy();
      child.stderr.destroy();
      settle(() => reject(error));
    };
    const timer = setTimeout(
      () => stop(new HookgateError('SANDBOX_EXEC_TIMEOUT', `sandbox exec: the command ran past its ${plan.timeoutMs} ms deadline and was killed (with every process it started)`, { details: { timeoutMs: plan.timeoutMs } })),
      plan.timeoutMs,
    );
    const onAbort = () => stop(abortReason(plan.signal!));
    plan.signal?.addEventListener('abort', onAbort, { once: true });
    child.once('error', (err) => {
      settle(() => reject(new HookgateError('SANDBOX_EXEC_FAILED', `sandbox exec: the shell could not be started: ${err.message}`, { cause: err })));
    });
    child.once('close', (code, signal) => {
      const exitCode = code ?? 128 + ((signal !== null ? osConstants.signals[signal] : undefined) ?? 0);
      settle(() => resolve({ stdout: stdout.text(), stderr: stderr.text(), exitCode }));
    });
  });
}

function boundedSink(limit: number): { push: (chunk: Buffer) => void; text: () => string } {
  const kept: Buffer[] = [];
  let size = 0;
  let dropped = 0;
  return {
    push(chunk) {
      const room = limit - size;
      if (room <= 0) {
        dropped += chunk.length;
        return;
      }
      const part = chunk.length <= room ? chunk : chunk.subarray(0, room);
      kept.push(part);
      size += part.length;
      dropped += chunk.length - part.length;
    },
    text() {
      const body = Buffer.concat(kept).toString('utf8');
      return dropped > 0 ? `${body}\n[output truncated: ${dropped} more bytes dropped, the limit is ${limit} bytes]` : body;
    },
  };
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The operation was aborted.', 'AbortError');
}
