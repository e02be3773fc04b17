/**
 * Fields the Kubernetes API does not know. The JSON schemas let any extra field through (`readinesProbe:`
 * passes them), while `kubectl apply` validates strictly and refuses it. kubernetes-models (and
 * @kubernetes-models/gateway-api, from the Gateway API's CRDs) also types every kind, from the same
 * schemas: written as an object literal of that type, an unknown field is TypeScript's
 * excess-property error. So the objects are type-checked here, in
 * memory, as `const o: IDeployment = {...}`.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import type { KubeObject } from './kubectl.js';

const minimalLib = `declare global {
  interface Array<T> { length: number; [n: number]: T }
  interface Boolean {} interface CallableFunction {} interface Function {} interface IArguments {} interface NewableFunction {}
  interface Number {} interface Object {} interface RegExp {} interface String {}
}`;

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

/** The module of a kind's model: Kubernetes' own in kubernetes-models, the Gateway API's in its own package. */
export const modelModule = (apiVersion: string, kind: string): string =>
  `${apiVersion.startsWith('gateway.networking.k8s.io/') ? '@kubernetes-models/gateway-api' : 'kubernetes-models'}/${apiVersion}/${kind}`;

/**
 * One message per field the API does not know (or other type error), naming the object and its
 * label (e.g. the overlay). All in one program: each program costs its start-up once.
 */
export function unknownFields(objects: readonly { label: string; object: KubeObject }[]): string[] {
  const file = join(repoRoot, 'test/consistency/known-fields.generated.ts');
  const lines = objects.flatMap(({ object }, i) => [
    `import type { I${object.kind} as T${i} } from '${modelModule(object.apiVersion, object.kind)}';`,
    `export const o${i}: T${i} = ${JSON.stringify(object)};`,
  ]);
  const source = [...lines, minimalLib].join('\n');
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    // The types need no more than this of the standard library; without lib.es2022.d.ts it takes a third of the time.
    noLib: true,
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists, readFile } = host;
  host.getSourceFile = (name, version, ...rest) =>
    name === file ? ts.createSourceFile(name, source, version) : getSourceFile.call(host, name, version, ...rest);
  host.fileExists = (name) => name === file || fileExists.call(host, name);
  host.readFile = (name) => (name === file ? source : readFile.call(host, name));
  const program = ts.createProgram([file], options, host);
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const text = ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ');
    if (diagnostic.file?.fileName !== file || diagnostic.start === undefined) return text;
    const line = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start).line;
    const entry = objects[Math.floor(line / 2)];
    return entry === undefined ? text : `${entry.label}: ${entry.object.kind} ${entry.object.metadata.name}: ${text}`;
  });
}
