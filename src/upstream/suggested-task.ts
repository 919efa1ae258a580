/**
 * A suggested task as both APIs' create routes take it: V0's `suggested_task` and the V1 start
 * request's (app servers since mid-2026; older ones ignore the field and keep only the repository and
 * trigger the V1 adapter sends beside it). The upstream builds the task's prompt from it.
 */
import type { SuggestedTaskRecord } from '../contract/common.ts';
import type { CreateConversationInput } from './port/conversation.ts';

/**
 * The wire object of `task`. The record type lists every field as present; absent ones are left out
 * so the upstream's own validation names them (a 422 the client can act on) instead of us guessing
 * defaults.
 */
export function suggestedTaskRecord(
  task: NonNullable<CreateConversationInput['suggestedTask']>,
): SuggestedTaskRecord {
  return {
    git_provider: task.gitProvider,
    task_type: task.taskType,
    ...(task.repo != null ? { repo: task.repo } : {}),
    ...(task.issueNumber != null ? { issue_number: task.issueNumber } : {}),
    ...(task.title != null ? { title: task.title } : {}),
  } as SuggestedTaskRecord;
}
