/**
 * The spread keep-alive (src/gateway/websocket/ws-keep-alive.ts) on stand-in sockets and fake timers: one slice
 * of the sockets per tick, each socket once per period, terminated when its previous ping went
 * unanswered, forgotten once closed; the sockets it holds, listed, with pings on or off.
 */
import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { WebSocket } from 'ws';
import { keepSocketsAlive } from '../../src/gateway/websocket/ws-keep-alive.ts';

/** What the keep-alive uses of a ws WebSocket: state, ping, terminate and its events. */
class StandInSocket extends EventEmitter {
  readonly OPEN = 1;
  readyState = 1;
  pings = 0;
  terminated = false;
  ping(): void {
    this.pings++;
  }
  terminate(): void {
    this.terminated = true;
    this.readyState = 3;
    this.emit('close');
  }
}

afterEach(() => {
  vi.useRealTimers();
});

describe('keepSocketsAlive', () => {
  it('pings one slice per tick and every socket once per period; unanswered ones are terminated', () => {
    vi.useFakeTimers();
    const keepAlive = keepSocketsAlive(1200);
    const sockets = Array.from({ length: 24 }, () => new StandInSocket());
    for (const socket of sockets) {
      keepAlive.add(socket as unknown as WebSocket);
      // What the binding's listeners report.
      socket.on('pong', () => keepAlive.answered(socket as unknown as WebSocket));
      socket.on('close', () => keepAlive.remove(socket as unknown as WebSocket));
    }

    vi.advanceTimersByTime(100);
    expect(sockets.filter((socket) => socket.pings > 0)).toHaveLength(2);
    vi.advanceTimersByTime(1100);
    expect(sockets.map((socket) => socket.pings)).toEqual(sockets.map(() => 1));

    // Half answer their ping; by the next round the others are cut.
    for (const socket of sockets.slice(0, 12)) socket.emit('pong');
    vi.advanceTimersByTime(1200);
    expect(sockets.slice(0, 12).every((socket) => !socket.terminated && socket.pings === 2)).toBe(true);
    expect(sockets.slice(12).every((socket) => socket.terminated && socket.pings === 1)).toBe(true);

    // Closed sockets are forgotten: nothing pings or terminates them again.
    vi.advanceTimersByTime(3600);
    expect(sockets.slice(12).every((socket) => socket.pings === 1)).toBe(true);
    keepAlive.stop();
  });

  it('pings nothing with a period of 0', () => {
    vi.useFakeTimers();
    const keepAlive = keepSocketsAlive(0);
    const socket = new StandInSocket();
    keepAlive.add(socket as unknown as WebSocket);
    vi.advanceTimersByTime(60_000);
    expect(socket.pings).toBe(0);
    keepAlive.stop();
  });

  it.each([1200, 0])(
    'lists the sockets added and not removed (the binding closes them at dispose), period %i',
    (periodMs) => {
      const keepAlive = keepSocketsAlive(periodMs);
      const sockets = Array.from({ length: 30 }, () => new StandInSocket());
      for (const socket of sockets) keepAlive.add(socket as unknown as WebSocket);
      for (const socket of sockets.slice(0, 10)) keepAlive.remove(socket as unknown as WebSocket);
      // Removing one twice, or one never added, changes nothing.
      keepAlive.remove(sockets[0] as unknown as WebSocket);
      keepAlive.remove(new StandInSocket() as unknown as WebSocket);
      expect(keepAlive.size).toBe(20);
      expect(new Set(keepAlive.sockets())).toEqual(new Set(sockets.slice(10)));
      for (const socket of sockets.slice(10)) keepAlive.remove(socket as unknown as WebSocket);
      expect(keepAlive.size).toBe(0);
      expect([...keepAlive.sockets()]).toEqual([]);
      keepAlive.stop();
    },
  );
});
