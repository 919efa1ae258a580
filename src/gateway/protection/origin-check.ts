/**
 * Which browser pages may drive the gateway over the transports that CORS does not protect.
 *
 * CORS stops a foreign page from *reading* an answer and makes JSON POSTs preflight first; CSRF
 * prevention (limits.ts) refuses the simple POSTs that need no preflight. Two transports remain that a
 * page on any site can open without a preflight and that act with the gateway's default key (or an
 * upstream that needs none): the WebSocket upgrade (WebSockets are not covered by CORS at all: the page
 * then reads conversations and runs `sendMessage`) and SSE (`EventSource`, or `fetch` with `Accept:
 * text/event-stream`). Those must carry no `Origin` (non-browser clients), the gateway's own origin
 * (GraphiQL served by the gateway) or one of `CORS_ORIGINS`. GET never runs mutations (Yoga answers 405).
 *
 * DNS rebinding defeats an origin check (the attacker's name points at the gateway, so the page is
 * "same-origin"); `ALLOWED_HOSTS` closes that by refusing `/graphql` requests whose `Host` is not one of
 * the gateway's names. It is on by default whenever the gateway listens on a loopback address (the
 * quick start: the embedded service needs no key, so whoever reaches the gateway drives it) or a default
 * key is configured (then the gateway acts for whoever reaches it), with loopback names and the listen
 * host allowed.
 */
import { type ErrorCode, refusalStatus } from '../../errors.ts';

/** A refusal: HTTP status (the catalogue's), stable code and message, answered before any operation runs. */
export interface OriginRefusal {
  status: number;
  code: typeof ORIGIN_REJECTED | typeof HOST_REJECTED;
  message: string;
}

/** Code of a browser request from a page whose origin is not allowed. */
const ORIGIN_REJECTED = 'ORIGIN_REJECTED' satisfies ErrorCode;
/** Code of a request whose `Host` is not one of `ALLOWED_HOSTS` (DNS rebinding). */
const HOST_REJECTED = 'HOST_REJECTED' satisfies ErrorCode;

/** Host names always allowed when the Host check is on. */
const LOOPBACK_HOSTS: readonly string[] = ['localhost', '127.0.0.1', '::1'];

/** Settings of {@link OriginPolicy}. */
export interface OriginPolicyOptions {
  /** `CORS_ORIGINS`: exact origins (`scheme://host[:port]`), or `*` for any. @default [] */
  corsOrigins?: readonly string[];
  /**
   * `ALLOWED_HOSTS`: host names (no port) accepted in `Host` on `/graphql`; `['*']` or null accepts any.
   * @default null (no Host check)
   */
  allowedHosts?: readonly string[] | null;
}

/**
 * The default of `ALLOWED_HOSTS`: loopback names plus the listen host (unless it is a wildcard address,
 * which names no host) when the gateway listens on a loopback address or a default key is configured;
 * otherwise off (null). Listening on loopback is on even without a key: a page that rebinds its name to
 * 127.0.0.1 would otherwise be same-origin with a gateway whose upstream needs no key (`npm start`).
 */
export function defaultAllowedHosts(defaultKeyConfigured: boolean, listenHost: string): string[] | null {
  const listen = normalizeHostname(listenHost);
  if (!defaultKeyConfigured && !isLoopbackAddress(listen)) return null;
  const hosts = [...LOOPBACK_HOSTS];
  if (listen !== '0.0.0.0' && listen !== '::' && !hosts.includes(listen)) hosts.push(listen);
  return hosts;
}

/** True for `localhost`, 127.0.0.0/8 and ::1 (also IPv4-mapped), in the form {@link normalizeHostname} gives. */
function isLoopbackAddress(hostname: string): boolean {
  if (hostname === 'localhost' || hostname === '::1') return true;
  const ipv4 = hostname.replace(/^::ffff:/, '');
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(ipv4);
}

/** Lower case, IPv6 brackets and a trailing dot removed: the form hosts are compared in. */
function normalizeHostname(hostname: string): string {
  return hostname
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');
}

/** A Host header read: `host[:port]` as a URL prints it, and the hostname in compared form. */
type ParsedHost = Readonly<{ host: string; hostname: string }>;

/**
 * Host header values already read, by their text: a gateway sees a handful (its names, with and
 * without port), and a URL parse per request was 0.5-1% of a list's CPU. Bounded: past
 * {@link PARSED_HOSTS_MAX} distinct values (a client sending made-up Hosts) the oldest is forgotten.
 */
const parsedHosts = new Map<string, ParsedHost | null>();
const PARSED_HOSTS_MAX = 256;

/** {@link parseHost}, remembered per distinct header value. */
function parseHostCached(host: string): ParsedHost | null {
  const known = parsedHosts.get(host);
  if (known !== undefined) return known;
  const parsed = parseHost(host);
  const entry = parsed === null ? null : Object.freeze(parsed);
  if (parsedHosts.size >= PARSED_HOSTS_MAX) parsedHosts.delete(parsedHosts.keys().next().value as string);
  parsedHosts.set(host, entry);
  return entry;
}

/** `host[:port]` of a Host header as a URL would print it (default port dropped), or null. */
function parseHost(host: string): { host: string; hostname: string } | null {
  try {
    const url = new URL(`http://${host.trim()}`);
    if (url.username || url.password || url.pathname !== '/' || url.search || url.hash) return null;
    return { host: url.host, hostname: normalizeHostname(url.hostname) };
  } catch {
    return null;
  }
}

/** Decides whether a browser request may open a stream or socket. */
export class OriginPolicy {
  readonly #anyOrigin: boolean;
  readonly #origins: ReadonlySet<string>;
  readonly #hosts: ReadonlySet<string> | null;

  constructor(options: OriginPolicyOptions = {}) {
    const origins = options.corsOrigins ?? [];
    this.#anyOrigin = origins.includes('*');
    this.#origins = new Set(origins.filter((origin) => origin !== '*').map((origin) => origin.toLowerCase()));
    const hosts = options.allowedHosts ?? null;
    this.#hosts = hosts === null || hosts.includes('*') ? null : new Set(hosts.map(normalizeHostname));
  }

  /** True when `Host` is checked at all. */
  get checksHost(): boolean {
    return this.#hosts !== null;
  }

  /**
   * The Host check (DNS rebinding), for every `/graphql` request and upgrade. A missing Host (HTTP/1.0)
   * is refused while the check is on: a browser always sends one.
   */
  checkHost(host: string | undefined): OriginRefusal | null {
    if (this.#hosts === null) return null;
    const parsed = host === undefined ? null : parseHostCached(host);
    if (parsed && this.#hosts.has(parsed.hostname)) return null;
    return {
      status: refusalStatus(HOST_REJECTED),
      code: HOST_REJECTED,
      message: 'This Host is not one of the ALLOWED_HOSTS of the gateway.',
    };
  }

  /**
   * The Origin check for a transport a browser opens cross-site without a preflight (WebSocket
   * upgrade, SSE). `host` is the request's Host: a page served by the gateway itself (GraphiQL) has
   * the same host and port as the request it makes. The scheme is not compared: behind a TLS proxy
   * the gateway cannot know its public scheme, and a page with the gateway's host and port is the
   * gateway's own page whichever scheme served it.
   */
  checkOrigin(origin: string | undefined, host: string | undefined): OriginRefusal | null {
    if (origin === undefined || this.#anyOrigin) return null;
    const normalized = origin.trim().toLowerCase();
    if (this.#origins.has(normalized)) return null;
    if (host !== undefined && normalized !== 'null') {
      const own = parseHostCached(host);
      let originHost: string | null = null;
      try {
        const url = new URL(normalized);
        if (url.protocol === 'http:' || url.protocol === 'https:') originHost = url.host;
      } catch {
        originHost = null;
      }
      if (own && originHost !== null && originHost === own.host) return null;
    }
    return {
      status: refusalStatus(ORIGIN_REJECTED),
      code: ORIGIN_REJECTED,
      message:
        'Pages on this origin may not open WebSocket or SSE connections to the gateway (allow it with CORS_ORIGINS).',
    };
  }

  /** Both checks for a request's headers: Host first, then Origin. */
  check(headers: { host?: string | undefined; origin?: string | undefined }): OriginRefusal | null {
    return this.checkHost(headers.host) ?? this.checkOrigin(headers.origin, headers.host);
  }
}
