import { defineConfig } from 'vitest/config'
import { compatProjects } from './projects.js'

// `vitest run` in this directory runs the enabled compat projects; the repository's root config runs them too.
export default defineConfig({ test: { projects: compatProjects } })
