// Stands in for ioredis's lib/Redis for the vendored tests: the client under test in this project.
import { client } from '../../src/client.js'

export default client.Redis
