import { Argument, Command, CommanderError, Option } from 'commander';
import { errorMessage, isHookgateError } from '../../kernel/errors.js';
import { CliSession } from './cli-session.js';
import { COMPLETION_SHELLS, completionScript, type CompletionShell } from './completion.js';
import { EXIT, EXIT_CODE_TABLE, exitCodeFor } from './exit-codes.js';
import { isAgentModule, runAgentModule } from './run-agent-module.js';
import { resolveOperation } from './id-prefix.js';
import { choiceList, choiceOption, portNumber, wholeNumber } from './option-values.js';
import { packageVersion } from './package-version.js';
import { decideCommand, runCommand } from './run-command.js';
import { abortCommand, resumeCommand } from './recovery-commands.js';
import { pruneCommand } from './prune-command.js';
import { serveCommand, serveTokenCommand } from './serve-command.js';
import { workerCommand } from './worker-command.js';
import { storeName } from './store-name.js';
import { usageText } from './usage-text.js';
import { serveWebhookReceiver } from './webhook-receiver.js';
import { addPolicyCommands } from './policy-commands.js';
import { generateSigningSecret } from '../../kernel/hooks/webhook/signing.js';
import { initCommand } from './init/init-command.js';

/** What `operations --status` accepts: every operation status. */
const OPERATION_STATUSES = ['running', 'waiting_approval', 'waiting_tool', 'done', 'error', 'interrupted'] as const;
/** Largest `--limit` of a listing. */
export const MAX_LIST_LIMIT = 10_000;

/** What `--reason` does on each decision command (approve takes none: an approval needs no reason). */
const REASON_HELP = {
  reject:
    'why you stop it: the rejected call(s) get the result "The user rejected this tool call: <text>", and afterHumanIntervention / onStopByHumanIntervention hooks get it as rejectionReason',
  'reject-continue':
    'why: the model reads "The user rejected this tool call: <text>" as the call\'s result and goes on; afterHumanIntervention hooks get it as rejectionReason',
} as const;

/** The exit-code table, as `--help` prints it. */
function exitCodeHelp(): string {
  return `\nExit codes (every command, text and --json alike):\n${EXIT_CODE_TABLE.map((e) => `  ${e.code}  ${e.meaning}`).join('\n')}\n`;
}

/** The `hookgate` command line. Returns the exit code instead of exiting, so specs can drive it. */
export function buildProgram(): Command {
  const program = new Command('hookgate')
    .description('hookgate: an agent runtime with lifecycle hooks, webhook controls and policy-as-code')
    .version(packageVersion(), '-V, --version', 'print the hookgate version')
    .option('-c, --config <file>', 'config file (default: ./hookgate.config.yaml, else embedded defaults)')
    .addOption(new Option('-q, --quiet', 'log errors only (log level error, whatever log.level says)').conflicts('verbose'))
    .addOption(new Option('-v, --verbose', 'log everything (log level debug: model requests, migrations...)'))
    .addHelpText('after', exitCodeHelp())
    .showHelpAfterError()
    .exitOverride();
  const session = new CliSession(program);
  const exitWith = (code: number) => program.setOptionValue('exitCode', code);

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
    .description('run an agent file and print its timeline of steps, streamed text and tool calls as they happen')
    .argument('<agent>', 'agent file (YAML), or an agent module (.js/.mjs) exporting agent functions')
    .argument('[prompt]', 'what to ask the agent (default for an agent file: its description; an agent module needs one)')
    .option('--json', 'print NDJSON events instead of the timeline')
    .option('--user <id>', 'the user the run acts for (hook payloads carry it and their email)')
    .option('--thread <id>', 'continue this thread (show prints an operation\'s thread): the model sees its whole history first')
    .option('--hooks <module>', 'a JS module exporting a list of hooks (handlers and webhooks)')
    .option('--auto-approve', 'approve every approval request without asking')
    .option('--decide <list>', 'answers for successive approval requests, comma-separated: approve, reject, continue', choiceList(['approve', 'reject', 'continue']))
    .option('--id <id>', 'agent module: the instance to send to (the same id continues its conversation; default a new one)')
    .option('--agent <name>', 'agent module: which exported agent, when it exports several')
    .option('--initial-data <json>', 'agent module: instance-creation data, for the send that creates the instance')
    .action(async (agent: string, prompt: string | undefined, opts) => {
      if (isAgentModule(agent)) {
        exitWith(await runAgentModule(session, agent, prompt, { json: opts.json, id: opts.id, agent: opts.agent, initialData: opts.initialData }));
        return;
      }
      const run = { json: opts.json, user: opts.user, thread: opts.thread, hooks: opts.hooks, autoApprove: opts.autoApprove, decide: opts.decide };
      exitWith(await session.withKernel((k) => runCommand(session, k, agent, prompt, run)));
    });

  for (const action of ['approve', 'reject', 'reject-continue'] as const) {
    const what = { approve: 'approve the pending tool call(s) and resume', reject: 'reject and stop the operation', 'reject-continue': 'reject the pending tool call(s); the model sees the reason and goes on' }[action];
    const command = program
      .command(action)
      .description(`${what} (works after a restart: the pending state is in the store)`)
      .argument('<operationId>', 'the parked operation: its id or a unique prefix of it')
      .option('--tool-call <id>', 'only this pending tool call (its id, as the timeline shows it, or a unique prefix); default: all of them')
      .option('--json', 'print NDJSON events');
    if (action !== 'approve') command.option('--reason <text>', REASON_HELP[action]);
    command.action(async (operationId: string, opts) => {
      exitWith(await session.withKernel((k) => decideCommand(session, k, action, operationId, opts)));
    });
  }

  program
    .command('resume')
    .description('continue an operation a crashed or killed process left running, from its last committed step')
    .argument('<operationId>', 'the running operation: its id or a unique prefix of it')
    .option('--force', "take over the operation's lease before it expires (only when you know the process running it is gone)")
    .option('--json', 'print NDJSON events')
    .action(async (operationId: string, opts) => {
      exitWith(await session.withKernel((k) => resumeCommand(session, k, operationId, opts)));
    });

  program
    .command('abort')
    .description('end a running or parked operation as interrupted (also one a crashed process left running)')
    .argument('<operationId>', 'the operation: its id or a unique prefix of it')
    .option('--json', 'print NDJSON events')
    .action(async (operationId: string, opts) => {
      exitWith(await session.withKernel((k) => abortCommand(session, k, operationId, opts)));
    });

  program
    .command('plugins')
    .description('list the plugins the config selects, with their state after start')
    .option('--json', 'print JSON')
    .action(async (opts) => {
      program.setOptionValue(
        'exitCode',
        await session.withKernel(async (k) => {
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
    .addOption(choiceOption('--status <status>', 'only operations with this status', OPERATION_STATUSES))
    .option('--limit <n>', `at most this many (1 to ${MAX_LIST_LIMIT.toLocaleString('en-US')})`, wholeNumber(1, MAX_LIST_LIMIT), 50)
    .option('--json', 'print JSON')
    .action(async (opts) => {
      program.setOptionValue(
        'exitCode',
        await session.withKernel(async (k) => {
          const ops = await k.listOperations({ status: opts.status, limit: opts.limit });
          if (opts.json) process.stdout.write(JSON.stringify(ops.map(({ agent: _a, ...rest }) => rest), null, 2) + '\n');
          else for (const o of ops) process.stdout.write(`${o.id}  ${o.agentId.padEnd(16)} ${o.status.padEnd(16)} ${o.reason ?? ''}  ${o.updatedAt}\n`);
          return EXIT.ok;
        }),
      );
    });

  program
    .command('show')
    .description('print a stored operation: its steps and messages')
    .argument('<operationId>', 'its id or a unique prefix of it')
    .option('--json', 'print JSON')
    .action(async (typedId: string, opts) => {
      program.setOptionValue(
        'exitCode',
        await session.withKernel(async (k) => {
          const op = await resolveOperation(k.store, typedId, storeName(k.config));
          const operationId = op.id;
          const [steps, messages] = await Promise.all([k.listSteps(operationId), k.listMessages(operationId, { includeCompacted: true })]);
          if (opts.json) {
            const { agent: _a, ...rest } = op;
            process.stdout.write(JSON.stringify({ operation: rest, steps, messages }, null, 2) + '\n');
          } else {
            process.stdout.write(`${op.id}  agent ${op.agentId}  ${op.status} ${op.reason ?? ''}\n`);
            process.stdout.write(`  thread ${op.threadId}\n`);
            for (const s of steps) {
              const used = usageText(s.usage);
              process.stdout.write(`  step ${s.stepIndex} ${s.kind.padEnd(22)} ${JSON.stringify(s.summary)}${used ? `  · ${used}` : ''}\n`);
            }
            const total = usageText(op.state.usage);
            if (total) process.stdout.write(`  total ${total}\n`);
            for (const m of messages) process.stdout.write(`  [${m.seq}] ${m.role}${m.compactedInto ? ' (compacted)' : ''}: ${m.content.slice(0, 120).replace(/\n/g, ' ')}\n`);
          }
          return EXIT.ok;
        }),
      );
    });

  program
    .command('prune')
    .description("remove what the config's retention no longer keeps (finished threads by age and count per agent, old decisions) and reclaim the space; the store-retention plugin does the same every retention.interval")
    .option('--dry-run', 'count what would go, remove nothing')
    .option('--json', 'print JSON')
    .action(async (opts) => {
      exitWith(await session.withKernel((k) => pruneCommand(k, { dryRun: opts.dryRun, json: opts.json })));
    });

  addPolicyCommands(program, (body) => session.withKernel(body));

  const serve = program
    .command('serve')
    .description('serve agent modules over HTTP (document 001 agent routes at /agents/<identity>) and the operator routes (/operator), behind the API tokens of serve.tokens')
    .argument('[modules...]', 'agent modules (.js/.mjs) to serve, besides those in serve.agents')
    .option('--host <host>', 'listen address (default serve.host, 127.0.0.1); without API tokens only a loopback address')
    .option('--port <port>', 'listen port (default serve.port, 8787; 0 picks a free one)', portNumber)
    .action(async (modules: string[], opts) => {
      exitWith(await serveCommand(session, modules, { host: opts.host, port: opts.port }));
    });
  serve
    .command('token')
    .description('mint an API token: prints it once, and the serve.tokens entry (its SHA-256) that accepts it')
    .argument('[name]', 'a name for the token (shown in logs, never the token)', 'default')
    .action((name: string) => {
      exitWith(serveTokenCommand(name));
    });

  program
    .command('worker')
    .description('queue mode (execution: queue): run the steps of operations from Redis until SIGTERM or SIGINT, which let the steps in flight finish first')
    .argument('[files...]', 'agent modules (.js/.mjs) whose operations this worker runs, besides those in serve.agents, and agent files (.yaml) whose sub-agents it starts')
    .action(async (modules: string[]) => {
      exitWith(await workerCommand(session, modules));
    });

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
    .option('--port <port>', 'port on 127.0.0.1 (0: any free port)', portNumber, 8787)
    .option('--secret-env <name>', 'env var holding the whsec_ secret', 'WEBHOOK_SIGNING_SECRET')
    .addOption(choiceOption('--decision <decision>', 'what control hooks get back (none: a notification answer)', ['allow', 'deny', 'none']).default('allow'))
    .option('--reason <text>', 'the reason sent with --decision deny')
    .action(async (opts) => {
      const secret = process.env[opts.secretEnv];
      if (!secret) {
        process.stderr.write(`error: set ${opts.secretEnv} to the whsec_ secret (hookgate webhook secret makes one)\n`);
        program.setOptionValue('exitCode', EXIT.usage);
        return;
      }
      const server = await serveWebhookReceiver({
        port: opts.port,
        secret,
        decision: opts.decision,
        reason: opts.reason,
        onPayload: (p) => process.stdout.write(`verified ${JSON.stringify(p)}\n`),
        onRefused: (why) => process.stdout.write(`refused: ${why}\n`),
      });
      // Ctrl-C is handled before "listening" is printed, so a script that stops it on that line never races the handler.
      const stopped = new Promise<void>((resolve) => process.once('SIGINT', () => server.close(() => resolve())));
      process.stdout.write(`listening on http://127.0.0.1:${(server.address() as { port: number }).port}/ (Ctrl-C to stop)\n`);
      await stopped;
      program.setOptionValue('exitCode', EXIT.ok);
    });

  program
    .command('completion')
    .description('print a shell completion script: source <(hookgate completion bash); zsh and fish alike')
    .addArgument(new Argument('<shell>', 'the shell').choices(COMPLETION_SHELLS))
    .action((shell: CompletionShell) => {
      process.stdout.write(completionScript(program, shell));
      exitWith(EXIT.ok);
    });

  return program;
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
