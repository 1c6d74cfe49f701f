/** The webhook fields the server applies (management_service.ts) and `channels connect` subscribes the app to. */

/** Meta's management fields applied here (reference meta-management.md §2). */
export const MANAGEMENT_FIELDS = [
  "message_template_status_update",
  "message_template_quality_update",
  "message_template_components_update",
  "template_category_update",
  "phone_number_quality_update",
  "phone_number_name_update",
  "account_update",
  "account_alerts",
] as const;

export type ManagementField = (typeof MANAGEMENT_FIELDS)[number];

/** Every field the app should be subscribed to: messages, then the management ones. */
export const WEBHOOK_FIELDS: readonly string[] = [
  "messages",
  ...MANAGEMENT_FIELDS,
];
