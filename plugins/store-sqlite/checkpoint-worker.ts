/**
 * The background checkpointer's thread (see background-checkpointer.ts). It
 * owns a second connection to the store's file and runs a PASSIVE
 * checkpoint (WAL frames are copied into the database file and both are
 * synced here, off the writer's thread) once the writer has counted
 * `commitsPerCheckpoint` commits since the last one, or sooner when it has
 * stopped committing: looked at every `intervalMs`, a tick that sees new
 * commits but none since the previous tick checkpoints them. It never waits for a lock (busy_timeout 0; a busy checkpoint is
 * simply tried again next time). Messages: `'stop'` in; `{ type: 'error',
 * message }` out once if a checkpoint fails with anything but SQLITE_BUSY,
 * after which the thread ends.
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

interface CheckpointWorkerData {
  file: string;
  intervalMs: number;
  /** Commits that trigger a checkpoint while the writer keeps committing. */
  commitsPerCheckpoint: number;
  /** Int32 slot 0: commits the writer made so far. */
  commits: SharedArrayBuffer;
}

const { file, intervalMs, commitsPerCheckpoint, commits } = workerData as CheckpointWorkerData;
const counter = new Int32Array(commits);
const db = new Database(file, { fileMustExist: true });
db.pragma('busy_timeout = 0');
// From 0, not the current count: commits made while this thread was starting count too.
let seen = 0;
/** The count at the previous tick. */
let previous = 0;

function stop(): void {
  clearInterval(timer);
  db.close();
  parentPort!.close();
}

const timer = setInterval(() => {
  const now = Atomics.load(counter, 0);
  const idle = now === previous;
  previous = now;
  // A checkpoint sorts every frame of the WAL, not only the new ones: under constant writes it waits for a batch of
  // commits (a fixed amount of work per commit, however fast or slow the writer is), when the writer pauses it runs.
  if (now === seen || (!idle && now - seen < commitsPerCheckpoint)) return;
  seen = now;
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch (err) {
    // Another checkpointer or a writer holding a lock: try again next time.
    const code = String((err as { code?: unknown }).code ?? '');
    if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) return;
    parentPort!.postMessage({ type: 'error', message: err instanceof Error ? err.message : String(err) });
    stop();
  }
}, intervalMs);

parentPort!.on('message', (message) => {
  if (message === 'stop') stop();
});
