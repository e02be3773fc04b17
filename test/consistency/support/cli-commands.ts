/**
 * `docker` commands as subcommand + flags, read from two places: the shell blocks of a Markdown page,
 * and the calls the container stage (test/containers) makes through its docker and compose helpers.
 * A page's command is "run by the stage" when a call has the same subcommand and at least its flags.
 */
import { readdirSync } from 'node:fs';
import ts from 'typescript';
import { readRepoFile } from './repo-files.js';

export interface CliCommand {
  /** `docker` or `docker compose`. */
  tool: 'docker' | 'compose';
  /** The subcommand, with its object for management commands: `run`, `volume create`, `up`. */
  subcommand: string;
  /** Long names of the flags given (`-a` is `--all`), without values. */
  flags: Set<string>;
  /** Where it was read: the page's line, or the test file. */
  source: string;
}

/** Commands whose first word takes a second one (`docker volume create`). */
const managementCommands = new Set(['volume', 'network', 'image', 'container', 'service', 'stack', 'swarm', 'node', 'secret', 'system']);
/** Compose's own options before its subcommand, each with a value (`-f file`): they choose the stack, not what is done. */
const composeGlobals = new Set(['-f', '--file', '--env-file', '-p', '--project-name', '--progress', '--project-directory', '--profile']);
/** Short flags by subcommand, as their long names, so `-a` and `--all` are the same flag. */
const longNames: Record<string, Record<string, string>> = {
  'docker build': { '-t': '--tag' },
  'docker run': { '-d': '--detach', '-p': '--publish', '-v': '--volume', '-e': '--env', '-m': '--memory', '-u': '--user' },
  'docker ps': { '-a': '--all', '-q': '--quiet' },
  'docker logs': { '-f': '--follow' },
  'docker exec': { '-i': '--interactive', '-t': '--tty', '-u': '--user' },
  'docker stack deploy': { '-c': '--compose-file' },
  'compose up': { '-d': '--detach' },
  'compose down': { '-v': '--volumes' },
  'compose ps': { '-q': '--quiet' },
  'compose logs': { '-f': '--follow' },
};

/** A flag's long name: `--cpus=1` is `--cpus`, `-it` is `-i` and `-t`, each short one by its long name. */
function flagNames(token: string, tool: string, subcommand: string): string[] {
  const name = token.split('=', 1)[0] ?? token;
  const shorts = /^-[a-zA-Z]{2,}$/.test(name) ? [...name.slice(1)].map((letter) => `-${letter}`) : [name];
  const aliases = longNames[`${tool} ${subcommand}`] ?? {};
  return shorts.map((flag) => aliases[flag] ?? flag);
}

function command(tool: CliCommand['tool'], words: string[], flagTokens: string[], source: string): CliCommand {
  const subcommand = words.join(' ');
  return { tool, subcommand, flags: new Set(flagTokens.flatMap((token) => flagNames(token, tool, subcommand))), source };
}

/** Shell words of one line: quotes kept together, `#` starts a comment, `&&`, `;`, `|` and `>` end a command. */
function shellCommands(line: string): string[][] {
  const commands: string[][] = [[]];
  let word: string | undefined;
  let quote: string | undefined;
  const end = (): void => {
    if (word !== undefined) commands.at(-1)?.push(word);
    word = undefined;
  };
  for (let i = 0; i < line.length; i++) {
    const char = line[i] as string;
    if (quote !== undefined) {
      if (char === quote) quote = undefined;
      else word += char;
    } else if (char === "'" || char === '"') {
      quote = char;
      word ??= '';
    } else if (char === '#' && word === undefined) break;
    else if (/\s/.test(char)) end();
    else if ('&;|>'.includes(char)) {
      end();
      if (char === '&') i++;
      commands.push([]);
    } else word = (word ?? '') + char;
  }
  end();
  return commands.filter((words) => words.length > 0);
}

/** Every `docker …` command in the page's shell blocks (continued lines joined, `VAR=value` prefixes dropped). */
export function pageCommands(path: string): CliCommand[] {
  const blocks = [...readRepoFile(path).matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1] ?? '');
  const lines = blocks.flatMap((block) => block.replaceAll('\\\n', ' ').split('\n'));
  const found: CliCommand[] = [];
  for (const line of lines) {
    for (const words of shellCommands(line)) {
      const start = words.findIndex((w) => !/^[A-Z_]+=/.test(w));
      if (words[start] !== 'docker') continue;
      let rest = words.slice(start + 1);
      const tool = rest[0] === 'compose' ? 'compose' : 'docker';
      if (tool === 'compose') {
        rest = rest.slice(1);
        while (composeGlobals.has(rest[0] ?? '')) rest = rest.slice(2);
      }
      const wordCount = managementCommands.has(rest[0] ?? '') ? 2 : 1;
      const flags = rest.slice(wordCount).filter((w) => w.startsWith('-') && w !== '-'); // `-` alone: stdin
      found.push(command(tool, rest.slice(0, wordCount), flags, `${path}: ${line.trim()}`));
    }
  }
  return found;
}

/** The stage's helpers that run `docker <args>` and `docker compose <options> <args>` (test/containers/support). */
const dockerHelpers = new Set(['docker', 'dockerResult', 'dockerFromFile', 'swarm']);
const composeHelpers = new Set(['compose', 'composeOutput', 'run', 'runOutput', 'stack']);

/** The tool a call runs through the stage's helpers, and its argument list. */
function helperOf(node: ts.CallExpression): { tool: CliCommand['tool']; args: ts.Expression | undefined } | undefined {
  const callee = node.expression;
  const name = ts.isIdentifier(callee) ? callee.text : ts.isPropertyAccessExpression(callee) ? callee.name.text : '';
  // followLogsUntil spawns the client itself: spawn(dockerBin, [...]).
  const first = node.arguments[0];
  const spawned = name === 'spawn' && first !== undefined && ts.isIdentifier(first) && first.text === 'dockerBin';
  const tool = dockerHelpers.has(name) || spawned ? 'docker' : composeHelpers.has(name) ? 'compose' : undefined;
  return tool === undefined ? undefined : { tool, args: node.arguments[spawned ? 1 : 0] };
}

/** A file's `const name = …` initializers, so that `...buildArgs` counts the flags it was built with. */
type Constants = Map<string, ts.Expression>;

function constantsOf(source: ts.SourceFile): Constants {
  const constants: Constants = new Map();
  const visit = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer !== undefined)
      constants.set(node.name.text, node.initializer);
    node.forEachChild(visit);
  };
  visit(source);
  return constants;
}

/** The string literals of an expression (through the constants it names), `` `--x=${y}` `` as its text before the value. */
function literalsIn(node: ts.Node, constants: Constants, seen = new Set<string>()): string[] {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return [node.text];
  if (ts.isTemplateExpression(node)) return [node.head.text];
  if (ts.isCallExpression(node) && helperOf(node) !== undefined) return []; // another command's arguments
  const named = ts.isIdentifier(node) ? constants.get(node.text) : undefined;
  if (named !== undefined && ts.isIdentifier(node) && !seen.has(node.text)) return literalsIn(named, constants, seen.add(node.text));
  const found: string[] = [];
  node.forEachChild((child) => void found.push(...literalsIn(child, constants, seen)));
  return found;
}

/** The command of one helper call's argument list, or none when its subcommand is not written in the call. */
function callCommand(
  called: CliCommand['tool'],
  args: ts.ArrayLiteralExpression,
  constants: Constants,
  source: string,
): CliCommand | undefined {
  const literal = (node: ts.Node | undefined): string | undefined =>
    node !== undefined && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) ? node.text : undefined;
  const viaDocker = called === 'docker' && literal(args.elements[0]) === 'compose';
  const tool = viaDocker ? 'compose' : called;
  let elements = args.elements.slice(viaDocker ? 1 : 0);
  if (tool === 'compose') {
    // Options first: spreads of them (`...options`) and compose's own with their values.
    for (;;) {
      const first = elements[0];
      if (first !== undefined && ts.isSpreadElement(first)) elements = elements.slice(1);
      else if (composeGlobals.has(literal(first) ?? '')) elements = elements.slice(2);
      else break;
    }
  }
  const first = literal(elements[0]);
  if (first === undefined) return undefined;
  const second = managementCommands.has(first) ? literal(elements[1]) : undefined;
  const words = second === undefined ? [first] : [first, second];
  const flags = elements
    .slice(words.length)
    .flatMap((element) => literalsIn(element, constants))
    .filter((text) => text.startsWith('-'));
  return command(tool, words, flags, source);
}

/** Every command the container stage's test files and support helpers run. */
export function containerStageCommands(dir = 'test/containers'): CliCommand[] {
  const files = readdirSync(new URL(`../../../${dir}`, import.meta.url), { recursive: true, encoding: 'utf8' }).filter((f) =>
    f.endsWith('.ts'),
  );
  const found: CliCommand[] = [];
  for (const file of files) {
    const path = `${dir}/${file}`;
    const source = ts.createSourceFile(path, readRepoFile(path), ts.ScriptTarget.Latest);
    const constants = constantsOf(source);
    const visit = (node: ts.Node): void => {
      const helper = ts.isCallExpression(node) ? helperOf(node) : undefined;
      if (helper?.args !== undefined && ts.isArrayLiteralExpression(helper.args)) {
        const run = callCommand(helper.tool, helper.args, constants, path);
        if (run !== undefined) found.push(run);
      }
      node.forEachChild(visit);
    };
    visit(source);
  }
  return found;
}
