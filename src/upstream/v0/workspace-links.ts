/**
 * V0's sandbox links (OpenHands 0.53 `openhands/server/routes/conversation.py`): `GET .../vscode-url`
 * (`{"vscode_url"}`, null when VS Code is off; its `tkn` opens the sandbox's VS Code) and
 * `GET .../web-hosts` (`{"hosts": {"<url>": <port>}}`, an object). 0.53 names no app port, so each is
 * named `PORT_<port>`.
 */
import type { VscodeUrlRecord, WebHostsRecord } from '../../contract/v0/workspace.ts';
import { unexpectedAnswer } from '../failures.ts';
import type { WorkspaceLinks } from '../port/workspace.ts';
import { type Routes, v0Get } from './workspace-target.ts';

/** Both links routes, asked together. */
export const links: Routes['links'] = async (open) => {
  const target = await open();
  const [vscode, hosts] = await Promise.all([
    v0Get<Partial<VscodeUrlRecord> | null>(target, '/vscode-url', null),
    v0Get<Partial<WebHostsRecord> | null>(target, '/web-hosts', null),
  ]);
  if (typeof vscode !== 'object' || vscode === null || typeof hosts !== 'object' || hosts === null) {
    throw unexpectedAnswer();
  }
  const appPorts: WorkspaceLinks['appPorts'] = [];
  if (typeof hosts.hosts === 'object' && hosts.hosts !== null) {
    for (const [url, port] of Object.entries(hosts.hosts)) {
      if (!/^https?:\/\//i.test(url)) continue;
      const number = Number.isInteger(port) ? port : null;
      appPorts.push({ name: number === null ? 'PORT' : `PORT_${number}`, url, port: number });
    }
  }
  appPorts.sort((a, b) => (a.port ?? 0) - (b.port ?? 0));
  return {
    vscodeUrl: typeof vscode.vscode_url === 'string' && vscode.vscode_url !== '' ? vscode.vscode_url : null,
    appPorts,
  };
};
