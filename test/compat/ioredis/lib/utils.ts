// Stands in for ioredis's lib/utils for the vendored tests (helpers/mock_server.ts): ioredis's own.
export * from 'ioredis/built/utils/index.js'
