// Stands in for ioredis's lib/index for the vendored tests: the client under test in this project.
import { client } from '../../src/client.js'

export const Redis = client.Redis
export const Cluster = client.Cluster
export const Command = client.Command
export default client.Redis
