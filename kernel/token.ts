/**
 * A typed service reference. The container is addressed by tokens, never by
 * class, so a plugin can replace any service without the consumer knowing.
 * A `multi` token collects one value from every plugin that provides it.
 */
export interface Token<T> {
  readonly id: string;
  readonly key: symbol;
  readonly multi: boolean;
  /** Phantom field that carries the type; never set. */
  readonly __type?: T;
}

/** Creates a token for values of type `T`: `createToken<Cache>('my-plugin.cache')`; `{ multi: true }` collects one value per providing plugin. */
export function createToken<T>(id: string, options: { multi?: boolean } = {}): Token<T> {
  return Object.freeze({ id, key: Symbol(id), multi: options.multi ?? false });
}
