/**
 * The wire format's version. Every message carries it as `v`; a decoder refuses any other value
 * rather than guess, so a mixed fleet fails loudly instead of misreading counts.
 */
export const WIRE_VERSION = 1
