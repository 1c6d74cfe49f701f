import { z } from "@hono/zod-openapi";
import {
  type Contact,
  contactView,
  MAX_CUSTOM_FIELD_KEY_LENGTH,
  MAX_CUSTOM_FIELD_VALUE_LENGTH,
  MAX_CUSTOM_FIELDS,
  MAX_EMAIL_LENGTH,
  MAX_NAME_LENGTH,
  MAX_TAG_LENGTH,
  MAX_TAGS,
} from "../../domain/contacts/contact.ts";
import { checkJsonBounds, JSON_BOUNDS_NOTE } from "../../domain/json_bounds.ts";
import { PageQuery } from "../openapi.ts";

const CustomFieldValue = z.union([
  z.string().max(MAX_CUSTOM_FIELD_VALUE_LENGTH),
  z.number(),
  z.boolean(),
  z.null(),
]);

export const ContactSchema = z.object({
  id: z.uuid(),
  phoneNumber: z.string().nullable().openapi({
    description:
      "E.164; null for a customer who uses a WhatsApp username and withholds the number",
  }),
  userId: z.string().nullable().openapi({
    description:
      "Business-scoped user id (BSUID) as WhatsApp sent it, e.g. US.13491208655302741918; null when unknown",
  }),
  username: z.string().nullable().openapi({
    description:
      "WhatsApp username when the customer has one (not an identity: it may change)",
  }),
  name: z.string().nullable(),
  email: z.string().nullable(),
  tags: z.array(z.string()),
  customFields: z.record(z.string(), CustomFieldValue),
  optedIn: z.boolean(),
  lastMessageAt: z.string().nullable(),
  createdAt: z.string(),
}).openapi("Contact");

export type ContactResponse = z.infer<typeof ContactSchema>;

export function toContactResponse(c: Contact): ContactResponse {
  return contactView(c);
}

export const ContactListQuery = PageQuery.extend({
  search: z.string().trim().max(256).optional().openapi({
    description:
      "Case-insensitive substring of the name, phone number, e-mail or username, or a whole BSUID; empty means no filter",
  }),
  tag: z.string().trim().max(MAX_TAG_LENGTH).optional().openapi({
    description: "Only contacts with exactly this tag; empty means no filter",
  }),
});

const PhoneNumber = z.string({
  error: (issue) =>
    issue.input === undefined ? "is required" : "must be a string",
}).min(1).max(32).openapi({
  description: "With country code; the leading + is optional",
  example: "+5491122334455",
});
const Name = z.string().trim().min(1).max(MAX_NAME_LENGTH);
const Email = z.email({ message: "must be an e-mail address" }).max(
  MAX_EMAIL_LENGTH,
);
const Tags = z.array(z.string().trim().min(1).max(MAX_TAG_LENGTH)).max(
  MAX_TAGS,
).openapi({ description: "Trimmed and deduplicated" });

function customFields(description: string) {
  return z.record(
    z.string().min(1).max(MAX_CUSTOM_FIELD_KEY_LENGTH),
    CustomFieldValue,
  ).refine((o) => Object.keys(o).length <= MAX_CUSTOM_FIELDS, {
    message: `must have at most ${MAX_CUSTOM_FIELDS} keys`,
  }).superRefine(checkJsonBounds).openapi({
    description: `${description}. ${JSON_BOUNDS_NOTE}`,
  });
}

export const CreateContactBody = z.strictObject({
  phoneNumber: PhoneNumber,
  name: Name.optional(),
  email: Email.optional(),
  tags: Tags.optional(),
  customFields: customFields("String, number, boolean or null values")
    .optional(),
}).openapi("CreateContact");

export const UpdateContactBody = z.strictObject({
  phoneNumber: PhoneNumber.optional(),
  name: Name.nullable().optional().openapi({ description: "null clears it" }),
  email: Email.nullable().optional().openapi({
    description: "null clears it",
  }),
  tags: Tags.optional().openapi({ description: "Replaces every tag" }),
  customFields: customFields(
    "Merged into the existing fields; a key set to null is removed",
  ).optional(),
  optedIn: z.boolean().optional(),
}).refine((o) => Object.values(o).some((v) => v !== undefined), {
  message: "send at least one field to change",
}).openapi("UpdateContact");
