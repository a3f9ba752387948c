import { createHash, timingSafeEqual } from 'node:crypto'

/**
 * The proxy's own users and passwords (AUTH, HELLO AUTH), apart from the backend's credentials. With none
 * configured every client is let in, as a Redis without requirepass does.
 */
export class ProxyUsers {
  // SHA-256 of each password: comparisons take the same time whatever the guess, as Redis' ACL does.
  readonly #digests = new Map<string, Buffer>()

  constructor(passwords: ReadonlyMap<string, string>) {
    for (const [user, password] of passwords) this.#digests.set(user, digest(password))
  }

  /** Whether a client must authenticate before anything else. */
  get required(): boolean {
    return this.#digests.size > 0
  }

  /** Whether `password` is `user`'s (`default` when AUTH names no user). */
  verify(user: string, password: Buffer): boolean {
    const expected = this.#digests.get(user)
    const given = digest(password)
    return expected !== undefined && timingSafeEqual(expected, given)
  }
}

function digest(password: string | Buffer): Buffer {
  return createHash('sha256').update(password).digest()
}
