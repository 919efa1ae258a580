/**
 * A floor measures the least work for the gateway's answer only while it answers the gateway's bytes:
 * the check the bench runs before it measures a floor (list and history floors, the engine floor).
 */
import type { HttpTarget } from './http-load.ts';

/** Throws unless `floor` answers `gateway`'s request with the gateway's bytes, naming the first difference. */
export async function sameBytes(gateway: HttpTarget, floor: HttpTarget, what: string): Promise<void> {
  const answer = async (url: string) => {
    const response = await fetch(url, { method: 'POST', headers: gateway.headers, body: gateway.body });
    return response.text();
  };
  const [fromGateway, fromFloor] = await Promise.all([answer(gateway.url), answer(floor.url)]);
  if (fromGateway === fromFloor) return;
  let at = 0;
  while (fromGateway[at] === fromFloor[at]) at++;
  const around = (text: string) => JSON.stringify(text.slice(Math.max(0, at - 80), at + 80));
  throw new Error(
    `the ${what}'s answer differs from the gateway's at byte ${at}:\n` +
      `  gateway: ${around(fromGateway)}\n  floor:   ${around(fromFloor)}`,
  );
}

/**
 * {@link sameBytes}, asked again for up to 15 s while the answers differ: freshly seeded V0
 * conversations change status for a few seconds after they start.
 */
export async function settledSameBytes(gateway: HttpTarget, floor: HttpTarget, what: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await sameBytes(gateway, floor, what);
    } catch (error) {
      if (attempt >= 30) throw error;
      await new Promise((done) => setTimeout(done, 500));
    }
  }
}
