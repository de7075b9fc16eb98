import { createLogger, SecretScrubber, type Logger } from '../../kernel/logger.js';

/**
 * A debug-level logger that keeps every line (already scrubbed by `scrubber`)
 * for assertions, in the order written. Synchronous; never writes to stderr.
 */
export function captureLogger(scrubber = new SecretScrubber()): { logger: Logger; lines: string[]; scrubber: SecretScrubber } {
  const lines: string[] = [];
  return { logger: createLogger({ level: 'debug', scrubber, sink: (line) => lines.push(line) }), lines, scrubber };
}
