/** Looks up a user's email for webhook payload enrichment. */
export interface UserDirectory {
  /** Resolves the email, or undefined when the user has none or does not exist. May reject on a store error. */
  getEmail(userId: string): Promise<string | undefined>;
}
