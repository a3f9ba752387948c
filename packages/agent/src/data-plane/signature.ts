/**
 * What identifies one read's reply among a key's cached replies: the command and every argument but the key.
 * A command with no argument besides its key (GET, HGETALL, SMEMBERS, the most common hot reads) is its own
 * signature, so the hit path builds no string. Arguments are length-prefixed, so no two argument lists share
 * a signature however their bytes look.
 */
export function signatureOf(command: string, args: readonly unknown[], keyIndex: number): string {
  if (args.length === 1) return command
  let signature = command
  for (let i = 0; i < args.length; i++) {
    if (i === keyIndex) continue
    const text = argumentText(args[i])
    signature += `\n${text.length}:${text}`
  }
  return signature
}

/** An argument as text; Buffers as latin1, which maps every byte to one character and so loses nothing. */
export function argumentText(arg: unknown): string {
  if (typeof arg === 'string') return arg
  if (Buffer.isBuffer(arg)) return arg.toString('latin1')
  return String(arg)
}

/** A key as the sketch, the registry and L1 name it: a string as is, a Buffer read as UTF-8. */
export function keyText(key: unknown): string {
  return typeof key === 'string' ? key : Buffer.isBuffer(key) ? key.toString() : String(key)
}
