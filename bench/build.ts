/**
 * Compiles lib/, plugins/ and bench/ to plain JavaScript in a temporary directory, so the measured
 * processes run on `node` alone: no tsx loader thread, no source-map stacks, no transpile at start.
 * A transpile (no type check): a type error another engineer has in progress does not stop a run.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative } from 'node:path'
import ts from 'typescript'

const SOURCES = ['lib', 'plugins', 'bench']

function* typeScriptFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) {
      if (entry.name !== 'results' && entry.name !== 'node_modules') yield* typeScriptFiles(path)
    } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) yield path
  }
}

export interface Build {
  dir: string
  remove: () => void
}

/** Transpiles the project into a fresh temporary directory that resolves packages from `root/node_modules`. */
export function buildProject(root: string): Build {
  const dir = mkdtempSync(join(tmpdir(), 'fastify-actions-bench-'))
  const compilerOptions: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    verbatimModuleSyntax: true,
    esModuleInterop: true,
    sourceMap: false,
  }
  for (const source of SOURCES) {
    for (const file of typeScriptFiles(join(root, source))) {
      const output = ts.transpileModule(readFileSync(file, 'utf8'), { compilerOptions, fileName: file })
      const target = join(dir, relative(root, file)).replace(/\.ts$/, '.js')
      mkdirSync(dirname(target), { recursive: true })
      writeFileSync(target, output.outputText)
    }
  }
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }))
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir')
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) }
}
