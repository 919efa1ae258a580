/**
 * The README and docs/*.md say what the code does, and point only inside the repository:
 *
 * - every flag they give (`--x`) is a setting of the program it is given to (the gateway's are the
 *   rows of src/settings.ts; `npm run local-service` and `npm run bench` have their own parsers);
 * - every SCREAMING_SNAKE word (an env variable, an error code, an enum value) is one the code knows:
 *   a setting's env name, a catalogue code (src/errors.ts), a schema enum value, a string the sources
 *   use whole (upstream statuses, `extensions.reason` values), an env variable a program reads, or a
 *   variable of deploy/; and each row of docs/errors.md's code table says what the catalogue says;
 * - every gateway route they name (`/graphql`, `/health`, `/ready`, `/metrics`, GraphiQL's assets) is
 *   served by the real gateway;
 * - every relative link resolves to a file inside the repository (and its `#anchor` to a heading),
 *   every path they name (`src/gateway/yoga.ts`, `test/replicas/`) is there, and nothing in the
 *   README, docs/, src/, test/, bench/ or scripts/ cites the workspace's folder of reference notes,
 *   which is not part of the repository.
 *
 * Each scanner is first run on a sample with one known mistake of its kind, so a scanner that stopped
 * finding anything fails instead of passing. (The code tables of docs/errors.md against the catalogue,
 * both ways, are test/gateway/error-catalogue.test.ts; the configuration table is settings-table.test.ts.)
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { isEnumType } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE, ERROR_CODES, type ErrorCode } from '../../src/errors.ts';
import { schema } from '../../src/schema/index.ts';
import { SETTINGS } from '../../src/settings.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { startTestLocalService, type TestLocalService } from '../helpers/local-service.ts';

const ROOT = resolve(import.meta.dirname, '../..');

interface Page {
  /** Path relative to the repository root, e.g. `docs/operations.md`. */
  page: string;
  text: string;
}

/** `page:line: what` for a finding. */
type Finding = string;

function readPages(): Page[] {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((file) => file.endsWith('.md'))
    .sort()
    .map((file) => `docs/${file}`);
  return ['README.md', ...docs].map((page) => ({ page, text: readFileSync(join(ROOT, page), 'utf8') }));
}

/** Every file under `dir` (relative to the root) whose name ends with one of `extensions`. */
function filesUnder(dir: string, extensions: readonly string[]): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((file) => extensions.some((extension) => file.endsWith(extension)))
    .map((file) => join(dir, file))
    .filter((file) => statSync(join(ROOT, file)).isFile());
}

function readAll(files: readonly string[]): string {
  return files.map((file) => readFileSync(join(ROOT, file), 'utf8')).join('\n');
}

interface Line {
  number: number;
  text: string;
  /** The language of the fenced block the line is in (`''` for a bare fence), or null outside one. */
  fence: string | null;
}

/** A page's lines with the fenced block each is in; fence lines themselves are left out. */
function linesOf(text: string): Line[] {
  const lines: Line[] = [];
  let fence: string | null = null;
  text.split('\n').forEach((line, index) => {
    const opening = /^\s*```(\w*)/.exec(line);
    if (opening) {
      fence = fence === null ? (opening[1] ?? '') : null;
      return;
    }
    lines.push({ number: index + 1, text: line, fence });
  });
  return lines;
}

/** The backtick span of `line` around `index`, or null when `index` is outside every span. */
function codeSpanAround(line: string, index: number): string | null {
  for (const span of line.matchAll(/`[^`]*`/g)) {
    const start = span.index ?? 0;
    if (index >= start && index < start + span[0].length) return span[0];
  }
  return null;
}

// --- flags -----------------------------------------------------------------------------------------

type Program = 'gateway' | 'local-service' | 'bench' | 'other';

/** Options of the `parseArgs` calls in `text` (`name: { type: ... }` and `'name': { type: ... }`). */
function parseArgsOptions(text: string): Set<string> {
  return new Set(
    [...text.matchAll(/^\s*'?([a-z][a-z0-9-]*)'?: \{ type: '/gm)].map((match) => match[1] ?? ''),
  );
}

interface KnownFlags {
  gateway: ReadonlySet<string>;
  'local-service': ReadonlySet<string>;
  bench: ReadonlySet<string>;
}

function knownFlags(): KnownFlags {
  const gateway = new Set(['help', ...SETTINGS.flatMap((setting) => (setting.flag ? [setting.flag] : []))]);
  const localService = parseArgsOptions(readFileSync(join(ROOT, 'src/local-service/main.ts'), 'utf8'));
  const benchText = readAll(filesUnder('bench', ['.ts', '.mjs']));
  // The bench's own options, the flags it passes on (to node, the gateway, the local service), and
  // the programs it drives.
  const bench = new Set([
    ...parseArgsOptions(benchText),
    ...[...benchText.matchAll(/'--([a-z][a-z0-9-]*)'/g)].map((match) => match[1] ?? ''),
    ...gateway,
    ...localService,
  ]);
  return { gateway, 'local-service': localService, bench };
}

/** Which program a command (a backtick span or a line of a shell block) runs, or null when unsaid. */
function programOf(command: string): Program | null {
  if (/npm run local-service|local-service\.(ts|js)\b/.test(command)) return 'local-service';
  if (/npm run bench|\bbench\//.test(command)) return 'bench';
  if (/npm (start|run dev)\b|src\/index\.ts|dist\/index\.js/.test(command)) return 'gateway';
  if (/\b(npm|npx|node|curl|apt-get|haproxy|redis-server|git|claude)\s/.test(command)) return 'other';
  return null;
}

/** The program a page's prose talks about when a flag stands alone. */
function programOfPage(page: string): Program {
  if (page === 'docs/local-service.md') return 'local-service';
  if (page === 'docs/performance.md') return 'bench';
  return 'gateway';
}

/** Flags that are not options of the program they are given to. */
function unknownFlags(pages: readonly Page[], known: KnownFlags): Finding[] {
  const findings: Finding[] = [];
  for (const { page, text } of pages) {
    for (const line of linesOf(text)) {
      // Flags inside GraphQL, TypeScript or JSON examples are data (an MCP server's args), not ours.
      if (line.fence !== null && !['', 'sh', 'bash', 'shell', 'console'].includes(line.fence)) continue;
      for (const match of line.text.matchAll(/(?<![\w-])--([a-z][a-z0-9-]*)/g)) {
        const flag = match[1] ?? '';
        const span = line.fence === null ? codeSpanAround(line.text, match.index ?? 0) : null;
        const program =
          (span !== null ? programOf(span) : null) ?? programOf(line.text) ?? programOfPage(page);
        if (program === 'other' || known[program].has(flag)) continue;
        findings.push(`${page}:${line.number}: --${flag} is not a flag of ${program}`);
      }
    }
  }
  return findings;
}

// --- SCREAMING_SNAKE words ---------------------------------------------------------------------------

/** A word of capitals, digits and at least one underscore, not part of a dotted name or a `$` id. */
const SCREAMING_WORD = /(?<![\w$.])[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+(?![\w$(])/g;

function knownWords(): Set<string> {
  const words = new Set<string>([...SETTINGS.map((setting) => setting.env), ...ERROR_CODES]);
  for (const type of Object.values(schema.getTypeMap())) {
    if (isEnumType(type)) for (const value of type.getValues()) words.add(value.name);
  }
  const sources = readAll([
    ...filesUnder('src', ['.ts']),
    ...filesUnder('bench', ['.ts', '.mjs']),
    ...filesUnder('scripts', ['.ts', '.mjs']),
    ...filesUnder('test', ['.ts']),
  ]);
  // Whole string literals of the sources: upstream vocabulary (statuses, task states), extension
  // values (`reason: 'CIRCUIT_OPEN'`), refusal codes.
  for (const match of readAll(filesUnder('src', ['.ts'])).matchAll(
    /['"`]([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)['"`]/g,
  )) {
    words.add(match[1] ?? '');
  }
  // Environment variables a program reads.
  for (const match of sources.matchAll(/\benv(?:\.|\[['"])([A-Z][A-Z0-9_]*)/g)) words.add(match[1] ?? '');
  // Variables of the deployment files (`${LB_BIND}`).
  for (const match of readAll(filesUnder('deploy', ['.cfg', '.env'])).matchAll(
    /\$\{([A-Z][A-Z0-9_]*)|^([A-Z][A-Z0-9_]*)=/gm,
  )) {
    words.add(match[1] ?? match[2] ?? '');
  }
  return words;
}

/** SCREAMING_SNAKE words the code does not know. */
function unknownWords(pages: readonly Page[], known: ReadonlySet<string>): Finding[] {
  const findings: Finding[] = [];
  for (const { page, text } of pages) {
    for (const line of linesOf(text)) {
      for (const match of line.text.matchAll(SCREAMING_WORD)) {
        const word = match[0];
        if (known.has(word)) continue;
        findings.push(
          `${page}:${line.number}: ${word} is no setting (src/settings.ts), catalogue code (src/errors.ts), schema enum value, string of src/, env variable read, or deploy/ variable`,
        );
      }
    }
  }
  return findings;
}

/** Rows of the `code` tables of docs/errors.md whose status or meaning differ from the catalogue. */
function catalogueRowsThatDiffer(errorsPage: string): Finding[] {
  const findings: Finding[] = [];
  for (const line of errorsPage.split('\n')) {
    const cells = line.split('|').map((cell) => cell.trim());
    const code = /^`([A-Z][A-Z_]+)`$/.exec(cells[1] ?? '')?.[1];
    if (!code || cells.length < 5 || !(code in ERROR_CATALOGUE)) continue;
    const entry = ERROR_CATALOGUE[code as ErrorCode];
    const status = entry.status === null ? '—' : String(entry.status);
    if (cells[2] !== status || cells[3] !== entry.meaning) {
      findings.push(
        `docs/errors.md ${code}: "${cells[2]} | ${cells[3]}" but src/errors.ts says "${status} | ${entry.meaning}"`,
      );
    }
  }
  return findings;
}

// --- gateway routes ----------------------------------------------------------------------------------

/** How the docs write the gateway's own address. */
const GATEWAY_AUTHORITIES = [
  'localhost:4000',
  '127.0.0.1:4000',
  'HOST:PORT',
  '<gateway>',
  'gateway.example.com',
];

/**
 * First path segments of the upstream's routes (both APIs: `/api/...`, `/sockets/events/{id}`,
 * `/socket.io/`, `/alive`, `/server_info`) and of files (`/proc`, a sandbox's `/workspace`): a bare path starting with one is not
 * the gateway's. `/health` and `/ready` exist on both sides; outside the pages about the upstream's
 * routes they are the gateway's.
 */
const NOT_GATEWAY_SEGMENTS = new Set([
  'api',
  'sockets',
  'socket.io',
  'alive',
  'server_info',
  'proc',
  'workspace',
]);

/** Pages whose bare paths are the upstream's (the local service's routes, the upstream facts). */
const UPSTREAM_PAGES = new Set(['docs/local-service.md', 'docs/upstream-facts.md']);

interface RouteMention {
  where: string;
  path: string;
}

/** Paths the docs give as the gateway's: in URLs with its address, and bare (`GET /ready`, `` `/metrics` ``). */
function gatewayRouteMentions(pages: readonly Page[]): RouteMention[] {
  const mentions: RouteMention[] = [];
  for (const { page, text } of pages) {
    for (const line of linesOf(text)) {
      const where = `${page}:${line.number}`;
      for (const match of line.text.matchAll(/\b(?:https?|wss?):\/\/([^\s/`'")]+)(\/[^\s`'",)\]]*)?/g)) {
        const [, authority = '', path] = match;
        if (path && GATEWAY_AUTHORITIES.includes(authority)) mentions.push({ where, path });
      }
      if (UPSTREAM_PAGES.has(page)) continue;
      for (const match of line.text.matchAll(/(?<=^|[\s(`])\/([A-Za-z][\w.-]*)((?:\/[\w.<>{}:-]*)*)/g)) {
        const [path, first = ''] = match;
        if (!NOT_GATEWAY_SEGMENTS.has(first)) mentions.push({ where, path });
      }
    }
  }
  return mentions;
}

/** Whether the gateway at `base` serves `path` (a `<placeholder>` matches one path segment's part). */
async function serves(base: string, path: string, assetLinks: readonly string[]): Promise<boolean> {
  let concrete = path;
  if (/[<{]/.test(path)) {
    const pattern = new RegExp(
      `^${path
        .split(/(<[^>]*>|\{[^}]*\})/)
        .map((part, index) => (index % 2 === 1 ? '[^/]+' : part.replace(/[.*+?^$()|[\]\\]/g, '\\$&')))
        .join('')}$`,
    );
    // A GraphiQL asset is served under the name its page links to; any other placeholder (a token)
    // stands for one segment the route answers for, whatever it holds (a refusal is not a 404).
    const link = assetLinks.find((candidate) => pattern.test(candidate));
    if (link) concrete = link;
    else if (path.startsWith('/graphiql/')) return false;
    else concrete = path.replace(/<[^>]*>|\{[^}]*\}/g, 'x');
  }
  const response = await fetch(new URL(concrete, base), { headers: { accept: 'text/html' } });
  await response.arrayBuffer();
  return response.status !== 404;
}

/** The asset URLs GraphiQL's page links to (`/graphiql/assets/...`). */
async function graphiqlAssetLinks(graphqlUrl: string): Promise<string[]> {
  const page = await (await fetch(graphqlUrl, { headers: { accept: 'text/html' } })).text();
  return [...page.matchAll(/(?:href|src)="([^"]+)"/g)].map((match) => match[1] ?? '');
}

// --- links and references outside the repository ------------------------------------------------------

/** GitHub's anchor of a heading: lower case, punctuation but `-` and `_` removed, spaces as `-`. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of linesOf(markdown)) {
    if (line.fence !== null) continue;
    const heading = /^#{1,6}\s+(.*)$/.exec(line.text)?.[1];
    if (heading === undefined) continue;
    const base = slug(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** Relative links that leave the repository, name no file, or name a heading the page lacks. */
function brokenLinks(pages: readonly Page[], root: string): Finding[] {
  const findings: Finding[] = [];
  for (const { page, text } of pages) {
    for (const line of linesOf(text)) {
      if (line.fence !== null) continue;
      for (const match of line.text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = match[1] ?? '';
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
        const [file = '', anchor] = target.split('#');
        const path = file === '' ? join(root, page) : resolve(root, dirname(page), file);
        const where = `${page}:${line.number}: (${target})`;
        if (relative(root, path).startsWith('..')) findings.push(`${where} points outside the repository`);
        else if (!existsSync(path)) findings.push(`${where} names no file`);
        else if (anchor && path.endsWith('.md') && !anchorsOf(readFileSync(path, 'utf8')).has(anchor))
          findings.push(`${where} names no heading of ${relative(root, path)}`);
      }
    }
  }
  return findings;
}

/** `a/{b,c}.ts` as `a/b.ts` and `a/c.ts`. */
function expandBraces(path: string): string[] {
  const match = /^(.*?)\{([^{}]*)\}(.*)$/.exec(path);
  if (!match) return [path];
  const [, head = '', options = '', tail = ''] = match;
  return options.split(',').flatMap((option) => expandBraces(`${head}${option}${tail}`));
}

/**
 * Paths of the repository named in text (`src/gateway/yoga.ts`, `src/gateway/http/{a,b}.ts`,
 * `test/replicas/`) that name nothing. A path with a `<placeholder>` names something a run creates
 * (`bench/results/profiles/<file>.cpuprofile`) and is left out; `*` matches within one name.
 */
function missingPaths(pages: readonly Page[], root: string): Finding[] {
  const findings: Finding[] = [];
  for (const { page, text } of pages) {
    for (const line of linesOf(text)) {
      for (const match of line.text.matchAll(
        /(?<![\w./-])((?:src|test|bench|scripts|deploy|docs)\/[\w./{},*<>-]*)/g,
      )) {
        const written = (match[1] ?? '').replace(/[.,]+$/, '');
        if (written.includes('<')) continue;
        for (const path of expandBraces(written)) {
          const exists = path.includes('*')
            ? existsSync(join(root, dirname(path))) &&
              readdirSync(join(root, dirname(path))).some((name) =>
                new RegExp(`^${path.split('/').pop()?.replace(/\./g, '\\.').replace(/\*/g, '[^/]*')}$`).test(
                  name,
                ),
              )
            : existsSync(join(root, path));
          if (!exists) findings.push(`${page}:${line.number}: ${path} is not in the repository`);
        }
      }
    }
  }
  return findings;
}

/**
 * Citations of the workspace's reference notes (a folder beside the repository, absent from every
 * clone). Spelled in parts so that this file does not cite them itself.
 */
const OUTSIDE_NOTES = new RegExp(
  [
    ['shared', 'reference'].join('\\/'),
    ['\\.\\.', 'shared', ''].join('\\/'),
    ['HOUSE', 'STYLE'].join('_'),
    // The notes' own file names, cited without their folder.
    ...['upstream-v1', 'upstream-api', 'toolchain-notes', 'seed-interface'].map((name) => `\\b${name}\\.md`),
  ].join('|'),
);

function citationsOutside(files: readonly string[]): Finding[] {
  return files.flatMap((file) =>
    readFileSync(join(ROOT, file), 'utf8')
      .split('\n')
      .flatMap((line, index) => (OUTSIDE_NOTES.test(line) ? [`${file}:${index + 1}: ${line.trim()}`] : [])),
  );
}

// --- the tests ---------------------------------------------------------------------------------------

const pages = readPages();

describe('docs drift: settings', () => {
  const known = knownFlags();

  it('finds a flag no program has (the scanner itself)', () => {
    const sample: Page = {
      page: 'docs/sample.md',
      text: [
        'Raise `--streams-per-cred` or `--port`;',
        '```sh',
        'npm run local-service -- --api v1 --upstream-api v1',
        'npm install --omit=dev',
        '```',
        '```graphql',
        '{ a(args: ["--root"]) }',
        '```',
      ].join('\n'),
    };
    expect(unknownFlags([sample], known)).toEqual([
      'docs/sample.md:1: --streams-per-cred is not a flag of gateway',
      'docs/sample.md:3: --upstream-api is not a flag of local-service',
    ]);
  });

  it('every flag in the README and docs/ is a setting of the program it is given to', () => {
    expect(known.gateway.size).toBeGreaterThan(40);
    expect(known['local-service'].has('api')).toBe(true);
    expect(unknownFlags(pages, known)).toEqual([]);
  });
});

describe('docs drift: codes, env variables and other SCREAMING_SNAKE words', () => {
  const known = knownWords();

  it('finds a word the code does not know (the scanner itself)', () => {
    const sample: Page = {
      page: 'docs/sample.md',
      text: 'More than STREAMS_PER_CREDENTIAL (`MAX_STREAMS_PER_CREDENTIAL`) gets `TOO_MANY_STREAMS`; not STATUS$READY_X or Number.MAX_SAFE_INTEGER.',
    };
    expect(unknownWords([sample], known)).toEqual([
      expect.stringMatching(/^docs\/sample\.md:1: STREAMS_PER_CREDENTIAL is no setting/),
    ]);
  });

  it('every one in the README and docs/ is a setting, a catalogue code or a value the code uses', () => {
    expect(unknownWords(pages, known)).toEqual([]);
  });

  it("each row of docs/errors.md's code table gives the catalogue's status and meaning", () => {
    const errorsPage = readFileSync(join(ROOT, 'docs/errors.md'), 'utf8');
    expect(
      catalogueRowsThatDiffer(
        errorsPage.replace('| 429         | the gateway', '| 428         | the gateway'),
      ),
    ).toEqual([expect.stringMatching(/^docs\/errors\.md RATE_LIMITED: "428 \| /)]);
    expect(catalogueRowsThatDiffer(errorsPage)).toEqual([]);
  });
});

describe('docs drift: gateway routes', () => {
  let service: TestLocalService;
  let gateway: TestGateway;
  beforeAll(async () => {
    service = await startTestLocalService();
    gateway = await startTestGateway({ upstreamUrl: service.url });
  });
  afterAll(async () => {
    await gateway?.close();
    await service?.close();
  });

  it('finds a route the gateway does not serve (the scanner itself)', async () => {
    const sample: Page = {
      page: 'docs/sample.md',
      text: 'Probe `GET /healthz` at `http://localhost:4000/graphql`, not the upstream `GET /alive`.',
    };
    const mentions = gatewayRouteMentions([sample]);
    expect(mentions.map((mention) => mention.path)).toEqual(['/graphql', '/healthz']);
    const assets = await graphiqlAssetLinks(gateway.url);
    expect(await serves(gateway.url, '/healthz', assets)).toBe(false);
    expect(await serves(gateway.url, '/graphiql/assets/<name>.<hash>.<ext>', [])).toBe(false);
  });

  it('every gateway route the README and docs/ name is served', async () => {
    const mentions = gatewayRouteMentions(pages);
    const paths = new Set(mentions.map((mention) => mention.path));
    for (const path of ['/graphql', '/health', '/ready', '/metrics']) expect(paths).toContain(path);
    const assets = await graphiqlAssetLinks(gateway.url);
    const missing: Finding[] = [];
    for (const path of paths) {
      if (!(await serves(gateway.url, path, assets))) {
        const where = mentions.filter((mention) => mention.path === path).map((mention) => mention.where);
        missing.push(`${path} (${where.join(', ')}) is not served`);
      }
    }
    expect(missing).toEqual([]);
  });
});

describe('docs drift: links and references stay inside the repository', () => {
  it('finds a link out of the repository, to no file, or to no heading (the scanner itself)', () => {
    const sample: Page = {
      page: 'docs/sample.md',
      text: [
        `[notes](../../${['shared', 'reference', 'notes.md'].join('/')})`,
        '[gone](missing.md) [errors](errors.md#every-code) [bad](errors.md#no-such-heading)',
        '[up](../README.md#quick-start) [site](https://github.com/OpenHands/OpenHands)',
      ].join('\n'),
    };
    expect(brokenLinks([sample], ROOT)).toEqual([
      expect.stringMatching(/^docs\/sample\.md:1: .* points outside the repository$/),
      'docs/sample.md:2: (missing.md) names no file',
      'docs/sample.md:2: (errors.md#no-such-heading) names no heading of docs/errors.md',
    ]);
  });

  it('every relative link of the README and docs/ resolves to a file and heading of the repository', () => {
    expect(brokenLinks(pages, ROOT)).toEqual([]);
  });

  it('finds a named path that is not in the repository (the scanner itself)', () => {
    const sample: Page = {
      page: 'docs/sample.md',
      text: 'See `src/gateway/http/{transport-guard,no-such-file}.ts`, src/upstream/no-such-folder/ and `test/replicas/`; `bench/results/profiles/<file>.cpuprofile` is made by a run.',
    };
    expect(missingPaths([sample], ROOT)).toEqual([
      'docs/sample.md:1: src/gateway/http/no-such-file.ts is not in the repository',
      'docs/sample.md:1: src/upstream/no-such-folder/ is not in the repository',
    ]);
  });

  it('every path of the repository the README and docs/ name is there', () => {
    expect(missingPaths(pages, ROOT)).toEqual([]);
  });

  it('nothing in the README, docs/, src/, test/, bench/ or scripts/ cites notes outside the repository', () => {
    const sample = `(see ../${['shared', 'reference', 'notes.md'].join('/')})`;
    expect(OUTSIDE_NOTES.test(sample)).toBe(true);
    expect(OUTSIDE_NOTES.test(`(§5.5 of ${['upstream-v1', 'md'].join('.')})`)).toBe(true);
    expect(OUTSIDE_NOTES.test('src/gateway/shared-state/shared-state.ts')).toBe(false);
    const files = [
      'README.md',
      ...pages.map(({ page }) => page),
      ...filesUnder('src', ['.ts']),
      ...filesUnder('test', ['.ts']),
      ...filesUnder('bench', ['.ts', '.mjs']),
      ...filesUnder('scripts', ['.ts', '.mjs']),
    ];
    expect(citationsOutside([...new Set(files)])).toEqual([]);
  });
});
