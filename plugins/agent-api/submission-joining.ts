import type { Operations } from '../../kernel/operations.js';
import type { Store } from '../../kernel/store.js';
import { SETTLED_SUBMISSION_STATUSES, type SubmissionRecord, type SubmissionSettlement } from '../../kernel/submissions.js';
import { decideStoredDelivery, STORED_DELIVERY_POLL_MS, TURN_INBOX_CALL_ID } from '../../kernel/runtime/stored-turn-inbox.js';
import { sleep } from './submission-handles.js';
import { deliveredImages, parseDeliveredMessage, renderDeliveredMessage } from './delivered-message.js';

/** The id a joined delivery's message is stored under: one per submission, so it can be stored (and found) once. */
export function joinMessageId(submissionId: string): string {
  return `join_${submissionId}`;
}

/** The submission running on a thread in this process and its live operation. */
export interface LiveHost {
  readonly submissionId: string;
  readonly operationId: string;
}

/**
 * Document 001's "a send to a busy instance joins the live response at the
 * next turn boundary": a delivery admitted while another submission of the
 * instance runs here is handed to that operation (`deliverAtNextTurn`); once
 * the step that carried it is stored, the submission is marked `joined` into
 * the host and takes the host's settlement. A delivery that misses the live
 * response (it finished, parked or stopped before its next model turn)
 * stays queued and runs as its own submission. A crash between the step's
 * commit and the `joined` mark is repaired at recovery: the stored message
 * (`join_<submission id>`) says it joined.
 */
export class SubmissionJoins {
  /** Deliveries being handed over now, by submission id (the pump waits for them before running one). */
  private readonly pending = new Map<string, Promise<boolean>>();
  /** Joined submissions by host submission id, settled with their host. */
  private readonly byHost = new Map<string, Set<string>>();

  /**
   * `afterJoin`: called once a submission is marked joined. Across processes
   * (queue mode) the host may have settled before the join was known here;
   * the coordinator then settles the joined one with the host's outcome.
   */
  constructor(private readonly store: Store, private readonly operations: Operations, private readonly afterJoin: (submissionId: string, hostId: string) => Promise<void> = async () => undefined) {}

  /** Starts handing `submission` to the live host (in the background); the pump awaits `settledJoin` before running it. */
  offer(submission: SubmissionRecord, host: LiveHost): void {
    const attempt = this.join(submission, host).finally(() => this.pending.delete(submission.id));
    attempt.catch(() => undefined);
    this.pending.set(submission.id, attempt);
  }

  /** The hand-over in progress for this submission, if any (true: it joined, so it does not run on its own). */
  inProgress(submissionId: string): Promise<boolean> | undefined {
    return this.pending.get(submissionId);
  }

  /** The joined submissions of a host, for its settlement. */
  joinedTo(hostId: string): string[] {
    return [...(this.byHost.get(hostId) ?? [])];
  }

  forget(hostId: string): void {
    this.byHost.delete(hostId);
  }

  /**
   * Recovery: joined submissions whose host settled take its settlement now
   * (through `settle`); the others wait for their host here. A queued
   * submission whose message a host's operation stored is marked joined.
   */
  async recover(unsettled: readonly SubmissionRecord[], settle: (s: SubmissionRecord, settlement: SubmissionSettlement) => Promise<void>): Promise<void> {
    for (const s of unsettled) {
      if (s.status === 'queued') await this.repairJoin(s);
    }
    for (const s of await this.store.listSubmissions({ statuses: ['joined'] })) {
      const host = s.joinedInto === undefined ? undefined : await this.store.getSubmission(s.joinedInto);
      if (host && SETTLED_SUBMISSION_STATUSES.has(host.status)) await settle(s, settlementOfHost(host));
      else if (s.joinedInto !== undefined) this.remember(s.joinedInto, s.id);
    }
  }

  private async join(submission: SubmissionRecord, host: LiveHost): Promise<boolean> {
    const id = joinMessageId(submission.id);
    const message = parseDeliveredMessage(submission.message);
    const content = renderDeliveredMessage(message);
    const images = deliveredImages(message);
    const delivered = (await this.operations.deliverAtNextTurn(host.operationId, images === undefined ? { id, content } : { id, content, images })) || (await this.stored(submission.threadId, id)) !== undefined;
    if (!delivered) return false;
    this.remember(host.submissionId, submission.id);
    await this.store.joinSubmission(submission.id, host.submissionId);
    await this.afterJoin(submission.id, host.submissionId);
    return true;
  }

  /** A queued submission whose join message is stored (a crash before the mark) is marked joined into the submission of that operation. */
  private async repairJoin(submission: SubmissionRecord): Promise<void> {
    const message = await this.stored(submission.threadId, joinMessageId(submission.id));
    if (!message) return;
    const host = (await this.store.listSubmissions({ threadId: submission.threadId })).find((s) => s.operationId === message.operationId);
    if (host) await this.store.joinSubmission(submission.id, host.id);
  }

  /**
   * Before a queued submission runs on its own: true when it joined a
   * response after all. Queue mode: an offer left open in the store for a
   * worker's next model turn (stored-turn-inbox.ts; its sender died) is
   * decided first, withdrawn unless a worker took it, and then waited for
   * until that worker's commit says whether it joined; a joined one is
   * marked (its host settled before it: the pump runs submissions oldest
   * first). The thread's last four operations are looked at.
   */
  async joinedBeforeOwnRun(submission: SubmissionRecord, stopping: () => boolean): Promise<boolean> {
    const id = joinMessageId(submission.id);
    let offered = false;
    for (const op of await this.store.listThreadOperations(submission.threadId, { last: 4 })) {
      if (!(await this.store.listToolSteps(op.id, TURN_INBOX_CALL_ID)).some((r) => r.name === `offer:${id}`)) continue;
      offered = true;
      while ((await decideStoredDelivery(this.store, op.id, submission.threadId, id, true)) === undefined) {
        if (stopping()) return true;
        await sleep(STORED_DELIVERY_POLL_MS);
      }
    }
    if (!offered) return false;
    await this.repairJoin(submission);
    return (await this.store.getSubmission(submission.id))?.status === 'joined';
  }

  private async stored(threadId: string, messageId: string) {
    return (await this.store.listThreadMessages(threadId, { includeCompacted: true })).find((m) => m.id === messageId);
  }

  private remember(hostId: string, submissionId: string): void {
    const set = this.byHost.get(hostId) ?? new Set<string>();
    set.add(submissionId);
    this.byHost.set(hostId, set);
  }
}

/** A joined submission's settlement: its host's outcome, result and error. */
export function settlementOfHost(host: SubmissionRecord): SubmissionSettlement {
  return {
    status: host.status as SubmissionSettlement['status'],
    ...(host.result !== undefined ? { result: host.result } : {}),
    ...(host.error !== undefined ? { error: host.error } : {}),
  };
}
