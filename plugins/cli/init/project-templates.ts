/**
 * The files `hookgate init` writes, in one place: a config, an agent on the
 * scripted model (no key, no network), a policy pack with inline tests, a
 * hooks module, a plugin skeleton with an embedding script that loads it
 * (the config's `plugins.extra` can load it too, once the project has
 * `hookgate` installed for the plugin's import), and a README. Every file
 * works as generated: spec/cli/init.spec.ts runs each one.
 */

/** One file of the scaffolded project. */
export interface ProjectTemplate {
  /** Path inside the project folder, `/`-separated. */
  readonly path: string;
  /** What the file is for, as `hookgate init` prints it. */
  readonly purpose: string;
  readonly content: string;
}

const CONFIG = `# hookgate.config.yaml, made by \`hookgate init\`. Every key is optional; these are the defaults spelled out.
# HOOKGATE_* environment variables override the file (HOOKGATE_STORE__DRIVER=memory).
dataDir: ./.hookgate                    # the SQLite file and the sandbox live here
store: { driver: sqlite }               # or memory
sandbox: { root: ./.hookgate/sandbox }  # the fs/* tools see only this folder
policies: { paths: [policies], defaultDecision: allow }
log: { level: warn }
# Nothing is pruned by default. To bound the store (also: hookgate prune [--dry-run]):
# retention: { maxAge: 30d, maxOperations: 1000, decisionLog: { maxAge: 90d }, interval: 1h }
# The plugin skeleton, loaded by path (it imports 'hookgate', so first: npm install hookgate):
# plugins: { extra: [./plugins/hello-tools.mjs] }
# A real model: models: { openai: { apiKeyEnv: OPENAI_API_KEY, model: gpt-4o-mini } }
`;

const AGENT = `# A first agent, made by \`hookgate init\`: hookgate run agents/assistant.yaml
# The scripted model plays the turns below, so it runs with no key and no network. For a real model use
# model: { provider: openai, name: gpt-4o-mini } (and set OPENAI_API_KEY).
id: assistant
description: Write a note into the sandbox, read it back, check the time and try to read a .env file.
instructions: You are a careful assistant working in a sandboxed folder.
model:
  provider: scripted
  turns:
    - text: I'll write the note first.
      toolCalls:
        - { identifier: fs, apiName: writeFile, args: { path: notes/hello.txt, content: "hello from hookgate\\n" } }
    - text: Now I'll read it back and check the time.
      toolCalls:
        - { identifier: fs, apiName: readFile, args: { path: notes/hello.txt } }
        - { identifier: time, apiName: now, args: {} }
    - text: Let me see whether I can read the app's secrets.
      toolCalls:
        - { identifier: fs, apiName: readFile, args: { path: app//.env } }
    - text: Done. notes/hello.txt says "hello from hookgate", and policies/project.yaml blocked reading app/.env.
tools: [fs/*, time/*]                     # allow-list: identifier/apiName, identifier/*, or *
approval: { tools: [fs/deletePath] }      # these park the run until a human decides
limits: { maxSteps: 20 }
`;

const POLICY_PACK = `# This project's tool policies. hookgate policy test runs the inline tests; hookgate policy check compiles the pack.
name: project
policies:
  - id: project.no-env-files
    description: No tool may name a .env file, however the path is spelled.
    events: [beforeToolCall]
    # '*' scans every string argument and its canonical form: app//.env is app/.env.
    args: { '*': '(?:^|/)\\.env(?:\\.[\\w-]+)?$' }
    effect: deny
    reason: .env files hold secrets; reading them is blocked
    tests:
      - name: denies app/.env
        event: { identifier: fs, apiName: readFile, args: { path: app/.env } }
        expect: { effect: deny, reason: .env files hold secrets; reading them is blocked }
      - name: denies another spelling of it (app//.env/)
        event: { identifier: fs, apiName: readFile, args: { path: app//.env/ } }
        expect: { effect: deny }
      - name: allows an ordinary note
        event: { identifier: fs, apiName: readFile, args: { path: notes/hello.txt } }
        expect: { effect: allow }

  - id: project.no-scripts
    description: The agent writes notes, not executable scripts.
    events: [beforeToolCall]
    match: '^fs/writeFile$'                      # re2 on identifier/apiName
    when: '$contains(args.content, "#!")'        # JSONata, run in a worker with time and memory limits
    effect: deny
    reason: writing scripts is not allowed
    tests:
      - name: denies a shell script
        event: { identifier: fs, apiName: writeFile, args: { path: run.sh, content: "#!/bin/sh\\nrm -rf /\\n" } }
        expect: { effect: deny }
      - name: allows a note
        event: { identifier: fs, apiName: writeFile, args: { path: notes/a.txt, content: hello } }
        expect: { effect: allow }
`;

const HOOKS = `// Hooks for: hookgate run agents/assistant.yaml --hooks hooks/audit.mjs
// A hooks module default-exports a list of hooks; a handler gets the event of its \`type\`. A handler that throws
// is logged and never stops the run. \`matcher\` (re2 on identifier/apiName) applies to tool events only.

/** @type {import('hookgate').AgentHook[]} */
export default [
  {
    id: 'audit-tool-calls',
    type: 'afterToolCall',
    handler: (event) => {
      const outcome = event.result.success === false ? \`failed: \${event.result.content}\` : 'ok';
      process.stderr.write(\`[audit] \${event.identifier}/\${event.apiName} -> \${outcome}\\n\`);
    },
  },
  {
    id: 'audit-refusals',
    type: 'onToolCallError',
    handler: (event) => process.stderr.write(\`[audit] \${event.identifier}/\${event.apiName} refused: \${event.error}\\n\`),
  },
  {
    // A mock: time/now never runs, the hook answers (handy for repeatable runs).
    id: 'fixed-clock',
    type: 'beforeToolCall',
    matcher: '^time/now$',
    handler: (event) => event.mock({ content: '2030-01-01T00:00:00.000Z' }),
  },
  {
    id: 'audit-summary',
    type: 'onComplete',
    handler: (event) => process.stderr.write(\`[audit] \${event.agentId} ended (\${event.reason}) after \${event.stepCount} steps\\n\`),
  },
];
`;

const PLUGIN = `// A plugin skeleton: one tool source with one tool, hello/greet.
// A plugin is definePlugin({ id, requires?, provides, register, start?, stop? }): register binds only the tokens
// listed in provides (no I/O), start may do I/O, stop releases it. Load it with the config's
// plugins: { extra: [./plugins/hello-tools.mjs] } (after npm install hookgate: it imports the package), or pass it to
// createKernel({ plugins: [...] }), as embed.mjs does.
import { definePlugin, tokens } from 'hookgate';

export default definePlugin({
  id: 'hello-tools',
  description: 'hello/greet: greets someone by name',
  provides: [tokens.ToolSources],
  register(ctx) {
    ctx.bindValue(tokens.ToolSources, {
      id: 'hello',
      list: () => [
        {
          identifier: 'hello',
          apiName: 'greet',
          toolSource: 'hello',
          description: 'Greets someone by name',
          parameters: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
        },
      ],
      execute: async ({ args }) => \`Hello, \${String(args.name)}!\`,
    });
  },
});
`;

const EMBED = `// Embedding hookgate in your own program, with this project's config, plugin and hooks:
//   npm install hookgate && node embed.mjs "Greet Ada"
import { fileURLToPath } from 'node:url';
import { createKernel } from 'hookgate';
import helloTools from './plugins/hello-tools.mjs';
import hooks from './hooks/audit.mjs';

const here = (file) => fileURLToPath(new URL(file, import.meta.url));
const kernel = createKernel({ config: { file: here('./hookgate.config.yaml') }, plugins: [helloTools] });
await kernel.start();
try {
  kernel.agents.define({
    id: 'greeter',
    model: {
      provider: 'scripted',
      turns: [{ toolCalls: [{ identifier: 'hello', apiName: 'greet', args: { name: 'Ada' } }] }, { text: 'I greeted Ada.' }],
    },
    tools: ['hello/*'],
  });
  const run = await kernel.execAgent({ agentId: 'greeter', prompt: process.argv[2] ?? 'Greet Ada.', hooks });
  const record = await run.completed();
  const messages = await kernel.listMessages(run.operationId);
  for (const m of messages) if (m.role !== 'user' && m.content !== '') console.log(\`\${m.role}: \${m.content}\`);
  console.log(\`operation \${run.operationId}: \${record.reason}\`);
  process.exitCode = record.reason === 'done' ? 0 : 1;
} finally {
  await kernel.stop();
}
`;

const README = `# A hookgate project

Made by \`hookgate init\`. Everything here runs as generated, with no key and no network:

| file | what it is |
|---|---|
| \`hookgate.config.yaml\` | the config \`hookgate\` reads from this folder |
| \`agents/assistant.yaml\` | an agent on the scripted model (it plays the turns in the file) |
| \`policies/project.yaml\` | a policy pack with inline tests |
| \`hooks/audit.mjs\` | a hooks module for \`--hooks\` |
| \`plugins/hello-tools.mjs\` | a plugin skeleton (one tool, \`hello/greet\`) |
| \`embed.mjs\` | a program that embeds hookgate with that plugin and those hooks |

\`\`\`sh
hookgate run agents/assistant.yaml                          # the timeline; the .env read is denied by policy
hookgate run agents/assistant.yaml --hooks hooks/audit.mjs  # the same, with the hooks ([audit] lines on stderr)
hookgate policy test                                        # the pack's inline tests (exit 1 on a failure)
hookgate policy check                                       # compile the pack (exit 2 on errors)
hookgate operations                                         # what the store (./.hookgate/hookgate.db) holds
npm install hookgate && node embed.mjs                      # the plugin's tool, called from your own program
\`\`\`

\`hookgate run\` sees \`plugins/hello-tools.mjs\` once the config lists it (\`plugins: { extra: [./plugins/hello-tools.mjs] }\`,
commented out in \`hookgate.config.yaml\`); the plugin imports \`hookgate\`, so install the package in this folder first.
A program can also pass it to \`createKernel({ plugins: [...] })\`, as \`embed.mjs\` does (then leave it out of
\`plugins.extra\`, or the two copies clash by id). Keep \`.hookgate/\` out of version control.
`;

/** The project \`hookgate init\` writes, in the order it lists them. */
export const PROJECT_TEMPLATES: readonly ProjectTemplate[] = [
  { path: 'hookgate.config.yaml', purpose: 'the config hookgate reads from this folder', content: CONFIG },
  { path: 'agents/assistant.yaml', purpose: 'an agent on the scripted model (no key needed)', content: AGENT },
  { path: 'policies/project.yaml', purpose: 'a policy pack with inline tests', content: POLICY_PACK },
  { path: 'hooks/audit.mjs', purpose: 'a hooks module for --hooks', content: HOOKS },
  { path: 'plugins/hello-tools.mjs', purpose: 'a plugin skeleton (one tool, hello/greet)', content: PLUGIN },
  { path: 'embed.mjs', purpose: 'a program that embeds hookgate with that plugin', content: EMBED },
  { path: 'README.md', purpose: 'what each file is and the commands to try', content: README },
];
