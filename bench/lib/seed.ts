/** Conversations created in the local service before a scenario measures anything. */

/** Creates `count` conversations for `key`, ten in flight at a time (quick, without tripping anything). */
export async function seed(serviceUrl: string, key: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i += 10) {
    const batch = Array.from({ length: Math.min(10, count - i) }, async () => {
      const response = await fetch(`${serviceUrl}/api/conversations`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-session-api-key': key },
        body: '{}',
      });
      const body = (await response.json()) as { conversation_id?: string };
      if (!body.conversation_id) throw new Error(`seeding failed: ${JSON.stringify(body)}`);
      return body.conversation_id;
    });
    ids.push(...(await Promise.all(batch)));
  }
  return ids;
}
