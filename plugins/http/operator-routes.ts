import type { Context } from 'koa';
import Router from '@koa/router';
import { isHookgateError } from '../../kernel/errors.js';
import type { Kernel } from '../../kernel/kernel.js';
import type { OperationRecord, OperationStatus } from '../../kernel/store.js';
import { AgentApiError, InvalidRequestError, MethodNotAllowedError, RouteNotFoundError } from '../agent-api/agent-errors.js';
import { FIXED_RESPONSE_HEADERS, respondWithError } from '../agent-api/http/error-envelope.js';
import { readJsonBody } from '../agent-api/http/json-body.js';

const STATUSES: readonly OperationStatus[] = ['running', 'waiting_approval', 'waiting_tool', 'done', 'error', 'interrupted'];
const DECISIONS = { approve: 'approve', reject: 'reject', 'reject-continue': 'rejectAndContinue' } as const;
const MAX_LIMIT = 1_000;
/** Decision bodies are a tool call id and a reason: small. */
const DECISION_BODY_BYTES = 64 * 1024;

/** A kernel error the operator routes answer with its own status (a missing operation, one not waiting for a decision). */
class OperatorRequestError extends AgentApiError {
  constructor(type: string, status: number, message: string, details: Record<string, unknown>) {
    super('INVALID_REQUEST', type, status, message, { details });
    this.name = 'OperatorRequestError';
  }
}

/**
 * The operator's routes of `hookgate serve` (mounted under `/operator`,
 * behind the API tokens): `GET /operations` (`?status=`, `?limit=`),
 * `GET /operations/:id`, `POST /operations/:id/approve | reject |
 * reject-continue` (JSON body `{ toolCallId?, reason? }`; the operation
 * goes on in this process), `GET /decisions` (`?operationId=`, `?limit=`).
 * Errors are the agent routes' envelope: 404 `operation_not_found`, 409
 * `operation_not_waiting`, 400 `invalid_request`.
 */
export function createOperatorRouter(kernel: Kernel, onUnexpectedError?: (err: unknown) => void): Router {
  const router = new Router();
  const handle = (allow: readonly string[], fn: (ctx: Context) => Promise<void>) => async (ctx: Context) => {
    ctx.set(FIXED_RESPONSE_HEADERS);
    ctx.set('Cache-Control', 'no-store');
    try {
      if (!allow.includes(ctx.method)) throw new MethodNotAllowedError(ctx.method, allow);
      await fn(ctx);
    } catch (err) {
      respondWithError(ctx, operatorError(err), onUnexpectedError);
    }
  };
  router.all('/operations', handle(['GET'], async (ctx) => {
    const status = query(ctx, 'status');
    if (status !== undefined && !STATUSES.includes(status as OperationStatus)) throw new InvalidRequestError(`status must be one of ${STATUSES.join(', ')}`, { field: 'status' });
    const operations = await kernel.listOperations({ ...(status !== undefined ? { status: status as OperationStatus } : {}), limit: limitOf(ctx) });
    ctx.body = { operations: operations.map(summaryOf) };
  }));
  router.all('/operations/:id', handle(['GET'], async (ctx) => {
    const op = await kernel.getOperation(String(ctx.params.id));
    if (!op) throw new OperatorRequestError('operation_not_found', 404, 'no operation has this id', {});
    ctx.body = { operation: { ...summaryOf(op), context: op.context, usage: op.state.usage, steps: op.state.stepIndex, ...(op.state.lastText !== undefined ? { lastText: op.state.lastText } : {}), ...(op.error ? { error: op.error.message } : {}) } };
  }));
  for (const [path, method] of Object.entries(DECISIONS)) {
    router.all(`/operations/:id/${path}`, handle(['POST'], async (ctx) => {
      const body = ctx.get('Content-Length') === '0' || (ctx.get('Content-Length') === '' && !ctx.get('Transfer-Encoding')) ? {} : await readJsonBody(ctx, DECISION_BODY_BYTES);
      if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new InvalidRequestError('the body must be an object { toolCallId?, reason? }', { field: 'body' });
      const { toolCallId, reason, ...rest } = body as Record<string, unknown>;
      if (Object.keys(rest).length > 0) throw new InvalidRequestError(`unknown field '${Object.keys(rest)[0]!.slice(0, 64)}': a decision takes toolCallId and reason`, { field: 'body' });
      if (toolCallId !== undefined && (typeof toolCallId !== 'string' || toolCallId === '' || toolCallId.length > 256)) throw new InvalidRequestError('toolCallId must be a tool call id', { field: 'toolCallId' });
      if (reason !== undefined && (typeof reason !== 'string' || reason.length > 4_096)) throw new InvalidRequestError('reason must be a string of at most 4096 characters', { field: 'reason' });
      if (method === 'approve' && reason !== undefined) throw new InvalidRequestError('an approval takes no reason', { field: 'reason' });
      const id = String(ctx.params.id);
      const options = { ...(toolCallId !== undefined ? { toolCallId } : {}), ...(reason !== undefined ? { reason } : {}) };
      const handleOf = await kernel[method](id, options);
      // The operation goes on in this process; the answer does not wait for it.
      void handleOf.completed().catch(() => undefined);
      ctx.body = { operationId: id, decision: path };
    }));
  }
  router.all('/decisions', handle(['GET'], async (ctx) => {
    const operationId = query(ctx, 'operationId');
    const decisions = await kernel.listDecisions({ ...(operationId !== undefined ? { operationId } : {}), limit: limitOf(ctx) });
    ctx.body = { decisions };
  }));
  const notFound = async (ctx: Context) => {
    ctx.set(FIXED_RESPONSE_HEADERS);
    respondWithError(ctx, new RouteNotFoundError(ctx.method, ctx.path));
  };
  router.all('/', notFound);
  router.all('/{*rest}', notFound);
  return router;
}

function summaryOf(op: OperationRecord): Record<string, unknown> {
  return {
    id: op.id,
    agentId: op.agentId,
    threadId: op.threadId,
    status: op.status,
    ...(op.reason !== undefined ? { reason: op.reason } : {}),
    ...(op.parentOperationId !== undefined ? { parentOperationId: op.parentOperationId } : {}),
    ...(op.state.approval ? { pendingTools: op.state.approval.pendingTools } : {}),
    createdAt: op.createdAt,
    updatedAt: op.updatedAt,
  };
}

function query(ctx: Context, name: string): string | undefined {
  const value = ctx.query[name];
  if (Array.isArray(value)) throw new InvalidRequestError(`the query parameter '${name}' may be given once`, { field: name });
  return value;
}

function limitOf(ctx: Context): number {
  const raw = query(ctx, 'limit');
  if (raw === undefined) return 100;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < 1 || n > MAX_LIMIT) throw new InvalidRequestError(`limit must be a whole number from 1 to ${MAX_LIMIT}`, { field: 'limit' });
  return n;
}

function operatorError(err: unknown): unknown {
  if (isHookgateError(err, 'OPERATION_NOT_FOUND')) return new OperatorRequestError('operation_not_found', 404, err.message, {});
  if (isHookgateError(err, 'OPERATION_NOT_WAITING')) return new OperatorRequestError('operation_not_waiting', 409, err.message, {});
  if (isHookgateError(err, 'OPERATION_LEASED')) return new OperatorRequestError('operation_leased', 409, err.message, {});
  return err;
}
