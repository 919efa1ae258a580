/**
 * The Conversation fields only the V1 API fills (execution and sandbox status, LLM model, metrics,
 * parent and sub-conversations) are null on V0, through the real gateway against the real local
 * service; selecting them costs no upstream read beyond the conversation's own.
 */
import { describe, expect, it } from 'vitest';
import { serviceAndGatewayForTest } from '../helpers/gateway.ts';
import { createConversation } from '../helpers/local-service.ts';
import { ConversationV1FieldsDocument } from './documents.ts';

const KEY = 'v1-fields-key';

describe('V1-only Conversation fields on V0', () => {
  it('are all null, and the references read nothing more', async () => {
    const { service, gateway } = await serviceAndGatewayForTest({ service: { sessionApiKeys: [KEY] } });
    const conversationId = await createConversation(service.url, {}, KEY);
    const reads = gateway.countCalls('GET', `/api/conversations/${conversationId}`);
    const { status, body } = await gateway.execute(
      ConversationV1FieldsDocument,
      { id: conversationId },
      { key: KEY },
    );
    expect(status).toBe(200);
    expect(body).toEqual({
      data: {
        conversation: {
          conversationId,
          executionStatus: null,
          executionStatusRaw: null,
          sandboxStatus: null,
          sandboxStatusRaw: null,
          llmModel: null,
          metrics: null,
          parentConversationId: null,
          parentConversation: null,
          subConversationIds: null,
          subConversations: null,
        },
      },
    });
    expect(gateway.countCalls('GET', `/api/conversations/${conversationId}`) - reads).toBe(1);
  });
});
