import type { ControlVerdict, WebhookConfig } from '../hook-types.js';
import type { ControlOutcome } from './webhook-sender.js';

/** The classification and tool-result content of a control that failed with `onError: 'block'`. */
export const HOOK_CONTROL_ERROR = 'hook_control_error';

/** What the control walk does after one control: go on to the next control, or stop with a verdict. */
export type ControlStep = { next: true } | { next: false; verdict: Exclude<ControlVerdict, { decision: 'allow' }> };

/**
 * Applies one control's outcome to the walk over controls (pure, synchronous):
 * - `allow` and `notification`: check the next control (an allow is not a
 *   pass for the controls after it);
 * - `deny`: stop, `blocked` with the reason and classification `hook_denied`;
 * - `error`: `onError: 'block'` stops with reason and classification
 *   `hook_control_error`; otherwise (default `continue`) check the next control;
 * - `cancelled`: stop with `cancelled` (never permission).
 * When the walk ends without a stop, the verdict is `allow`.
 */
export function controlStep(hook: { id: string; webhook: Pick<WebhookConfig, 'onError'> }, outcome: ControlOutcome): ControlStep {
  switch (outcome.kind) {
    case 'allow':
    case 'notification':
      return { next: true };
    case 'deny':
      return { next: false, verdict: { decision: 'blocked', reason: outcome.reason, classification: 'hook_denied', hookId: hook.id } };
    case 'error':
      if (hook.webhook.onError === 'block') {
        return { next: false, verdict: { decision: 'blocked', reason: HOOK_CONTROL_ERROR, classification: HOOK_CONTROL_ERROR, hookId: hook.id } };
      }
      return { next: true };
    case 'cancelled':
      return { next: false, verdict: { decision: 'cancelled' } };
  }
}
