import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { createKernel } from '../../index.js';
import { loadConfig } from '../../config/load-config.js';
import type { Kernel } from '../../kernel/kernel.js';
import { errorMessage, isHookgateError } from '../../kernel/errors.js';
import { EXIT, exitCodeFor } from './exit-codes.js';
import { decideCommand, runCommand } from './run-command.js';
import { abortCommand, RESUME_QUIET_MS, resumeCommand } from './recovery-commands.js';
import { serveWebhookReceiver } from './webhook-receiver.js';
import { addPolicyCommands } from './policy-commands.js';
import { generateSigningSecret } from '../../kernel/hooks/webhook/signing.js';
import { initCommand } from './init/init-command.js';

interface GlobalOptions {
  config?: string;
}

/** Starts a kernel from the global options, runs `body`, always stops the kernel. */
async function withKernel(program: Command, body: (kernel: Kernel) => Promise<number>): Promise<number> {
  const { config } = program.opts<GlobalOptions>();
  const kernel = createKernel({ config: loadConfig({ file: config }) });
  try {
    await kernel.start();
    return await body(kernel);
  } finally {
    await kernel.stop();
  }
}

/** The `hookgate` command line. Returns the exit code instead of exiting, so specs can drive it. */
export function buildProgram(): Command {
  const program = new Command('hookgate')
    .description('hookgate: an agent runtime with lifecycle hooks, webhook controls and policy-as-code')
    .option('-c, --config <file>', 'config file (default: ./hookgate.config.yaml, else embedded defaults)')
    .showHelpAfterError()
    .exitOverride();

  program
    .command('init')
    .description('scaffold a project: config, an agent, a policy pack with tests, a hooks module, a plugin skeleton')
    .argument('[dir]', 'project folder (created when missing)', '.')
    .option('--force', 'overwrite files that exist')
    .action(async (dir: string, opts) => {
      program.setOptionValue('exitCode', await initCommand(dir, { force: opts.force }));
    });

  program
    .command('run')
    .description('run an agent file and print its timeline of steps and tool calls as they happen')
    .argument('<agent>', 'agent file (YAML)')
    .argument('[prompt]', 'what to ask the agent (default: the agent description)')
    .option('--json', 'print NDJSON events instead of the timeline')
    .option('--user <id>', 'the user the run acts for (hook payloads carry it and their email)')
    .option('--hooks <module>', 'a JS module exporting a list of hooks (handlers and webhooks)')
    .option('--auto-approve', 'approve every approval request without asking')
    .option('--decide <list>', 'answers for successive approval requests, comma-separated: approve, reject, continue', parseDecisions)
    .action(async (agent: string, prompt: string | undefined, opts) => {
      const run = { json: opts.json, user: opts.user, hooks: opts.hooks, autoApprove: opts.autoApprove, decide: opts.decide };
      program.setOptionValue('exitCode', await withKernel(program, (k) => runCommand(k, agent, prompt, run)));
    });

  for (const action of ['approve', 'reject', 'reject-continue'] as const) {
    const what = { approve: 'approve the pending tool call(s) and resume', reject: 'reject and stop the operation', 'reject-continue': 'reject the pending tool call(s); the model sees the reason and goes on' }[action];
    program
      .command(action)
      .description(`${what} (works after a restart: the pending state is in the store)`)
      .argument('<operationId>', 'the parked operation')
      .option('--tool-call <id>', 'only this tool call')
      .option('--reason <text>', 'rejection reason shown to the model')
      .option('--json', 'print NDJSON events')
      .action(async (operationId: string, opts) => {
        program.setOptionValue('exitCode', await withKernel(program, (k) => decideCommand(k, action, operationId, opts)));
      });
  }

  program
    .command('resume')
    .description('continue an operation a crashed or killed process left running, from its last committed step')
    .argument('<operationId>', 'the running operation')
    .option('--force', `resume even if it was updated in the last ${RESUME_QUIET_MS / 1000} s (only when you know its process is gone)`)
    .option('--json', 'print NDJSON events')
    .action(async (operationId: string, opts) => {
      program.setOptionValue('exitCode', await withKernel(program, (k) => resumeCommand(k, operationId, opts)));
    });

  program
    .command('abort')
    .description('end a running or parked operation as interrupted (also one a crashed process left running)')
    .argument('<operationId>', 'the operation')
    .option('--json', 'print NDJSON events')
    .action(async (operationId: string, opts) => {
      program.setOptionValue('exitCode', await withKernel(program, (k) => abortCommand(k, operationId, opts)));
    });

  program
    .command('plugins')
    .description('list the plugins the config selects, with their state after start')
    .option('--json', 'print JSON')
    .action(async (opts) => {
      program.setOptionValue(
        'exitCode',
        await withKernel(program, async (k) => {
          const list = k.plugins();
          if (opts.json) process.stdout.write(JSON.stringify(list, null, 2) + '\n');
          else for (const p of list) process.stdout.write(`${p.id.padEnd(18)} ${p.state.padEnd(9)} ${p.description ?? ''}${p.error ? `  error: ${p.error}` : ''}\n`);
          return EXIT.ok;
        }),
      );
    });

  program
    .command('operations')
    .description('list stored operations, newest first')
    .option('--status <status>', 'running | waiting_approval | done | error | interrupted')
    .option('--json', 'print JSON')
    .action(async (opts) => {
      program.setOptionValue(
        'exitCode',
        await withKernel(program, async (k) => {
          const ops = await k.listOperations({ status: opts.status, limit: 50 });
          if (opts.json) process.stdout.write(JSON.stringify(ops.map(({ agent: _a, ...rest }) => rest), null, 2) + '\n');
          else for (const o of ops) process.stdout.write(`${o.id}  ${o.agentId.padEnd(16)} ${o.status.padEnd(16)} ${o.reason ?? ''}  ${o.updatedAt}\n`);
          return EXIT.ok;
        }),
      );
    });

  program
    .command('show')
    .description('print a stored operation: its steps and messages')
    .argument('<operationId>')
    .option('--json', 'print JSON')
    .action(async (operationId: string, opts) => {
      program.setOptionValue(
        'exitCode',
        await withKernel(program, async (k) => {
          const op = await k.getOperation(operationId);
          if (!op) {
            process.stderr.write(`error: no operation has id ${operationId}\n`);
            return EXIT.usage;
          }
          const [steps, messages] = await Promise.all([k.listSteps(operationId), k.listMessages(operationId, { includeCompacted: true })]);
          if (opts.json) {
            const { agent: _a, ...rest } = op;
            process.stdout.write(JSON.stringify({ operation: rest, steps, messages }, null, 2) + '\n');
          } else {
            process.stdout.write(`${op.id}  agent ${op.agentId}  ${op.status} ${op.reason ?? ''}\n`);
            for (const s of steps) process.stdout.write(`  step ${s.stepIndex} ${s.kind.padEnd(22)} ${JSON.stringify(s.summary)}\n`);
            for (const m of messages) process.stdout.write(`  [${m.seq}] ${m.role}${m.compactedInto ? ' (compacted)' : ''}: ${m.content.slice(0, 120).replace(/\n/g, ' ')}\n`);
          }
          return EXIT.ok;
        }),
      );
    });

  addPolicyCommands(program, (body) => withKernel(program, body));

  const webhook = program.command('webhook').description('tools for webhook receivers');
  webhook
    .command('secret')
    .description('print a new Standard Webhooks signing secret (whsec_...) for webhooks.signing.secretEnv')
    .action(() => {
      process.stdout.write(generateSigningSecret() + '\n');
      program.setOptionValue('exitCode', EXIT.ok);
    });
  webhook
    .command('verify')
    .description('run an example receiver that verifies signed hookgate webhooks and answers a fixed decision')
    .option('--port <port>', 'port on 127.0.0.1', '8787')
    .option('--secret-env <name>', 'env var holding the whsec_ secret', 'WEBHOOK_SIGNING_SECRET')
    .option('--decision <decision>', 'allow | deny | none (notification answer)', 'allow')
    .option('--reason <text>', 'deny reason')
    .action(async (opts) => {
      const secret = process.env[opts.secretEnv];
      if (!secret) {
        process.stderr.write(`error: set ${opts.secretEnv} to the whsec_ secret (hookgate webhook secret makes one)\n`);
        program.setOptionValue('exitCode', EXIT.usage);
        return;
      }
      if (!['allow', 'deny', 'none'].includes(opts.decision)) throw new InvalidArgumentError('--decision must be allow, deny or none');
      const server = await serveWebhookReceiver({
        port: Number(opts.port),
        secret,
        decision: opts.decision,
        reason: opts.reason,
        onPayload: (p) => process.stdout.write(`verified ${JSON.stringify(p)}\n`),
        onRefused: (why) => process.stdout.write(`refused: ${why}\n`),
      });
      process.stdout.write(`listening on http://127.0.0.1:${(server.address() as { port: number }).port}/ (Ctrl-C to stop)\n`);
      await new Promise<void>((resolve) => process.once('SIGINT', () => server.close(() => resolve())));
      program.setOptionValue('exitCode', EXIT.ok);
    });

  return program;
}

function parseDecisions(value: string): string[] {
  const list = value.split(',').map((s) => s.trim()).filter(Boolean);
  const bad = list.find((d) => !['approve', 'reject', 'continue'].includes(d));
  if (bad) throw new InvalidArgumentError(`"${bad}" is not a decision; use approve, reject or continue`);
  return list;
}

/** Runs the CLI with argv; resolves the exit code. Errors are printed without stack traces. */
export async function runCli(argv: readonly string[]): Promise<number> {
  const program = buildProgram();
  if (argv.length === 0) {
    process.stderr.write(program.helpInformation());
    return EXIT.usage;
  }
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return (program.getOptionValue('exitCode') as number | undefined) ?? EXIT.ok;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') return EXIT.ok;
      return EXIT.usage;
    }
    process.stderr.write(`error: ${errorMessage(err)}\n`);
    if (isHookgateError(err) && process.env.HOOKGATE_DEBUG) process.stderr.write(`${err.stack}\n`);
    return exitCodeFor(err);
  }
}
