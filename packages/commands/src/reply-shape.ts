/**
 * What a cacheable command's reply looks like, as far as anyone who hands a cached reply back needs to know: the
 * core caches replies as RESP2 gives them, and each front door shows them the way its client expects (ioredis
 * decodes strings and turns HGETALL's pairs into an object; RESP3 gives maps, sets and doubles their own types).
 * Two commands with one shape are shown alike by every front door, so a new cacheable command whose reply looks
 * like an existing one's needs only its row in `CACHEABLE_REPLIES`.
 */
export type ReplyShape =
  /** A bulk string, or nil: GET, HGET, LINDEX. */
  | 'bulk'
  /** A simple string (`+`), not a bulk string: TYPE. */
  | 'status'
  /** An integer: STRLEN, EXISTS, SCARD. */
  | 'integer'
  /** An array of bulk strings and nils: HMGET, LRANGE, HKEYS. */
  | 'bulks'
  /** An array of integers: SMISMEMBER. */
  | 'integers'
  /** LPOS: an integer, or nil when nothing matches; with COUNT an array of integers. */
  | 'position'
  /** HGETALL: field/value pairs, flat in RESP2; a map in RESP3; an object of ioredis's making. */
  | 'pairs'
  /** SMEMBERS: a set's members, an array in RESP2, a set (`~`) in RESP3. */
  | 'members'
  /** ZSCORE: a score, a bulk string or nil in RESP2, a double (`,`) in RESP3. */
  | 'score'
  /** ZMSCORE: an array of scores or nils, each a double in RESP3. */
  | 'scores'
  /**
   * A sorted-set range by rank or score (ZRANGE, ZRANGEBYSCORE): members; with WITHSCORES each followed by its
   * score in RESP2, `[member, score]` pairs with double scores in RESP3.
   */
  | 'range'
  /** ZRANK, ZREVRANK: an integer or nil; with WITHSCORE (Redis 7.2) `[rank, score]`, a double score in RESP3. */
  | 'rank'
