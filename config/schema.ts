import * as v from 'valibot';
import { PostgresSchema } from './postgres-schema.js';
import { PLUGIN_ID_PATTERN } from '../kernel/plugin.js';
import { McpSchema } from './mcp-schema.js';
import { ServeSchema } from './serve-schema.js';
import { RetentionSchema } from './retention-schema.js';
import { EXECUTION_MODES, QueueSchema } from './queue-schema.js';

/** Accepts a number, or a numeric string (as env vars give). */
const numberLike = v.union(
  [
    v.number(),
    v.pipe(
      v.string(),
      v.regex(/^-?\d+(\.\d+)?$/, 'expected a number'),
      v.transform((s) => Number(s)),
    ),
  ],
  'expected a number',
);

const formatNumber = (n: number) => n.toLocaleString('en-US');

/**
 * A whole number (or numeric string) from `min` to `max`; the message names
 * the allowed range, so `deadlineMs: -5` reads
 * `policies.deadlineMs: expected a whole number from 10 to 60,000 (milliseconds), got -5`.
 */
export function integerInRange(min: number, max: number, unit: string) {
  return v.pipe(
    numberLike,
    v.check((n) => Number.isInteger(n) && n >= min && n <= max, `expected a whole number from ${formatNumber(min)} to ${formatNumber(max)} (${unit})`),
  );
}

/** `runtime.takeOver`: who continues an abandoned operation. */
export const TAKE_OVER_MODES = ['off', 'start', 'watch'] as const;

/** The documented ranges of every numeric key (README, Configuration). */
export const NUMERIC_RANGES = {
  'models.openai.timeoutSeconds': { min: 1, max: 3600, none: 0 },
  'models.openai.maxRetries': { min: 0, max: 10 },
  'models.anthropic.timeoutSeconds': { min: 1, max: 3600, none: 0 },
  'models.anthropic.maxRetries': { min: 0, max: 10 },
  'models.anthropic.maxOutputTokens': { min: 1, max: 1_000_000 },
  'policies.deadlineMs': { min: 10, max: 60_000 },
  'policies.maxWorkers': { min: 1, max: 64 },
  'policies.maxInFlight': { min: 1, max: 1_000_000 },
  'hooks.handlerTimeoutMs': { min: 10, max: 3_600_000 },
  'runtime.leaseMs': { min: 100, max: 3_600_000 },
} as const;

const timeoutSecondsRange = NUMERIC_RANGES['models.openai.timeoutSeconds'];
/** Seconds (fractions allowed) from 1 to 3600, or 0 for no timeout. */
const timeoutSeconds = v.pipe(
  numberLike,
  v.check(
    (n) => n === timeoutSecondsRange.none || (Number.isFinite(n) && n >= timeoutSecondsRange.min && n <= timeoutSecondsRange.max),
    `expected 0 (no timeout) or a number of seconds from ${timeoutSecondsRange.min} to ${formatNumber(timeoutSecondsRange.max)}`,
  ),
);

/** Retries of one model call after its first attempt (the same range for every provider). */
const maxRetries = integerInRange(NUMERIC_RANGES['models.openai.maxRetries'].min, NUMERIC_RANGES['models.openai.maxRetries'].max, 'retries');

/** The keys every hosted model provider's section has (models.openai, models.anthropic). */
const HOSTED_MODEL_ENTRIES = {
  baseUrl: v.optional(v.pipe(v.string(), v.url('expected an absolute URL'))),
  /** Name of the env var holding the key. The key itself never goes in a file. */
  apiKeyEnv: v.optional(v.string()),
  model: v.optional(v.string()),
  timeoutSeconds: v.optional(timeoutSeconds),
  /** Retries after the first attempt on 408, 409, 429, 5xx and network errors (the SDK's backoff, honouring Retry-After). */
  maxRetries: v.optional(maxRetries),
};

/**
 * A file or folder path: not empty or blank (`""` would resolve to the config
 * folder itself), no NUL byte, no leading `~` (never expanded: it would name a
 * folder called `~`). Relative paths resolve against the config file's folder.
 */
const pathString = v.pipe(
  v.string(),
  v.check((s) => s.trim() !== '', 'expected a non-empty path'),
  v.check((s) => !s.includes('\0'), 'expected a path without NUL bytes'),
  v.check((s) => !/^~(?:[\\/]|$)/.test(s), 'expected a path without a leading "~" (it is not expanded: write the full path)'),
);

/** Accepts a list, or a comma-separated string (as env vars give). */
const stringList = v.union(
  [
    v.array(v.string()),
    v.pipe(
      v.string(),
      v.transform((s) => s.split(',').map((x) => x.trim()).filter(Boolean)),
    ),
  ],
  'expected a list of strings or a comma-separated string',
);

/** Accepts a boolean, or "true"/"false" (as env vars give). */
const booleanLike = v.union([v.boolean(), v.pipe(v.picklist(['true', 'false']), v.transform((s) => s === 'true'))], 'expected true or false');

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;

/** The shape of hookgate.config.yaml. Unknown keys are errors, so typos never pass silently. */
export const ConfigSchema = v.strictObject({
  /** Where embedded state lives; default ./.hookgate */
  dataDir: v.optional(pathString),
  log: v.optional(
    v.strictObject({
      level: v.optional(v.picklist(LOG_LEVELS)),
      format: v.optional(v.picklist(['json', 'pretty'])),
    }),
  ),
  store: v.optional(
    v.strictObject({
      /**
       * The store driver: the name a store plugin declares (`drivers: [{ kind: 'store', name: 'sqlite' }]`).
       * Any name is accepted here; the plugin catalog (plugins/catalog.ts) refuses one no loaded plugin provides, listing those that are.
       */
      driver: v.optional(v.pipe(v.string(), v.regex(/^[a-z][a-z0-9-]*$/, 'expected a store driver name (lowercase, such as sqlite or memory)'))),
      sqlite: v.optional(
        v.strictObject({
          path: v.optional(pathString),
          /** Copy WAL frames into the file on a worker thread instead of on the writer's (default true). */
          backgroundCheckpoints: v.optional(booleanLike),
        }),
      ),
      /** store-postgres (`driver: postgres`): server, database, user, the password's variable name, schema (postgres-schema.ts). */
      postgres: v.optional(PostgresSchema),
    }),
  ),
  /** The only folder the fs tools reach; checked at load against the data folder, the config folder, policies (check-sandbox-root.ts). */
  sandbox: v.optional(v.strictObject({ root: v.optional(pathString) })),
  models: v.optional(
    v.strictObject({
      /** baseUrl without `/chat/completions`; apiKeyEnv default OPENAI_API_KEY. */
      openai: v.optional(v.strictObject(HOSTED_MODEL_ENTRIES)),
      anthropic: v.optional(
        // baseUrl without `/v1/messages` (default https://api.anthropic.com); apiKeyEnv default ANTHROPIC_API_KEY.
        v.strictObject({
          ...HOSTED_MODEL_ENTRIES,
          /** `max_tokens` when the agent file sets no maxOutputTokens (the Messages API requires one). */
          maxOutputTokens: v.optional(
            integerInRange(NUMERIC_RANGES['models.anthropic.maxOutputTokens'].min, NUMERIC_RANGES['models.anthropic.maxOutputTokens'].max, 'tokens'),
          ),
        }),
      ),
    }),
  ),
  webhooks: v.optional(
    v.strictObject({
      /** Base for app-relative webhook URLs seen from outside. */
      publicBaseUrl: v.optional(v.pipe(v.string(), v.url('expected an absolute URL'))),
      /** Base for app-relative webhook URLs inside the deployment (wins over publicBaseUrl). */
      internalBaseUrl: v.optional(v.pipe(v.string(), v.url('expected an absolute URL'))),
      qstash: v.optional(
        v.strictObject({
          url: v.optional(v.pipe(v.string(), v.url('expected an absolute URL'))),
          /** Env var holding the QStash token (default QSTASH_TOKEN). */
          tokenEnv: v.optional(v.string()),
        }),
      ),
      signing: v.optional(
        v.strictObject({
          /** Env var holding a `whsec_` Standard Webhooks secret. */
          secretEnv: v.optional(v.string()),
        }),
      ),
    }),
  ),
  policies: v.optional(
    v.strictObject({
      paths: v.optional(stringList),
      defaultDecision: v.optional(v.picklist(['allow', 'deny'])),
      /** Per-decision deadline; JSONata's own timeout is 80% of it. */
      deadlineMs: v.optional(integerInRange(NUMERIC_RANGES['policies.deadlineMs'].min, NUMERIC_RANGES['policies.deadlineMs'].max, 'milliseconds')),
      /** Worker threads for conditions and code policies; default one per core the process may use, at most 8. */
      maxWorkers: v.optional(integerInRange(NUMERIC_RANGES['policies.maxWorkers'].min, NUMERIC_RANGES['policies.maxWorkers'].max, 'worker threads')),
      /** Decisions queued for or in a worker at once; one more is refused as `policy_overloaded` (default 1,024). */
      maxInFlight: v.optional(integerInRange(NUMERIC_RANGES['policies.maxInFlight'].min, NUMERIC_RANGES['policies.maxInFlight'].max, 'decisions')),
      logRawArgs: v.optional(booleanLike),
      hotReload: v.optional(booleanLike),
    }),
  ),
  hooks: v.optional(
    v.strictObject({
      /** How long one local hook handler call may take, in ms (default 30,000); past it the call counts as that hook's error. */
      handlerTimeoutMs: v.optional(
        integerInRange(NUMERIC_RANGES['hooks.handlerTimeoutMs'].min, NUMERIC_RANGES['hooks.handlerTimeoutMs'].max, 'milliseconds'),
      ),
    }),
  ),
  runtime: v.optional(
    v.strictObject({
      /**
       * How long an operation's lease lasts without renewal, in ms (default 30,000): the process running an operation
       * renews it every third of this; when that process dies, another one can take the operation over once it expires.
       */
      leaseMs: v.optional(integerInRange(NUMERIC_RANGES['runtime.leaseMs'].min, NUMERIC_RANGES['runtime.leaseMs'].max, 'milliseconds')),
      /**
       * Whether this process takes over operations left `running` by a process that died or stopped (their lease
       * expired or was released): `off` (only `hookgate resume` does), `start` (once, when the kernel starts) or
       * `watch` (at start and then every leaseMs). Default `off`: a one-shot command never runs someone else's tools.
       */
      takeOver: v.optional(v.picklist(TAKE_OVER_MODES, `expected one of ${TAKE_OVER_MODES.join(', ')}`)),
    }),
  ),
  /** Where steps run: `in-process` (default) or `queue` (BullMQ on Redis; `hookgate worker` processes run them). */
  execution: v.optional(v.picklist(EXECUTION_MODES, `expected one of ${EXECUTION_MODES.join(', ')}`)),
  /** Queue mode's Redis and workers (queue-schema.ts). */
  queue: v.optional(QueueSchema),
  /** What the store keeps: finished threads by age and count per agent, the decision log by age and count (retention-schema.ts). */
  retention: v.optional(RetentionSchema),
  /** MCP servers by name, connected when the kernel starts; their tools are mcp__<name>__<tool> (mcp-schema.ts). */
  mcp: v.optional(McpSchema),
  /** `hookgate serve`: listen address, agent modules to mount, API tokens (hashed) (serve-schema.ts). */
  serve: v.optional(ServeSchema),
  plugins: v.optional(
    v.strictObject({
      /**
       * Each plugin's own settings, by plugin id: `settings: { greeting-tools: { greeting: Hi } }`.
       * Here only the ids are checked; each plugin's `settings` schema checks its section when the kernel starts
       * (kernel/plugin-settings.ts), and a section for a plugin that is not loaded is refused there.
       */
      settings: v.optional(
        v.record(
          v.pipe(v.string(), v.regex(PLUGIN_ID_PATTERN, 'expected a plugin id (kebab-case, such as greeting-tools)')),
          v.unknown(),
        ),
      ),
      /**
       * Plugin modules to load when the kernel starts: a path (relative to the config file's folder; absolute allowed)
       * or a package name, each module's default export a plugin (plugins/plugin-modules.ts).
       */
      extra: v.optional(
        v.pipe(
          stringList,
          v.check((list) => list.every((s) => s.trim() !== '' && !s.includes('\0')), 'expected module paths or package names, none empty'),
        ),
      ),
    }),
  ),
});

export type ConfigInput = v.InferInput<typeof ConfigSchema>;
export type ParsedConfig = v.InferOutput<typeof ConfigSchema>;
