/** Turns cached values into the text stored in Redis and back. */
export interface Codec<T = unknown> {
  encode(value: T): string
  decode(text: string): T
}

/** The default codec: JSON text. */
export const jsonCodec: Codec = {
  encode: (value) => JSON.stringify(value),
  decode: (text) => JSON.parse(text) as unknown,
}
