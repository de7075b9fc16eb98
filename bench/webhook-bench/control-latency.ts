import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createKernel, loadConfig } from '../../index.js';
import type { ToolCallHookContext } from '../../kernel/hooks/hook-types.js';
import { createLogger } from '../../kernel/logger.js';
import { FetchWebhookTransport } from '../../plugins/transport-fetch/index.js';
import { BenchReceiver } from './receiver.js';
import { summarize, type LatencySummary } from './stats.js';

export interface ControlLatencyResult {
  calls: number;
  warmup: number;
  hookgate: LatencySummary;
  bareFetch: LatencySummary;
  /** The fetch transport alone (same payload, 30 s timeout signal, manual redirects, capped body read): where the overhead sits. */
  transportOnly: LatencySummary;
  /** hookgate / bare fetch. */
  ratioP50: number;
  ratioP99: number;
  ratioMean: number;
  requestsSeen: number;
}

/**
 * Control-decision latency: `kernel.hooks.evaluateToolCall()` on a started
 * kernel (one beforeToolCall control webhook, fetch delivery, the receiver
 * answering `{"decision":"allow"}`) against a bare `fetch` POST of the very
 * same JSON payload to the same loopback receiver, reading and parsing the
 * answer. A third, diagnostic contender sends the same payload through the
 * fetch transport alone. The three alternate call by call (the order rotates
 * every iteration), so all see the same machine state.
 */
export async function measureControlLatency(options: { calls: number; warmup: number }): Promise<ControlLatencyResult> {
  const receiver = await BenchReceiver.start({ status: 200, body: JSON.stringify({ decision: 'allow' }) });
  const dir = await mkdtemp(path.join(os.tmpdir(), 'hookgate-webhook-bench-'));
  const config = loadConfig({ cwd: dir, env: { HOOKGATE_STORE__DRIVER: 'memory' } });
  const kernel = createKernel({ config, env: {}, logger: createLogger({ level: 'silent' }) });
  await kernel.start();
  try {
    const operationId = 'op_bench';
    const url = receiver.url('/control');
    kernel.hooks.register(operationId, [{ id: 'gate', type: 'beforeToolCall', webhook: { url, responseHandling: 'toolCall' } }]);
    const context: ToolCallHookContext = {
      toolCallId: 'call_1',
      assistantMessageId: 'msg_1',
      identifier: 'fs',
      apiName: 'writeFile',
      args: { path: 'notes/today.txt', content: 'a short note' },
      callIndex: 0,
      stepIndex: 1,
      operationId,
      executor: 'server',
      agentId: 'bench-agent',
      toolSource: 'builtin',
      timestamp: new Date().toISOString(),
    };

    const viaHookgate = async (): Promise<void> => {
      const verdict = await kernel.hooks.evaluateToolCall(operationId, context);
      if (verdict.decision !== 'allow') throw new Error(`hookgate: expected allow, got ${JSON.stringify(verdict)}`);
    };
    await viaHookgate();
    const payload = receiver.lastBody; // the exact body hookgate sends
    const viaFetch = async (): Promise<void> => {
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: payload });
      const answer = (await res.json()) as { decision?: string };
      if (!res.ok || answer.decision !== 'allow') throw new Error('bare fetch: expected allow');
    };

    const transport = new FetchWebhookTransport();
    const viaTransport = async (): Promise<void> => {
      const res = await transport.send({ url, headers: {}, body: payload, timeoutMs: 30_000, readResponse: true, maxResponseBytes: 65_536 });
      if (!res.ok || res.tooLarge || !res.body || (JSON.parse(res.body.toString('utf8')) as { decision?: string }).decision !== 'allow') throw new Error('transport: expected allow');
    };

    const contenders = [
      { run: viaHookgate, samples: [] as number[] },
      { run: viaFetch, samples: [] as number[] },
      { run: viaTransport, samples: [] as number[] },
    ];
    for (let i = 0; i < options.warmup; i++) for (const c of contenders) await c.run();
    for (let i = 0; i < options.calls; i++) {
      for (let k = 0; k < contenders.length; k++) {
        const c = contenders[(i + k) % contenders.length]!;
        const t0 = performance.now();
        await c.run();
        c.samples.push(performance.now() - t0);
      }
    }
    const [h, b, t] = contenders.map((c) => summarize(c.samples)) as [LatencySummary, LatencySummary, LatencySummary];
    return {
      calls: options.calls,
      warmup: options.warmup,
      hookgate: h,
      bareFetch: b,
      transportOnly: t,
      ratioP50: h.p50 / b.p50,
      ratioP99: h.p99 / b.p99,
      ratioMean: h.mean / b.mean,
      requestsSeen: receiver.requests,
    };
  } finally {
    await kernel.stop();
    await receiver.close();
    await rm(dir, { recursive: true, force: true });
  }
}
