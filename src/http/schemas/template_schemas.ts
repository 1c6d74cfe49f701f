import { z } from "@hono/zod-openapi";
import {
  COMPONENT_TYPES,
  type Template,
  TEMPLATE_CATEGORIES,
  TEMPLATE_LANGUAGE_REGEXP,
  TEMPLATE_STATUSES,
  templateView,
} from "../../domain/templates/template.ts";
import { PageQuery } from "../openapi.ts";

export const TemplateComponentSchema = z.looseObject({
  type: z.enum(COMPONENT_TYPES),
  text: z.string().optional(),
}).openapi("TemplateComponent", {
  description:
    "`{ type, text }` with `{{1}}`, `{{2}}` placeholders; other upstream keys are kept",
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
}).openapi("Template");

export type TemplateResponse = z.infer<typeof TemplateSchema>;

export function toTemplateResponse(t: Template): TemplateResponse {
  return templateView(t);
}

const PhoneNumberId = z.uuid({ message: "must be a UUID (a channel id)" })
  .openapi({ description: "A channel id: its templates plus global ones" });

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
