import { type Message, toMessageView } from "./message.ts";

/**
 * The Message as webhook payloads carry it: the GET shape, except that
 * content is the stored form (text as `{ body }`, as the spec shows).
 */
export function messagePayload(message: Message): Record<string, unknown> {
  return { ...toMessageView(message), content: message.content };
}

export function statusChangedPayload(
  message: Message,
  previousStatus: string,
): Record<string, unknown> {
  return {
    ...messagePayload(message),
    clientRef: message.clientRef,
    previousStatus,
    newStatus: message.status,
  };
}
