import type { Command } from 'commander';
import { createKernel } from '../../index.js';
import { loadConfig } from '../../config/load-config.js';
import type { HookgateConfig } from '../../config/defaults.js';
import type { Kernel } from '../../kernel/kernel.js';
import { createLogger, SecretScrubber, type LogLevel, type LogRecord } from '../../kernel/logger.js';
import { TimelinePrinter } from './timeline-printer.js';

/** The options every command takes (before or after its name). */
export interface GlobalOptions {
  config?: string;
  quiet?: boolean;
  verbose?: boolean;
}

/**
 * What one `hookgate` invocation shares between its commands: the global
 * options, the config they select, the kernel's logger, and who prints a
 * failure.
 *
 * Each failure is printed once. While a command shows an operation's
 * timeline, the timeline owns every operation's outcome: in text mode the
 * `✗ error after N steps: <why>` line on stdout, in `--json` mode the
 * `operation_finished` event (with `error`). The runtime's own "operation
 * failed" log record says the same thing, so the CLI's log sink drops it then;
 * every other log record goes to stderr (JSON lines, or pino-pretty's lines
 * with `log.format: pretty`), after the secret scrubber, at the level the
 * config, `--quiet` or `--verbose` chose. An error that ends a command is
 * printed by `runCli` as one `error: ...` line on stderr.
 */
export class CliSession {
  /** Timelines on screen now; while any is, operation outcomes are theirs to print. */
  private timelines = 0;

  constructor(private readonly program: Command) {}

  get options(): GlobalOptions {
    return this.program.opts<GlobalOptions>();
  }

  /** The config the global options select, with the log level `--quiet` / `--verbose` ask for. */
  config(): HookgateConfig {
    const config = loadConfig({ file: this.options.config });
    const level = this.levelOverride();
    return level ? { ...config, log: { ...config.log, level } } : config;
  }

  /** Starts a kernel on {@link config}, runs `body`, always stops the kernel. */
  async withKernel(body: (kernel: Kernel) => Promise<number>): Promise<number> {
    const config = this.config();
    const scrubber = new SecretScrubber();
    const logger = createLogger({ level: config.log.level, format: config.log.format, scrubber, sink: (line, record) => this.writeLog(line, record) });
    const kernel = createKernel({ config, logger, scrubber });
    try {
      await kernel.start();
      return await body(kernel);
    } finally {
      await kernel.stop();
    }
  }

  /**
   * Prints the kernel's operation events until the returned function is
   * called: the timeline on stdout, or one JSON event a line with `json`.
   */
  showTimeline(kernel: Kernel, json: boolean | undefined): () => void {
    const printer = json ? undefined : new TimelinePrinter(process.stdout);
    const off = kernel.events.on((event) => (printer ? printer.handle(event) : process.stdout.write(JSON.stringify(event) + '\n')));
    this.timelines += 1;
    let closed = false;
    return () => {
      if (closed) return;
      closed = true;
      this.timelines -= 1;
      off();
      printer?.close();
    };
  }

  private levelOverride(): LogLevel | undefined {
    const { quiet, verbose } = this.options;
    if (quiet) return 'error';
    if (verbose) return 'debug';
    return undefined;
  }

  private writeLog(line: string, record: LogRecord): void {
    if (this.timelines > 0 && reportsOperationOutcome(record)) return;
    process.stderr.write(line + '\n');
  }
}

/**
 * The runtime's record of an operation that failed: the `operation_finished`
 * event carries the same error, so a timeline on screen already shows it.
 */
function reportsOperationOutcome(record: LogRecord): boolean {
  return record.component === 'runtime' && record.msg === 'operation failed' && typeof record.operationId === 'string';
}
