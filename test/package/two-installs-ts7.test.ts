/**
 * The typed client across two installs of the packed package, under TypeScript 7 (the native
 * compiler, tsgo): a front end with its own `npm install <tarball>` (no fastify, no drizzle-orm)
 * imports `typeof services` from the server project and type-checks under NodeNext, Node16 and Bundler
 * resolution with `skipLibCheck: false` (test/helpers/frontend.ts; TypeScript 5.9 in two-installs-ts5.test.ts).
 */
import t from 'tap'
import { checkResolutions } from '../helpers/frontend.js'
import { oncePerCi } from '../helpers/pack.js'

// The first run on a source state packs and installs (shared with the other package tests) and
// type-checks three programs that each check every declaration they reach (TypeScript 5.9: about
// 40 CPU seconds each): many minutes on a loaded machine, so the bound is generous, as the scaffold's.
t.setTimeout(1_800_000)

t.test('the client type-checks against the server\'s services from another install, under every resolution', { skip: oncePerCi }, (t) => checkResolutions(t, 'ts7'))
