import { HookgateError } from '../../kernel/errors.js';

/** Hex digits of a namespace (60 random bits, made once per database by migration 4). */
const NAMESPACE_DIGITS = 15;
/** Log keys are below 2^53 (operation seq * 2^24 + n), so they fit the 60 bits after the variant nibble. */
const KEY_DIGITS = 15;
const GENERATED_ID = /^([0-9a-f]{8})-([0-9a-f]{4})-8([0-9a-f]{3})-8([0-9a-f]{3})-([0-9a-f]{12})$/;

/**
 * The ids store-sqlite gives messages that arrive without one: UUIDs of version
 * 8 (RFC 9562, "custom") made of the database's random namespace and the
 * message's log key. Unique by construction (a key is never reused; another
 * database has another namespace), so they need no unique index: a message
 * commit writes one b-tree page instead of two. Ids a caller supplies are kept
 * as given and indexed; one that falls in this database's namespace is refused,
 * so the two kinds can never meet. Synchronous, never throws except where said.
 *
 * A generated id names a position in an operation's log. If the last commits
 * are lost (a power cut under `synchronous = NORMAL`) or the file is restored
 * from a backup, the step that runs again writes its message at the same
 * position, under the same id; a copied file shares its namespace with the
 * original.
 */
export class MessageIds {
  /** Everything before the key's digits: `nnnnnnnn-nnnn-8nnn-8`. */
  private readonly prefix: string;

  constructor(private readonly namespace: string) {
    if (!/^[0-9a-f]{15}$/.test(namespace)) {
      throw new HookgateError('STORE_CORRUPT', `store_identity holds an invalid message id namespace "${namespace}"`);
    }
    this.prefix = `${namespace.slice(0, 8)}-${namespace.slice(8, 12)}-8${namespace.slice(12, NAMESPACE_DIGITS)}-8`;
  }

  /** The id of the generated-id message stored at `key`. */
  forKey(key: number): string {
    const k = key.toString(16).padStart(KEY_DIGITS, '0');
    return `${this.prefix}${k.slice(0, 3)}-${k.slice(3)}`;
  }

  /** The log key an id of this database's namespace names, or undefined for any other id. */
  keyOf(id: string): number | undefined {
    // UUIDs compare case-insensitively (RFC 9562): the upper-case form of a generated id is the same id.
    const parts = GENERATED_ID.exec(id.toLowerCase());
    if (!parts || `${parts[1]}${parts[2]}${parts[3]}` !== this.namespace) return undefined;
    return parseInt(`${parts[4]}${parts[5]}`, 16);
  }
}
