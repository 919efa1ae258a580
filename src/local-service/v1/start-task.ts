/**
 * A conversation start as the app server runs it: the task is saved `WORKING` and answered at once;
 * a background run then saves each status in turn, with short delays, up to `READY` (the
 * conversation exists, its agent has begun) or `ERROR` (`detail` says why). Every snapshot is
 * committed before the next step, so a crash leaves the last one on disk (start-up recovery then
 * ends it in ERROR). Listeners see each snapshot (stream-start).
 *
 * The scripted ERROR: a `selected_repository` with no stored git provider token (none for the named
 * provider, or none at all) fails at PREPARING_REPOSITORY, as a clone without credentials would; so
 * does a named `sandbox_id` the caller does not own, at WAITING_FOR_SANDBOX.
 */
import { randomUUID } from 'node:crypto';
import type pino from 'pino';
import type {
  AppConversationStartRequestRecord,
  StartTaskStatusValue,
} from '../../contract/v1/app-server.ts';
import type { ContentRecord } from '../../contract/v1/events.ts';
import type { TenantId } from '../auth.ts';
import type { V1Agent } from './agent.ts';
import { uuidHex } from './conversation-state.ts';
import { utcTimestamp } from './event-factory.ts';
import type { V1Conversation, V1Sandbox, V1StartTask } from './records.ts';
import type { Sandboxes } from './sandboxes.ts';
import type { V1Store } from './store.ts';

/** What the starter needs. */
export interface StarterDeps {
  store: V1Store;
  sandboxes: Sandboxes;
  agent: V1Agent;
  /** Whether the tenant has a stored token for the provider (any provider when null). */
  hasProviderToken: (tenant: TenantId, provider: string | null) => boolean;
  /** Delay of each step; waiting for a new sandbox takes three. */
  stepMs: number;
  logger: pino.Logger;
}

/** Thrown before the first snapshot (an unknown parent): the route answers the real server's 500. */
export class StartRefused extends Error {}

type Listener = (task: V1StartTask) => void;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Creates the starter; `close()` stops every start in progress where it stands. */
export function createStarter(deps: StarterDeps) {
  const { store, sandboxes, agent } = deps;
  let closed = false;

  function save(task: V1StartTask, patch: Partial<V1StartTask>, listener?: Listener): V1StartTask {
    const next = { ...task, ...patch, updatedAt: utcTimestamp() };
    if (closed) return next;
    store.updateTask(next);
    listener?.(next);
    return next;
  }

  async function sandboxFor(task: V1StartTask, parentSandbox: string | null): Promise<V1Sandbox | string> {
    const named = task.request.sandbox_id ?? parentSandbox;
    if (named === null) {
      await sleep(deps.stepMs * 2);
      return sandboxes.create(task.tenant);
    }
    const resumed = await sandboxes.resume(task.tenant, named);
    return resumed ?? `Sandbox not found: ${named}`;
  }

  async function progress(initial: V1StartTask, parent: V1Conversation | undefined, listener?: Listener) {
    let task = initial;
    const { tenant, request } = task;
    const step = async (status: StartTaskStatusValue, patch: Partial<V1StartTask> = {}) => {
      await sleep(deps.stepMs);
      if (closed) throw new Error('the service is closing');
      task = save(task, { status, ...patch }, listener);
    };
    try {
      await step('WAITING_FOR_SANDBOX');
      const sandbox = await sandboxFor(task, parent?.sandboxId ?? null);
      if (typeof sandbox === 'string') throw new Error(sandbox);
      task = save(task, { sandboxId: sandbox.id }, listener);
      await step('PREPARING_REPOSITORY');
      const repository = request.selected_repository ?? parent?.selectedRepository ?? null;
      const provider = request.git_provider ?? parent?.gitProvider ?? null;
      if (repository !== null && !deps.hasProviderToken(tenant, provider)) {
        throw new Error(`Unable to access repo ${repository}`);
      }
      await step('RUNNING_SETUP_SCRIPT');
      await step('SETTING_UP_GIT_HOOKS');
      await step('SETTING_UP_SKILLS');
      await step('STARTING_CONVERSATION', { agentServerUrl: sandboxes.url(sandbox) });
      const id = uuidHex(request.conversation_id ?? '') ?? randomUUID().replaceAll('-', '');
      const existing = store.getConversation(tenant, id);
      if (!existing && store.conversationIdTaken(id)) throw new Error(`Conversation ${id} already exists`);
      const now = utcTimestamp();
      const conversation: V1Conversation = {
        id,
        tenant,
        sandboxId: sandbox.id,
        // The request's title is accepted and ignored at app main: the default is stored.
        title: `Conversation ${id}`,
        selectedRepository: repository,
        selectedBranch: request.selected_branch ?? parent?.selectedBranch ?? null,
        gitProvider: provider,
        trigger: request.trigger,
        prNumber: request.pr_number,
        llmModel: request.llm_model ?? parent?.llmModel ?? null,
        parentConversationId: parent?.id ?? null,
        agentType: request.agent_type,
        public: request.public,
        executionStatus: existing?.executionStatus ?? 'idle',
        confirmationPolicy: existing?.confirmationPolicy ?? 'NeverConfirm',
        // No join: an existing id is saved again, created_at and title reset.
        createdAt: now,
        updatedAt: now,
      };
      if (closed) return;
      store.saveConversation(conversation);
      const initial: ContentRecord[] | null = request.initial_message?.content ?? null;
      if (existing) {
        if (initial !== null && initial.length > 0) agent.send(tenant, id, initial, true);
      } else {
        agent.begin(conversation, initial);
      }
      task = save(task, { status: 'READY', appConversationId: id }, listener);
    } catch (error) {
      if (closed) return;
      const text = error instanceof Error ? error.message : String(error);
      deps.logger.info({ task: task.id, reason: text }, 'start failed');
      save(task, { status: 'ERROR', detail: text }, listener);
    }
  }

  return {
    /**
     * Saves the WORKING task and starts its progression; `listener` sees every later snapshot.
     * Throws {@link StartRefused} for a parent the caller does not own (before anything is saved).
     */
    start(tenant: TenantId, request: AppConversationStartRequestRecord, listener?: Listener): V1StartTask {
      let parent: V1Conversation | undefined;
      if (request.parent_conversation_id !== null) {
        parent = store.getConversation(tenant, request.parent_conversation_id);
        if (!parent) throw new StartRefused('unknown parent conversation');
      }
      const now = utcTimestamp();
      const task: V1StartTask = {
        id: randomUUID().replaceAll('-', ''),
        tenant,
        status: 'WORKING',
        detail: null,
        appConversationId: null,
        sandboxId: null,
        agentServerUrl: null,
        request,
        createdAt: now,
        updatedAt: now,
      };
      store.insertTask(task);
      void progress(task, parent, listener);
      return task;
    },
    close(): void {
      closed = true;
    },
  };
}

/** The starter of one V1 face. */
export type Starter = ReturnType<typeof createStarter>;

/** Whether a status ends a start. */
export function isFinal(status: StartTaskStatusValue): boolean {
  return status === 'READY' || status === 'ERROR';
}
