/**
 * V1's sandbox links: the sandbox's `exposed_urls` (`GET /api/v1/sandboxes?id=`, the app server's
 * `SandboxInfo`; OpenHands `openhands/app_server/sandbox/docker_sandbox_service.py`): `VSCODE` (its
 * `tkn` is the sandbox key, so the URL is a full sandbox credential) and the app ports `WORKER_1`,
 * `WORKER_2`. They are null unless the sandbox runs, which the V1 web client reads too
 * (`frontend/src/hooks/query/use-unified-vscode-url.ts`); the agent server's `/api/vscode/url` would
 * answer `localhost` by default.
 */
import type { SandboxInfoRecord } from '../../contract/v1/app-server.ts';
import { unexpectedAnswer } from '../failures.ts';
import { WorkspaceNotRunningError } from '../port/errors.ts';
import type { WorkspaceLinks } from '../port/workspace.ts';
import { call } from './scope.ts';
import type { Routes } from './workspace-target.ts';

const SANDBOXES = '/api/v1/sandboxes';

/** The links of the conversation's sandbox, read from the app server with the caller's credential. */
export const links: Routes['links'] = async (open) => {
  const target = await open();
  if (target.sandboxId === null) throw new WorkspaceNotRunningError('STOPPED');
  const body = await call<unknown>(target.app, {
    method: 'GET',
    path: `${SANDBOXES}?${new URLSearchParams({ id: target.sandboxId })}`,
    route: `GET ${SANDBOXES}`,
  });
  if (!Array.isArray(body)) throw unexpectedAnswer();
  const sandbox = body[0] as Partial<SandboxInfoRecord> | null | undefined;
  if (sandbox == null) throw new WorkspaceNotRunningError('STOPPED');
  if (sandbox.status === 'PAUSED') throw new WorkspaceNotRunningError('PAUSED');
  if (sandbox.status === 'STARTING') throw new WorkspaceNotRunningError('STARTING');
  if (sandbox.status !== 'RUNNING') throw new WorkspaceNotRunningError('STOPPED');
  const links: WorkspaceLinks = { vscodeUrl: null, appPorts: [] };
  for (const exposed of Array.isArray(sandbox.exposed_urls) ? sandbox.exposed_urls : []) {
    const { name, url, port } = (exposed ?? {}) as Partial<
      NonNullable<SandboxInfoRecord['exposed_urls']>[number]
    >;
    if (typeof name !== 'string' || typeof url !== 'string' || !/^https?:\/\//i.test(url)) continue;
    if (name === 'VSCODE') links.vscodeUrl = url;
    else if (name.startsWith('WORKER_')) {
      links.appPorts.push({ name, url, port: Number.isInteger(port) ? (port as number) : null });
    }
  }
  links.appPorts.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return links;
};
