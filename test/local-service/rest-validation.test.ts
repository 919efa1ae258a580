import { describe, expect, it } from 'vitest';
import { localServiceForTest, rest } from '../helpers/local-service.ts';

const PROVIDERS = "'github', 'gitlab', 'bitbucket' or 'enterprise_sso'";

async function create(url: string, body: unknown) {
  return rest<unknown>(url, '/api/conversations', { method: 'POST', body });
}

async function conversationCount(url: string): Promise<number> {
  const list = await rest<{ results: unknown[] }>(url, '/api/conversations?limit=100');
  return list.body.results.length;
}

/** A FastAPI 422 answer whose `detail` holds `issues` (matched as a subset, like the rest). */
const unprocessable = (...issues: Array<Record<string, unknown>>) => ({
  status: 422,
  body: { detail: issues },
});

describe('FastAPI-shaped 422 bodies', () => {
  it('extra_forbidden for unknown keys', async () => {
    const service = await localServiceForTest();
    const res = await create(service.url, { foo: 1 });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      detail: [
        { type: 'extra_forbidden', loc: ['body', 'foo'], msg: 'Extra inputs are not permitted', input: 1 },
      ],
    });
  });

  it('string_type, enum and list item errors together, in one answer', async () => {
    const service = await localServiceForTest();
    const res = await create(service.url, {
      repository: 5,
      git_provider: 'hosting_a',
      image_urls: ['ok', 3],
    });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      detail: [
        { type: 'string_type', loc: ['body', 'repository'], msg: 'Input should be a valid string', input: 5 },
        {
          type: 'enum',
          loc: ['body', 'git_provider'],
          msg: `Input should be ${PROVIDERS}`,
          input: 'hosting_a',
          ctx: { expected: PROVIDERS },
        },
        {
          type: 'string_type',
          loc: ['body', 'image_urls', 1],
          msg: 'Input should be a valid string',
          input: 3,
        },
      ],
    });
    expect(await conversationCount(service.url)).toBe(0);
  });

  it('missing and int_parsing inside suggested_task', async () => {
    const service = await localServiceForTest();
    const task = { git_provider: 'github', task_type: 'OPEN_PR', repo: 'a/b', issue_number: 'seven' };
    const res = await create(service.url, { suggested_task: task });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      detail: [
        {
          type: 'int_parsing',
          loc: ['body', 'suggested_task', 'issue_number'],
          msg: 'Input should be a valid integer, unable to parse string as an integer',
          input: 'seven',
        },
        { type: 'missing', loc: ['body', 'suggested_task', 'title'], msg: 'Field required', input: task },
      ],
    });
  });

  it('mcp_config forbids extra keys and masks secrets in echoed inputs', async () => {
    const service = await localServiceForTest();
    const res = await create(service.url, {
      mcp_config: {
        sse_servers: [{ api_key: 'sk-very-secret' }],
        stdio_servers: [{ name: 'x', command: 'y', env: { A: 'env-secret' }, extra: 1 }],
        other: true,
      },
    });
    expect(res.status).toBe(422);
    const text = JSON.stringify(res.body);
    expect(text).not.toContain('sk-very-secret');
    expect(text).not.toContain('env-secret');
    const detail = (res.body as { detail: Array<{ type: string; loc: unknown[] }> }).detail;
    expect(detail.map((d) => [d.type, d.loc])).toEqual([
      ['missing', ['body', 'mcp_config', 'sse_servers', 0, 'url']],
      ['extra_forbidden', ['body', 'mcp_config', 'stdio_servers', 0, 'extra']],
      ['extra_forbidden', ['body', 'mcp_config', 'other']],
    ]);
  });

  it('non-object bodies, missing bodies and invalid JSON', async () => {
    const service = await localServiceForTest();
    const list = await create(service.url, '[1,2]');
    expect(list).toMatchObject(
      unprocessable({
        type: 'model_attributes_type',
        loc: ['body'],
        msg: 'Input should be a valid dictionary or object to extract fields from',
        input: [1, 2],
      }),
    );
    const empty = await rest(service.url, '/api/conversations', { method: 'POST' });
    expect(empty).toMatchObject(
      unprocessable({ type: 'missing', loc: ['body'], msg: 'Field required', input: null }),
    );
    const broken = await create(service.url, '{"repository": ');
    expect(broken.status).toBe(422);
    expect(broken.body).toEqual({
      detail: [
        {
          type: 'json_invalid',
          loc: ['body', expect.any(Number)],
          msg: 'JSON decode error',
          input: {},
          ctx: { error: 'Expecting value' },
        },
      ],
    });
    expect(await conversationCount(service.url)).toBe(0);
  });

  it('caller-chosen conversation ids must be 32 lowercase hex', async () => {
    const service = await localServiceForTest();
    const res = await create(service.url, { conversation_id: 'ABC' });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ detail: [{ loc: ['body', 'conversation_id'], input: 'ABC' }] });
  });

  it('search query: limit bounds, int parsing, trigger enum and malformed page_id', async () => {
    const service = await localServiceForTest();
    const zero = await rest(service.url, '/api/conversations?limit=0');
    expect(zero).toMatchObject(
      unprocessable({ type: 'greater_than_equal', loc: ['query', 'limit'], input: '0' }),
    );
    const big = await rest(service.url, '/api/conversations?limit=101');
    expect(big).toMatchObject(
      unprocessable({
        type: 'less_than_equal',
        loc: ['query', 'limit'],
        msg: 'Input should be less than or equal to 100',
      }),
    );
    const text = await rest(service.url, '/api/conversations?limit=ten');
    expect(text).toMatchObject(unprocessable({ type: 'int_parsing', loc: ['query', 'limit'] }));
    const trigger = await rest(service.url, '/api/conversations?conversation_trigger=cron');
    expect(trigger).toMatchObject(
      unprocessable({ type: 'enum', loc: ['query', 'conversation_trigger'], input: 'cron' }),
    );
    for (const pageId of ['%%%', 'bm90LWEtbnVtYmVy', 'MjA', '-1']) {
      const bad = await rest(service.url, `/api/conversations?page_id=${encodeURIComponent(pageId)}`);
      expect(bad, pageId).toMatchObject(unprocessable({ loc: ['query', 'page_id'] }));
    }
  });
});

describe('transport errors', () => {
  it('413 for oversize bodies, and the service keeps serving', async () => {
    const service = await localServiceForTest({ maxBodyBytes: 1024 });
    const huge = await create(service.url, { initial_user_msg: 'x'.repeat(5000) });
    expect(huge).toMatchObject({ status: 413, body: { detail: 'Request body too large' } });
    expect(await conversationCount(service.url)).toBe(0);
    expect((await create(service.url, {})).status).toBe(200);
  });

  it('404 for unknown routes, 405 for wrong methods, health outside /api', async () => {
    const service = await localServiceForTest();
    expect(await rest(service.url, '/api/nothing-here')).toMatchObject({
      status: 404,
      body: { detail: 'Not Found' },
    });
    expect(await rest(service.url, '/nope')).toMatchObject({ status: 404, body: { detail: 'Not Found' } });
    const wrong = await rest(service.url, '/api/conversations', { method: 'DELETE' });
    expect(wrong).toMatchObject({ status: 405, body: { detail: 'Method Not Allowed' } });
    expect(wrong.headers.get('allow')).toBe('POST, GET');
    expect(await rest(service.url, '/alive')).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(await rest(service.url, '/health')).toMatchObject({ status: 200, body: 'OK' });
  });
});
