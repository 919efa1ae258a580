/**
 * The counters of an API's live streams, one shape whichever adapter fills them: what tests, metrics
 * (`upstream_sockets`) and `Gateway.liveStats()` read. A counter an API has no use for stays 0.
 */

/** The counters the shared sockets keep in step as they go (the registry adds the socket counts). */
export interface LiveCounters {
  /** Subscribers attached to any shared socket. */
  subscribers: number;
  /** Actions sent on a shared socket and waiting for the upstream's answer. */
  pendingActions: number;
  /** Timers held (idle close, reconnect backoff, waits for an answer). */
  timers: number;
  /** Upstream connections opened since start (first connects, reconnects, extra catch-up sockets). */
  connectionsOpened: number;
  /**
   * Stored events dropped since start because they arrived after a later one had been released
   * (releasing them would break the order resuming relies on). Repeats are not counted.
   */
  lateEventsDropped: number;
}

/** Counters for tests and metrics: once the last subscriber left and idleCloseMs passed, all but the totals are 0. */
export interface LiveStats extends LiveCounters {
  /** Shared upstream sockets alive, including ones connecting or waiting to reconnect. */
  upstreamSockets: number;
  /** Of those, the ones open now (live events flowing). */
  openSockets: number;
}

/** Counters at zero, for a new set of shared sockets. */
export function newLiveCounters(): LiveCounters {
  return { subscribers: 0, pendingActions: 0, timers: 0, connectionsOpened: 0, lateEventsDropped: 0 };
}

/** The sum of two sets of live counters (the gateway holds one per adapter it built). */
export function addLiveStats(a: LiveStats, b: LiveStats | undefined): LiveStats {
  if (!b) return a;
  return {
    upstreamSockets: a.upstreamSockets + b.upstreamSockets,
    openSockets: a.openSockets + b.openSockets,
    subscribers: a.subscribers + b.subscribers,
    pendingActions: a.pendingActions + b.pendingActions,
    timers: a.timers + b.timers,
    connectionsOpened: a.connectionsOpened + b.connectionsOpened,
    lateEventsDropped: a.lateEventsDropped + b.lateEventsDropped,
  };
}
