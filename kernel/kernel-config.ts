import type { LogLevel } from './logger.js';

/**
 * The configuration the kernel itself reads: logging, hook delivery, webhook
 * URL bases and signing, and the plugin section (each plugin's settings and
 * the extra plugin modules). It lists no plugin's own section: the bundled
 * plugins read theirs from the full config that `loadConfig` builds
 * (config/defaults.ts `HookgateConfig`, which extends this), and a plugin of
 * your own reads `plugins.settings.<its id>` through its `settings` schema.
 */
export interface KernelConfig {
  /** Folder the config file was read from (or the working directory); relative paths resolve against it. */
  baseDir: string;
  /** Where embedded state lives. */
  dataDir: string;
  log: { level: LogLevel; format: 'json' | 'pretty' };
  /** `handlerTimeoutMs`: bound on one local hook handler call. */
  hooks: { handlerTimeoutMs: number };
  /**
   * `leaseMs`: how long an operation's lease lasts without renewal (renewed every third of it while the operation runs).
   * `takeOver`: whether the kernel continues operations whose process died or stopped: `off`, once at `start`, or
   * `watch` (at start and every leaseMs after).
   */
  runtime?: { leaseMs: number; takeOver?: 'off' | 'start' | 'watch' };
  /** Webhook URL bases and signing (kernel/hooks/webhook); transports read their own sections. */
  webhooks: { publicBaseUrl?: string; internalBaseUrl?: string; signing: { secretEnv?: string } };
  /**
   * `settings`: each plugin's own section by plugin id, as written (the plugin's schema validates it at kernel start).
   * `extra`: plugin modules to load, by path (relative to `baseDir`) or package name, as written.
   */
  plugins: { settings: Readonly<Record<string, unknown>>; extra?: readonly string[] };
}
