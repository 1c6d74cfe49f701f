// The API's resources as the panel reads them.

export type Status = "queued" | "sent" | "delivered" | "read" | "failed";

export interface Contact {
  id: string;
  phoneNumber: string | null;
  name: string | null;
  username?: string | null;
  userId?: string | null;
}

export interface Conversation {
  id: string;
  contactId: string;
  phoneNumberId: string | null;
  status: "open" | "pending" | "resolved" | "closed";
  assignedTo: string | null;
  lastMessageAt: string | null;
  lastMessagePreview: string | null;
  lastMessageDirection: "inbound" | "outbound" | null;
  lastMessageStatus: Status | null;
  serviceWindowExpiresAt: string | null;
  unreadCount: number;
  createdAt: string;
  contact: Contact;
}

export interface Message {
  id: string;
  conversationId: string;
  direction: "inbound" | "outbound";
  type: string;
  content: Record<string, unknown>;
  status: Status;
  waMessageId: string | null;
  errorCode: string | null;
  errorMessage: string | null;
  mediaId: string | null;
  mediaError?: string | null;
  context: { waMessageId: string; messageId: string | null } | null;
  edits?: { previousContent: Record<string, unknown>; editedAt: string }[];
  deletedAt?: string | null;
  agentId?: string | null;
  createdAt: string;
  /** Set by the panel while its send is not answered yet. */
  pending?: "sending" | "retrying";
}

export interface TemplateComponent {
  type: string;
  format?: string;
  text?: string;
  buttons?: { type: string; text?: string; url?: string }[];
  example?: unknown;
}

export interface Template {
  id: string;
  name: string;
  language: string;
  category: string;
  status: string;
  phoneNumberId: string | null;
  components: TemplateComponent[];
}

export interface Agent {
  id: string;
  name: string;
  visibility: "all" | "assigned";
}

export interface Boot {
  agent: Agent;
  accountId: string;
  feedCursor: string;
  serverTime: string;
  /** The list's first page (no filter), read with the page. */
  list: { data: Conversation[]; cursor: string | null; hasMore: boolean };
}
