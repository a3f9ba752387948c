// Stands in for ioredis's lib/Command for the vendored tests.
import { client } from '../../src/client.js'

export default client.Command
