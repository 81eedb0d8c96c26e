import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';
import { packageRoot } from '../../../core/src/paths/package-root.js';

// The plugin SDK is what third-party authors read: each public entry's names must carry a doc
// comment, `lookout/core` stays small, and core depends on nothing above it (issue 27 item 1).

const root = packageRoot();
const ENTRIES = {
  'lookout/core': 'core/src/index.ts',
  'lookout/core/contracts': 'core/src/contracts/index.ts',
  'lookout/core/host': 'core/src/host.ts',
} as const;
const MAX_CORE_NAMES = 120;
const FORBIDDEN_DIRS = ['lib', 'native', 'hub', 'edge', 'operator', 'plugins', 'builder'];

const program = ts.createProgram(
  Object.values(ENTRIES).map((f) => join(root, f)),
  {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    skipLibCheck: true,
    noEmit: true,
  },
);
const checker = program.getTypeChecker();

function exportsOf(entry: string): ts.Symbol[] {
  const source = program.getSourceFile(join(root, entry));
  assert.ok(source, `${entry} is part of the program`);
  const moduleSymbol = checker.getSymbolAtLocation(source);
  assert.ok(moduleSymbol, `${entry} is a module`);
  return checker.getExportsOfModule(moduleSymbol);
}

function docOf(symbol: ts.Symbol): string {
  return ts.displayPartsToString(symbol.getDocumentationComment(checker)).trim();
}

/** A name is documented at its re-export (as for zod's `z`), at a hop of the alias chain, or at its declaration. */
function isDocumented(symbol: ts.Symbol): boolean {
  let current = symbol;
  for (let hop = 0; hop < 32; hop++) {
    if (docOf(current)) return true;
    if (!(current.flags & ts.SymbolFlags.Alias)) return false;
    const next = checker.getImmediateAliasedSymbol(current);
    if (!next || next === current) return docOf(checker.getAliasedSymbol(symbol)) !== '';
    current = next;
  }
  return false;
}

function declaredIn(symbol: ts.Symbol): string {
  const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
  const file = target.declarations?.[0]?.getSourceFile().fileName;
  return file ? relative(root, file) : '?';
}

function tsFilesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return tsFilesUnder(path);
    return e.name.endsWith('.ts') ? [path] : [];
  });
}

function importSpecifiers(file: ts.SourceFile): string[] {
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
      if (ts.isStringLiteral(node.moduleSpecifier)) found.push(node.moduleSpecifier.text);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      const expr = node.moduleReference.expression;
      if (ts.isStringLiteral(expr)) found.push(expr.text);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [arg] = node.arguments;
      if (arg && ts.isStringLiteralLike(arg)) found.push(arg.text);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      const lit = node.argument.literal;
      if (ts.isStringLiteral(lit)) found.push(lit.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

describe('plugin SDK surface (core/src)', () => {
  for (const [name, entry] of Object.entries(ENTRIES)) {
    it(`every name exported by ${name} has a doc comment`, () => {
      const names = exportsOf(entry);
      assert.ok(names.length > 0, `${name} exports something`);
      const undocumented = names.filter((s) => !isDocumented(s)).map((s) => `${s.name} (${declaredIn(s)})`);
      assert.deepEqual(undocumented, [], `${name}: ${undocumented.length} exported names lack a doc comment: ${undocumented.join(', ')}`);
    });
  }

  it(`lookout/core exports at most ${MAX_CORE_NAMES} names`, () => {
    const count = exportsOf(ENTRIES['lookout/core']).length;
    assert.ok(count <= MAX_CORE_NAMES, `lookout/core exports ${count} names, more than ${MAX_CORE_NAMES}`);
  });

  it('core/src imports nothing from lib/, native/, hub/, edge/, operator/, plugins/ or builder/', () => {
    const coreSrc = join(root, 'core', 'src');
    const files = tsFilesUnder(coreSrc);
    assert.ok(files.length > 0, 'core/src has sources');
    const offending: string[] = [];
    for (const path of files) {
      const file = ts.createSourceFile(path, ts.sys.readFile(path) ?? '', ts.ScriptTarget.ES2022, true);
      for (const spec of importSpecifiers(file)) {
        let target: string | undefined;
        if (spec.startsWith('.'))
          target = relative(root, resolve(dirname(path), spec))
            .split(sep)
            .join('/');
        else if (spec.startsWith('lookout/')) target = spec.slice('lookout/'.length);
        if (target && FORBIDDEN_DIRS.some((d) => target === d || target.startsWith(`${d}/`))) {
          offending.push(`${relative(root, path)} imports '${spec}'`);
        }
      }
    }
    assert.deepEqual(offending, [], `core/src reaches above core: ${offending.join('; ')}`);
  });
});
