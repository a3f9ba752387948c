import type { ContextLoader, GetOrLoadOptions } from '@heatsink/stampede'

/** The options of agent.getOrLoad: those of @heatsink/stampede's getOrLoad but the fallback, which is L1's. */
export type LoadOptions = Omit<GetOrLoadOptions<unknown>, 'fallback'>

/**
 * The application's source of a key's value (a database query); undefined or null means "not found". It is
 * handed a LoadContext (the signal to pass on, the stale value, setTtl, skip); a loader taking no argument
 * simply ignores it.
 */
export type Loader<T> = ContextLoader<T>
