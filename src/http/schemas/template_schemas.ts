import { z } from "@hono/zod-openapi";
import {
  type Template,
  TEMPLATE_CATEGORIES,
  TEMPLATE_LANGUAGE_REGEXP,
  TEMPLATE_STATUSES,
  templateView,
} from "../../domain/templates/template.ts";
import { PageQuery } from "../openapi.ts";

export const TemplateComponentSchema = z.looseObject({
  type: z.string().openapi({
    description:
      "HEADER, BODY, FOOTER, BUTTONS (and, in synced templates, any type Meta returns: CAROUSEL, LIMITED_TIME_OFFER ...)",
  }),
  text: z.string().optional(),
}).openapi("TemplateComponent", {
  description:
    "`{ type, text }` with `{{1}}` or `{{name}}` placeholders; a synced template's components are exactly as Meta returns them",
});

export const TemplateSchema = z.object({
  id: z.uuid(),
  phoneNumberId: z.uuid().nullable().openapi({
    description: "Channel id; null for global templates",
  }),
  metaTemplateId: z.string().nullable(),
  name: z.string(),
  language: z.string(),
  category: z.enum(TEMPLATE_CATEGORIES),
  status: z.enum(TEMPLATE_STATUSES),
  components: z.array(TemplateComponentSchema),
  createdAt: z.string(),
  wabaId: z.string().nullable().openapi({
    description:
      "The WhatsApp Business Account a synced template belongs to (every channel of it can send it); null for a local one",
  }),
  source: z.enum(["meta", "local"]).openapi({
    description: "`meta`: synced from the WABA; `local`: made by hand",
  }),
  metaStatus: z.string().nullable().openapi({
    description:
      "Meta's own status (APPROVED, PAUSED, IN_APPEAL, LOCKED ...); null for a local template",
  }),
  parameterFormat: z.enum(["POSITIONAL", "NAMED"]).nullable(),
  qualityScore: z.string().nullable().openapi({
    description: "GREEN, YELLOW, RED or UNKNOWN",
  }),
  rejectedReason: z.string().nullable(),
  syncedAt: z.string().nullable().openapi({
    description: "When the template was last read from Meta",
  }),
}).openapi("Template");

export type TemplateResponse = z.infer<typeof TemplateSchema>;

export function toTemplateResponse(t: Template): TemplateResponse {
  return templateView(t);
}

const PhoneNumberId = z.uuid({ message: "must be a UUID (a channel id)" })
  .openapi({
    description:
      "A channel id: what it can send (its own templates, the global ones and its WABA's)",
  });

export const TemplateListQuery = PageQuery.extend({
  phoneNumberId: PhoneNumberId.optional(),
  status: z.enum(TEMPLATE_STATUSES).optional(),
});

// Any spelling: a name no template has (upper case, spaces, too long) is
// simply not found (404), like any other unknown name.
export const TemplateNameParam = z.object({
  name: z.string().min(1).openapi({ param: { name: "name", in: "path" } }),
});

export const TemplateByNameQuery = z.strictObject({
  language: z.string().regex(TEMPLATE_LANGUAGE_REGEXP, {
    message: 'must look like "en", "es_AR" or "en_US"',
  }).optional(),
  phoneNumberId: PhoneNumberId.optional().openapi({
    description: "A channel id: its own template wins over a global one",
  }),
});
