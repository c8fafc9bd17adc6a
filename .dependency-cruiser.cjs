/**
 * The architecture, checked in `npm test` (docs/architecture.md draws it):
 * the core in lib/ knows no HTTP; plugins/ adapt it to Fastify; lib/server/ composes both.
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import cycles anywhere (type-only imports included).',
      from: {},
      to: { circular: true },
    },
    {
      name: 'core-knows-no-http',
      severity: 'error',
      comment: 'lib/ (outside the composition in lib/server/) imports nothing from fastify, its plugins or plugins/.',
      from: { path: '^lib/', pathNot: '^lib/(server/|index\\.ts$)' },
      to: { path: '(^plugins/|(^|/)node_modules/(fastify|fastify-plugin|@fastify/(?!error/)[^/]+)/)' },
    },
    {
      name: 'fastify-error-only-in-errors',
      severity: 'error',
      comment: '@fastify/error (a status-free error factory) is used by lib/errors.ts only.',
      from: { path: '^lib/', pathNot: '^lib/errors\\.ts$' },
      to: { path: '(^|/)node_modules/@fastify/error/' },
    },
    {
      name: 'otel-only-in-tracing',
      severity: 'error',
      comment: 'OpenTelemetry is reached through lib/tracing.ts only; the engine knows an instrument callback, not OTel.',
      from: { pathNot: '^lib/tracing\\.ts$' },
      to: { path: '(^|/)node_modules/@opentelemetry/' },
    },
    {
      name: 'orm-only-in-db',
      severity: 'error',
      comment: 'Only the data helpers (lib/db/) import drizzle-orm; the engine never does.',
      from: { path: '^lib/', pathNot: '^lib/(db|server)/' },
      to: { path: '(^|/)node_modules/drizzle-orm/' },
    },
    {
      name: 'adapters-do-not-compose',
      severity: 'error',
      comment: 'plugins/ depend on the core, never on the composition that assembles them.',
      from: { path: '^plugins/' },
      to: { path: '^lib/(server/|index\\.ts$)' },
    },
    {
      name: 'adapters-write-through-the-codec',
      severity: 'error',
      comment:
        'An answer reaches the wire through the codec (lib/answer.ts): adapters (plugins/, lib/mcp/) never call the serializers or the declared-error resolution themselves.',
      from: { path: '^(plugins|lib/mcp)/' },
      to: { path: '^lib/(declared-errors|output)\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'client-stands-alone',
      severity: 'error',
      comment: 'The client imports nothing outside lib/client/ at run time (types only), so a bundler pulls in no server code.',
      from: { path: '^lib/client/' },
      to: { pathNot: '^lib/client/', dependencyTypesNot: ['type-only'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
}
