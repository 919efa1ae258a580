/**
 * GraphiQL as separate static files with content-hashed names, taken from what
 * `@graphql-yoga/render-graphiql` ships: its `graphiql` module exports the GraphiQL bundle, its CSS,
 * the three Monaco workers and the favicon as strings, which its own renderer inlines into one 9 MB
 * page that no browser can cache. Served apart, each file is cached for good by name and compressed
 * once; only a ~2 KB page is fetched (and revalidated) per visit. Nothing comes from a CDN.
 *
 * Loaded on first use (a process that never serves a browser never pays for it) and shared by every
 * gateway in the process: the files do not depend on any setting.
 */
import type { GraphiQLOptions } from 'graphql-yoga';
import { StaticBody } from './static-response.ts';

/** URL path under which the files are served. */
export const GRAPHIQL_ASSETS_PATH = '/graphiql/assets/';

/** One served file. */
interface GraphiQLAsset {
  /** `/graphiql/assets/<name>.<hash>.<ext>` */
  path: string;
  contentType: string;
  body: StaticBody;
}

/** Labels Monaco asks `MonacoEnvironment.getWorkerUrl` for, as render-graphiql's page maps them. */
type WorkerLabel = 'editorWorkerService' | 'json' | 'graphql';

/** The files and the paths the page refers to. */
export interface GraphiQLAssets {
  byPath: ReadonlyMap<string, GraphiQLAsset>;
  script: string;
  style: string;
  boot: string;
  favicon: string;
  workers: Readonly<Record<WorkerLabel, string>>;
}

/**
 * Starts GraphiQL the way render-graphiql's inline script does, from a JSON config in the page (so the
 * page has no inline script): Monaco's workers come from their own URLs instead of blob URLs, then
 * GraphiQL renders once the deferred bundle has run.
 */
const BOOT_SCRIPT = `(function () {
  'use strict';
  var config = JSON.parse(document.getElementById('graphiql-config').textContent);
  self.MonacoEnvironment = {
    globalAPI: false,
    getWorkerUrl: function (_moduleId, label) {
      return config.workers[label];
    },
  };
  document.addEventListener('DOMContentLoaded', function () {
    YogaGraphiQL.renderYogaGraphiQL(document.getElementById('root'), config.options);
  });
})();
`;

const JS = 'text/javascript; charset=utf-8';

let loading: Promise<GraphiQLAssets> | undefined;

/** The GraphiQL files; built on the first call, the same object afterwards. */
export function loadGraphiQLAssets(): Promise<GraphiQLAssets> {
  loading ??= buildAssets();
  return loading;
}

async function buildAssets(): Promise<GraphiQLAssets> {
  // Imported here, not at the top: 9 MB of string literals to evaluate only when a browser asks (the
  // build leaves the module outside dist/index.js, which would otherwise parse it at every start).
  const bundle = await import('@graphql-yoga/render-graphiql/graphiql');
  const byPath = new Map<string, GraphiQLAsset>();
  const add = (
    name: string,
    extension: string,
    contentType: string,
    bytes: Uint8Array<ArrayBuffer>,
  ): string => {
    const body = new StaticBody(bytes);
    const path = `${GRAPHIQL_ASSETS_PATH}${name}.${body.hash}.${extension}`;
    byPath.set(path, { path, contentType, body });
    return path;
  };
  const text = (source: string) => Buffer.from(source, 'utf8');
  const favicon = decodeDataUrl(bundle.favicon);
  return {
    byPath,
    script: add('graphiql', 'js', JS, text(bundle.js)),
    style: add('graphiql', 'css', 'text/css; charset=utf-8', text(bundle.css)),
    boot: add('start', 'js', JS, text(BOOT_SCRIPT)),
    favicon: add('favicon', 'ico', favicon.contentType, favicon.bytes),
    workers: {
      editorWorkerService: add('editor.worker', 'js', JS, text(bundle.editorWorkerService)),
      json: add('json.worker', 'js', JS, text(bundle.jsonWorker)),
      graphql: add('graphql.worker', 'js', JS, text(bundle.graphqlWorker)),
    },
  };
}

/** `data:<type>;base64,<data>` -> bytes and type (render-graphiql ships its favicon that way). */
function decodeDataUrl(url: string): { contentType: string; bytes: Uint8Array<ArrayBuffer> } {
  const match = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (!match?.[1] || match[2] === undefined)
    throw new Error('render-graphiql favicon is not a base64 data URL');
  return { contentType: match[1], bytes: Buffer.from(match[2], 'base64') };
}

/**
 * The page: links to the hashed files, the options as JSON (the same object Yoga's own renderer
 * passes to `renderYogaGraphiQL`). `<` is escaped in the JSON so no option value can close the
 * script element.
 */
export function renderGraphiQLPage(assets: GraphiQLAssets, options: GraphiQLOptions): string {
  const config = JSON.stringify({ workers: assets.workers, options }).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>${escapeHtml(options.title ?? 'GraphiQL')}</title>
    <link rel="icon" href="${assets.favicon}" />
    <link rel="stylesheet" href="${assets.style}" />
    <script id="graphiql-config" type="application/json">${config}</script>
    <script defer src="${assets.boot}"></script>
    <script defer src="${assets.script}"></script>
  </head>
  <body id="body" class="no-focus-outline">
    <noscript>You need to enable JavaScript to run this app.</noscript>
    <div id="root"></div>
  </body>
</html>
`;
}

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}
