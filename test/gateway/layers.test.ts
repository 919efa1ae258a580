/**
 * The source layers import one way (docs/architecture.md): index -> gateway -> schema -> upstream ->
 * contract, and local-service -> contract only; inside gateway/, the root assembles the rooms and the
 * rooms import each other one way (GATEWAY_ROOMS); inside upstream/, the schema and the gateway talk to
 * the port and only the composition root picks an adapter (upstreamRule), and the live core
 * (upstream/live/) names no API (apiWordsIn); in every layer, one API's files (a `vN/` folder) never
 * import another API's, and shared files import none but through the roots that pick one
 * (apiSideRule). An import against the arrows fails here with the file, the line and the rule it
 * breaks, so the layering stays true as the code grows.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

/** Depth of each layer: a file may import its own layer and deeper ones, never shallower ones. */
const DEPTH: Record<string, number> = {
  entry: 0, // index.ts, cluster.ts, config.ts, settings*.ts
  gateway: 1,
  schema: 2,
  upstream: 3,
  errors: 4, // the catalogue: imported by every GraphQL-side layer, imports none of ours
  contract: 5,
};

/**
 * The rooms of gateway/ and the rooms each may import. The root (yoga.ts, server.ts, context.ts,
 * hardening.ts, shutdown.ts) assembles them and may import any; no room imports the root.
 */
const GATEWAY_ROOMS: Record<string, readonly string[]> = {
  http: ['protection', 'compiled'],
  graphiql: [],
  websocket: ['protection'],
  protection: [],
  observability: ['websocket', 'protection'],
  'shared-state': ['protection'],
  workspace: [],
  mcp: ['protection'],
  compiled: ['protection', 'observability'],
};

/** The room of a gateway/ file (`root` for the assembling files), or undefined outside gateway/. */
function roomOf(file: string): string | undefined {
  const [top, room, rest] = file.split('/');
  if (top !== 'gateway' || room === undefined) return undefined;
  return rest === undefined ? 'root' : room;
}

/** `why` when a gateway/ file may not import another gateway/ file, else null. */
function gatewayRoomRule(from: string, to: string): string | null {
  const fromRoom = roomOf(from);
  const toRoom = roomOf(to);
  if (fromRoom === undefined || toRoom === undefined || fromRoom === toRoom || fromRoom === 'root')
    return null;
  if (toRoom === 'root') return `gateway/${fromRoom}/ may not import the gateway root`;
  const allowed = GATEWAY_ROOMS[fromRoom];
  if (allowed === undefined) return `gateway/${fromRoom}/ is not a known room (add it to GATEWAY_ROOMS)`;
  return allowed.includes(toRoom) ? null : `gateway/${fromRoom}/ may not import gateway/${toRoom}/`;
}

/** The one file outside upstream/ that may import an adapter: it picks which one answers. */
const COMPOSITION_ROOT = 'gateway/yoga.ts';

/**
 * The part of upstream/ a file is in: an adapter (`v0`, `v1`, ...: one folder per API), the `port`
 * (the interface the schema talks to and its domain types), or `shared` (everything else: the HTTP
 * client, breaker, fair share, timestamps, paging, ordering, the subscriber machinery). Undefined
 * outside upstream/.
 */
function upstreamPartOf(file: string): string | undefined {
  const [top, part, rest] = file.split('/');
  if (top !== 'upstream' || part === undefined) return undefined;
  if (rest !== undefined && /^v\d+$/.test(part)) return part;
  return rest !== undefined && part === 'port' ? 'port' : 'shared';
}

/**
 * `why` when `from` may not import the upstream file `to`, else null. An adapter may import the shared
 * parts, the port, contract/ and its own files; the shared parts and the port never import an adapter
 * (they are what every adapter builds on); outside upstream/ only the composition root imports one.
 */
function upstreamRule(from: string, to: string): string | null {
  const toPart = upstreamPartOf(to);
  if (toPart === undefined || toPart === 'port' || toPart === 'shared') return null;
  const fromPart = upstreamPartOf(from);
  if (fromPart === toPart) return null;
  if (fromPart === undefined) {
    return from === COMPOSITION_ROOT
      ? null
      : `only ${COMPOSITION_ROOT} may import an upstream adapter (upstream/${toPart}/): talk to the port, upstream/port/`;
  }
  if (fromPart === 'port' || fromPart === 'shared') {
    return `the upstream ${fromPart === 'port' ? 'port' : 'shared parts'} may not import an adapter (upstream/${toPart}/)`;
  }
  return `upstream/${fromPart}/ may not import another adapter (upstream/${toPart}/)`;
}

/** The live core every API's streams run on: what an API needs there, its adapter supplies. */
const LIVE_CORE = 'upstream/live/';

/** Words that name one API or its wire: an event id (V0's integer), Socket.IO (V0's socket), the APIs. */
const API_WORDS = /\beventId\b|[Ss]ocket\.(?:io|IO)|\bV[01]\b|\bv[01]\//g;

/** `file:line: word` for every API word in `text` (a file of the live core). */
function apiWordsIn(file: string, text: string): string[] {
  return text
    .split('\n')
    .flatMap((line, index) =>
      [...line.matchAll(API_WORDS)].map((match) => `${file}:${index + 1}: ${match[0]}`),
    );
}

/**
 * The API a file belongs to: the `vN/` folder in its path (contract/v0/, local-service/v1/,
 * upstream/v0/live/, ...), undefined for what all APIs share.
 */
function apiOf(file: string): string | undefined {
  return /(?:^|\/)(v\d+)\//.exec(file)?.[1];
}

/**
 * Files outside every `vN/` folder that may still import one API's files: the roots that pick or start
 * one (gateway/yoga.ts picks an adapter; local-service/index.ts starts a face), and the port's
 * vocabulary, which takes OpenHands' agent states, statuses and triggers from V0's wire contract once.
 */
const API_CHOOSERS = new Set([COMPOSITION_ROOT, 'local-service/index.ts', 'upstream/port/vocabulary.ts']);

/**
 * `why` when `from` may not import `to` across the API folders, else null: one API's files never
 * import another's (in any layer), and what is shared never imports one API's files, except in
 * {@link API_CHOOSERS}. With the same inner names on both sides, this is what keeps the two sides apart.
 */
function apiSideRule(from: string, to: string): string | null {
  const toApi = apiOf(to);
  if (toApi === undefined) return null;
  const fromApi = apiOf(from);
  if (fromApi === toApi) return null;
  if (fromApi !== undefined)
    return `${fromApi} code may not import ${toApi}'s (${to.split('/')[0]}/${toApi}/)`;
  if (API_CHOOSERS.has(from)) return null;
  return `shared code may not import one API's files (${toApi}/): move what both need out of ${toApi}/`;
}

function layerOf(file: string): string {
  const top = file.split('/')[0] ?? '';
  if (top === 'errors.ts') return 'errors';
  if (top.endsWith('.ts')) return 'entry';
  return top;
}

/** Relative imports of one file, static and dynamic, with their line numbers. */
function importsOf(text: string): { target: string; line: number }[] {
  const found: { target: string; line: number }[] = [];
  text.split('\n').forEach((line, index) => {
    for (const match of line.matchAll(/(?:from|import\()\s*'(\.{1,2}\/[^']+)'/g)) {
      if (match[1]) found.push({ target: match[1], line: index + 1 });
    }
  });
  return found;
}

/** `file:line imports target (rule)` for every import against the arrows. */
/** Every import edge between the files under src/ (type-only ones too: a circle of types is one job split wrong). */
function importGraph(): Map<string, string[]> {
  const files = readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const targets = importsOf(readFileSync(join(SRC, file), 'utf8')).map(({ target }) =>
      relative(SRC, join(SRC, dirname(file), target)),
    );
    graph.set(file, targets);
  }
  return graph;
}

/** The import circles of `graph`: each strongly connected group of two or more files (Tarjan). */
function importCircles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, index.size);
    low.set(file, index.get(file) as number);
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!graph.has(target)) continue;
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file) as number, low.get(target) as number));
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file) as number, index.get(target) as number));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const group: string[] = [];
    for (let member = stack.pop(); member !== undefined; member = stack.pop()) {
      onStack.delete(member);
      group.push(member);
      if (member === file) break;
    }
    if (group.length > 1) circles.push(group.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return circles;
}

function violations(): string[] {
  const files = readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
  const found: string[] = [];
  for (const file of files) {
    const from = layerOf(file);
    for (const { target, line } of importsOf(readFileSync(join(SRC, file), 'utf8'))) {
      const imported = relative(SRC, join(SRC, dirname(file), target));
      const to = layerOf(imported);
      const where = `${file}:${line} imports ${imported}`;
      const adapterRule = upstreamRule(file, imported);
      if (adapterRule) found.push(`${where} (${adapterRule})`);
      const sideRule = apiSideRule(file, imported);
      if (sideRule) found.push(`${where} (${sideRule})`);
      if (from === to) {
        const roomRule = gatewayRoomRule(file, imported);
        if (roomRule) found.push(`${where} (${roomRule})`);
        continue;
      }
      if (from === 'local-service') {
        if (to !== 'contract') found.push(`${where} (local-service imports only contract/)`);
      } else if (to === 'local-service') {
        // The entry starts the embedded service (index.ts); nothing on the GraphQL side may reach into it.
        if (from !== 'entry') found.push(`${where} (only the entry starts the local service)`);
      } else if ((DEPTH[to] ?? -1) < (DEPTH[from] ?? Number.POSITIVE_INFINITY)) {
        found.push(`${where} (${from} may not import ${to})`);
      } else if (from === 'schema' && to === 'contract') {
        // Wire shapes stop at upstream/: the schema's enums come from the port's vocabulary.
        found.push(
          `${where} (schema speaks the port's vocabulary, upstream/port/vocabulary.ts, not a wire contract)`,
        );
      }
    }
  }
  return found;
}

describe('source layers', () => {
  it("import one way: entry -> gateway -> schema -> upstream -> contract; local-service -> contract; gateway rooms one way; only the composition root picks an upstream adapter; one API never imports another's, shared code none but through the choosers", () => {
    expect(violations()).toEqual([]);
  });

  it('has no import circle (two files that import each other are one job split wrong)', () => {
    expect(importCircles(importGraph())).toEqual([]);
  });

  it('finds an import circle (the check itself can fail)', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts', 'd.ts']],
      ['d.ts', []],
    ]);
    expect(importCircles(graph)).toEqual([['a.ts', 'b.ts', 'c.ts']]);
  });

  it('finds an import against the arrows (the check itself can fail)', () => {
    expect(importsOf("import { x } from '../gateway/yoga.ts';\nconst y = await import('./a.ts');")).toEqual([
      { target: '../gateway/yoga.ts', line: 1 },
      { target: './a.ts', line: 2 },
    ]);
    expect(DEPTH[layerOf('gateway/yoga.ts')]).toBeLessThan(DEPTH[layerOf('upstream/http.ts')] ?? 0);
    expect(layerOf('errors.ts')).toBe('errors');
    expect(layerOf('config.ts')).toBe('entry');
    expect(gatewayRoomRule('gateway/protection/limits.ts', 'gateway/websocket/live-fan-out.ts')).toMatch(
      /may not/,
    );
    expect(gatewayRoomRule('gateway/http/transport-guard.ts', 'gateway/context.ts')).toMatch(/gateway root/);
    expect(gatewayRoomRule('gateway/yoga.ts', 'gateway/http/credentials.ts')).toBeNull();
    expect(
      gatewayRoomRule('gateway/websocket/live-fan-out.ts', 'gateway/protection/suggestions.ts'),
    ).toBeNull();
  });

  it('keep the live core free of any API: no event id, no Socket.IO, no V0 or V1 (adapters supply those)', () => {
    const files = readdirSync(join(SRC, LIVE_CORE), { encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    expect(files.length).toBeGreaterThan(0);
    const found = files.flatMap((file) =>
      apiWordsIn(`${LIVE_CORE}${file}`, readFileSync(join(SRC, LIVE_CORE, file), 'utf8')),
    );
    expect(found).toEqual([]);
  });

  it('finds an API named in the live core (the check itself can fail)', () => {
    const planted =
      "/** Orders by eventId. */\nimport { io } from 'socket.io-client';\n// as V0 does, see v1/live/\n";
    expect(apiWordsIn('upstream/live/x.ts', planted)).toEqual([
      'upstream/live/x.ts:1: eventId',
      'upstream/live/x.ts:2: socket.io',
      'upstream/live/x.ts:3: V0',
      'upstream/live/x.ts:3: v1/',
    ]);
    expect(apiWordsIn('upstream/live/x.ts', 'const position = order.positionOf(event);')).toEqual([]);
  });

  it('keeps the APIs apart in every layer (the check itself can fail)', () => {
    expect(apiOf('contract/v0/records.ts')).toBe('v0');
    expect(apiOf('upstream/v1/live/catch-up.ts')).toBe('v1');
    expect(apiOf('contract/common.ts')).toBeUndefined();
    expect(apiSideRule('upstream/v1/events.ts', 'contract/v0/records.ts')).toMatch(
      /v1 code may not import v0's/,
    );
    expect(apiSideRule('local-service/v1/agent.ts', 'local-service/v0/agent.ts')).toMatch(/v1 code/);
    expect(apiSideRule('local-service/database.ts', 'local-service/v0/schema-sql.ts')).toMatch(/shared code/);
    expect(apiSideRule('local-service/index.ts', 'local-service/v0/face.ts')).toBeNull();
    expect(apiSideRule('local-service/v0/store.ts', 'local-service/database.ts')).toBeNull();
    expect(apiSideRule('schema/events.ts', 'contract/v0/records.ts')).toMatch(/shared code may not/);
    expect(apiSideRule('upstream/live/subscriber-queue.ts', 'upstream/v0/events.ts')).toMatch(/shared code/);
    expect(apiSideRule('upstream/v1/events.ts', 'contract/v1/events.ts')).toBeNull();
    expect(apiSideRule('upstream/v1/events.ts', 'contract/common.ts')).toBeNull();
    expect(apiSideRule('upstream/port/vocabulary.ts', 'contract/v0/records.ts')).toBeNull();
  });

  it('finds an adapter imported past the port (the upstream check itself can fail)', () => {
    expect(upstreamPartOf('upstream/v0/live/live-events.ts')).toBe('v0');
    expect(upstreamPartOf('upstream/v1/live/conversation-socket.ts')).toBe('v1');
    expect(upstreamPartOf('upstream/port/upstream.ts')).toBe('port');
    expect(upstreamPartOf('upstream/http.ts')).toBe('shared');
    expect(upstreamPartOf('upstream/live/subscriber-queue.ts')).toBe('shared');
    expect(upstreamPartOf('upstream/live/shared-socket.ts')).toBe('shared');
    expect(upstreamPartOf('schema/history.ts')).toBeUndefined();
    // The schema and the gateway talk to the port; only the composition root picks an adapter.
    expect(upstreamRule('schema/history.ts', 'upstream/v0/history.ts')).toMatch(
      /only gateway\/yoga\.ts may import an upstream adapter \(upstream\/v0\/\)/,
    );
    expect(upstreamRule('gateway/context.ts', 'upstream/v0/upstream.ts')).toMatch(/only gateway\/yoga\.ts/);
    expect(upstreamRule('gateway/yoga.ts', 'upstream/v0/upstream.ts')).toBeNull();
    expect(upstreamRule('schema/history.ts', 'upstream/port/errors.ts')).toBeNull();
    // The shared parts and the port are what adapters build on: they never import one.
    expect(upstreamRule('upstream/live/subscriber-set.ts', 'upstream/v0/events.ts')).toMatch(
      /shared parts may not import an adapter/,
    );
    expect(upstreamRule('upstream/live/shared-socket.ts', 'upstream/v0/live/event-order.ts')).toMatch(
      /shared parts may not import an adapter/,
    );
    expect(upstreamRule('upstream/v1/live/live-events.ts', 'upstream/v0/live/live-events.ts')).toMatch(
      /another adapter/,
    );
    expect(upstreamRule('upstream/port/upstream.ts', 'upstream/v0/upstream.ts')).toMatch(
      /port may not import an adapter/,
    );
    expect(upstreamRule('upstream/v1/events.ts', 'upstream/v0/events.ts')).toMatch(/another adapter/);
    // An adapter may import its own files, the shared parts and the port.
    expect(upstreamRule('upstream/v0/history.ts', 'upstream/v0/events.ts')).toBeNull();
    expect(upstreamRule('upstream/v0/history.ts', 'upstream/failures.ts')).toBeNull();
    expect(upstreamRule('upstream/v0/upstream.ts', 'upstream/port/upstream.ts')).toBeNull();
    expect(upstreamRule('upstream/v0/live/live-events.ts', 'upstream/live/live-events.ts')).toBeNull();
  });
});
