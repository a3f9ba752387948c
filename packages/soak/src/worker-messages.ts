/** What the soak asks an agent process over IPC. */
export type WorkerRequest = { type: 'sample'; id: number } | { type: 'stop' }

/** What an agent process answers: ready once, then one sample per request. */
export type WorkerReply =
  | { type: 'ready' }
  | {
      type: 'sample'
      id: number
      heapBytes: number
      commands: number
      errors: number
      shed: number
      lastError: string
      reportsSent: number
      reportsDropped: number
      /** Reads answered from L1, and all reads, as the agent counts them. */
      l1Hits: number
      reads: number
    }
