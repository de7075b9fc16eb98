import path from 'node:path';
import ts from 'typescript';

/** One property of an interface as the source declares it. */
export interface DeclaredField {
  name: string;
  optional: boolean;
  /** The declared type as written, whitespace collapsed (a method is written as a function type). */
  type: string;
  /** Names of the types it refers to (`ToolResult` in `Array<{ result: ToolResult }>`). */
  references: string[];
}

/** What the compiler says about the types a doc describes. */
export interface DeclaredTypes {
  /** Every property of the interface, inherited ones included; undefined when there is no such interface. */
  fields(interfaceName: string): DeclaredField[] | undefined;
  /** The aliased type of a `type X = …` alias as written; undefined when there is no such alias. */
  alias(name: string): string | undefined;
  /** Whether `name` is an interface or type alias declared in the files read. */
  declares(name: string): boolean;
}

export function collapse(text: string): string {
  return text.replace(/\s+/g, ' ').replace(/\s*;\s*}/g, ' }').trim();
}

function typeText(decl: ts.Declaration): { text: string; node: ts.Node | undefined } {
  if (ts.isPropertySignature(decl) || ts.isPropertyDeclaration(decl)) return { text: decl.type ? decl.type.getText() : 'any', node: decl.type };
  if (ts.isMethodSignature(decl) || ts.isMethodDeclaration(decl)) {
    const params = decl.parameters.map((p) => p.getText()).join(', ');
    return { text: `(${params}) => ${decl.type ? decl.type.getText() : 'void'}`, node: decl };
  }
  return { text: decl.getText(), node: decl };
}

function referencedNames(node: ts.Node | undefined): string[] {
  const names = new Set<string>();
  const visit = (n: ts.Node): void => {
    if (ts.isTypeReferenceNode(n) && ts.isIdentifier(n.typeName)) names.add(n.typeName.text);
    ts.forEachChild(n, visit);
  };
  if (node) visit(node);
  return [...names];
}

/**
 * Reads interfaces and type aliases with the TypeScript compiler from the
 * given source files (and what they import), so a doc can be checked against
 * what the code declares rather than against a copy of it.
 */
export function readDeclaredTypes(files: readonly string[]): DeclaredTypes {
  const program = ts.createProgram(files.map((f) => path.resolve(f)), {
    strict: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    noEmit: true,
    skipLibCheck: true,
    types: [],
  });
  const checker = program.getTypeChecker();
  const interfaces = new Map<string, ts.InterfaceDeclaration>();
  const aliases = new Map<string, ts.TypeAliasDeclaration>();
  for (const sf of program.getSourceFiles()) {
    if (sf.isDeclarationFile) continue;
    for (const st of sf.statements) {
      if (ts.isInterfaceDeclaration(st) && !interfaces.has(st.name.text)) interfaces.set(st.name.text, st);
      if (ts.isTypeAliasDeclaration(st) && !aliases.has(st.name.text)) aliases.set(st.name.text, st);
    }
  }
  return {
    fields(name) {
      const decl = interfaces.get(name);
      if (!decl) return undefined;
      const type = checker.getTypeAtLocation(decl.name);
      return checker.getPropertiesOfType(type).map((prop) => {
        const d = prop.valueDeclaration ?? prop.declarations?.[0];
        const { text, node } = d ? typeText(d) : { text: 'unknown', node: undefined };
        return { name: prop.name, optional: (prop.flags & ts.SymbolFlags.Optional) !== 0, type: collapse(text), references: referencedNames(node) };
      });
    },
    alias(name) {
      const decl = aliases.get(name);
      return decl ? collapse(decl.type.getText()) : undefined;
    },
    declares(name) {
      return interfaces.has(name) || aliases.has(name);
    },
  };
}
