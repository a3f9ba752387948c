#!/usr/bin/env node
// The installed `heatsink-aggregator` command: the built entry point. A file of its own, present before any build, so
// that pnpm can link the command in the workspace at install time (it warns about a bin that does not exist yet).
import '../dist/main.js'
