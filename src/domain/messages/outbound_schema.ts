import { z } from "zod";
import { isUuid } from "../../ids.ts";
import { freeJsonObject } from "../json_bounds.ts";
import { isOneEmoji } from "./emoji.ts";

/** Types POST /messages accepts (the spec's seven plus reaction, DESIGN §3). */
export const SEND_TYPES = [
  "text",
  "image",
  "video",
  "audio",
  "document",
  "template",
  "interactive",
  "reaction",
] as const;
export type SendType = (typeof SEND_TYPES)[number];

const mediaRef = {
  link: z.url({ protocol: /^https?$/, message: "must be an http(s) URL" })
    .max(2048).optional(),
  id: z.string().min(1).max(128).optional(),
};

function exactlyOneSource(v: { link?: string; id?: string }): boolean {
  return (v.link === undefined) !== (v.id === undefined);
}
const ONE_SOURCE = { message: 'give exactly one of "link" or "id"' };

export const TextContent = z.strictObject({
  body: z.string().min(1).max(4096),
  preview_url: z.boolean().optional(),
});
export const ImageContent = z.strictObject({
  ...mediaRef,
  caption: z.string().max(1024).optional(),
}).refine(exactlyOneSource, ONE_SOURCE);
export const VideoContent = ImageContent;
export const AudioContent = z.strictObject({ ...mediaRef }).refine(
  exactlyOneSource,
  ONE_SOURCE,
);
export const DocumentContent = z.strictObject({
  ...mediaRef,
  caption: z.string().max(1024).optional(),
  filename: z.string().min(1).max(240).optional(),
}).refine(exactlyOneSource, ONE_SOURCE);

const mediaObject = z.strictObject({ ...mediaRef }).refine(
  exactlyOneSource,
  ONE_SOURCE,
);

// Template send parameters as Meta takes them (meta-graph-api.md §1.2,
// meta-management.md §5.1); which one a component takes is checked against
// the template itself (domain/templates/template_params.ts).
/** Meta's named parameter (`{{first_name}}`): lowercase letters, digits, underscores. */
const parameterName = z.string().regex(/^[a-z0-9_]{1,64}$/, {
  message:
    "must be the placeholder's name: lowercase letters, digits and underscores",
}).optional();
const documentObject = z.strictObject({
  ...mediaRef,
  filename: z.string().min(1).max(240).optional(),
}).refine(exactlyOneSource, ONE_SOURCE);

const TemplateParameter = z.discriminatedUnion("type", [
  z.strictObject({
    type: z.literal("text"),
    text: z.string().min(1).max(1024),
    parameter_name: parameterName,
  }),
  z.strictObject({
    type: z.literal("currency"),
    currency: z.strictObject({
      fallback_value: z.string().min(1).max(256),
      code: z.string().regex(/^[A-Z]{3}$/, {
        message: 'must be an ISO 4217 code like "USD"',
      }),
      amount_1000: z.number().int(),
    }),
    parameter_name: parameterName,
  }),
  z.strictObject({
    type: z.literal("date_time"),
    // Cloud API always shows fallback_value; the other fields are the
    // localizable ones of Meta's own examples, taken and passed on.
    date_time: z.strictObject({
      fallback_value: z.string().min(1).max(256),
      calendar: z.enum(["GREGORIAN", "SOLAR_HIJRI"]).optional(),
      year: z.number().int().optional(),
      month: z.number().int().min(1).max(12).optional(),
      day_of_month: z.number().int().min(1).max(31).optional(),
      day_of_week: z.number().int().min(1).max(7).optional(),
      hour: z.number().int().min(0).max(23).optional(),
      minute: z.number().int().min(0).max(59).optional(),
    }),
    parameter_name: parameterName,
  }),
  z.strictObject({ type: z.literal("image"), image: mediaObject }),
  z.strictObject({ type: z.literal("video"), video: mediaObject }),
  z.strictObject({ type: z.literal("document"), document: documentObject }),
  z.strictObject({
    type: z.literal("location"),
    location: z.strictObject({
      latitude: z.number().min(-90).max(90),
      longitude: z.number().min(-180).max(180),
      name: z.string().max(1024).optional(),
      address: z.string().max(1024).optional(),
    }),
  }),
  // A PRODUCT header (single-product templates): passed through.
  z.strictObject({
    type: z.literal("product"),
    product: z.strictObject({
      product_retailer_id: z.string().min(1).max(100),
      catalog_id: z.string().min(1).max(100),
    }),
  }),
  z.strictObject({
    type: z.literal("payload"),
    payload: z.string().min(1).max(1024),
  }),
  z.strictObject({
    type: z.literal("coupon_code"),
    coupon_code: z.string().min(1).max(15),
  }),
  z.strictObject({
    type: z.literal("action"),
    action: z.strictObject({
      // flow buttons
      flow_token: z.string().max(1024).optional(),
      flow_action_data: freeJsonObject().optional(),
      // catalog and multi-product (mpm) buttons
      thumbnail_product_retailer_id: z.string().min(1).max(100).optional(),
      sections: z.array(freeJsonObject()).min(1).max(10).optional(),
    }),
  }),
  z.strictObject({
    type: z.literal("limited_time_offer"),
    limited_time_offer: z.strictObject({
      expiration_time_ms: z.number().int().min(0),
    }),
  }),
]);

/** Component types of a template send; any case (`BODY` as GET /templates shows it). */
const TEMPLATE_SEND_COMPONENTS = [
  "header",
  "body",
  "button",
  "carousel",
  "limited_time_offer",
] as const;
const BUTTON_SUB_TYPES = [
  "quick_reply",
  "url",
  "copy_code",
  "flow",
  "catalog",
  "mpm",
] as const;

/** A carousel card: passed to Meta as given, within the JSON bounds. */
const CarouselCard = z.strictObject({
  card_index: z.number().int().min(0).max(9),
  components: z.array(freeJsonObject()).min(1).max(10),
});

const TemplateComponent = z.strictObject({
  type: z.string().toLowerCase().pipe(z.enum(TEMPLATE_SEND_COMPONENTS)),
  sub_type: z.string().toLowerCase().pipe(z.enum(BUTTON_SUB_TYPES)).optional(),
  // Meta's own examples give the index as a string: so does the Graph request.
  index: z.union([z.string().regex(/^\d$/), z.number().int().min(0).max(9)])
    .transform(String).optional(),
  parameters: z.array(TemplateParameter).max(100).optional(),
  cards: z.array(CarouselCard).min(1).max(10).optional(),
}).superRefine((c, ctx) => {
  const problem = (path: string, message: string) =>
    ctx.addIssue({ code: "custom", path: [path], message });
  const button = c.type === "button";
  if (button && c.sub_type === undefined) {
    problem("sub_type", `a button component needs "sub_type"`);
  }
  if (button && c.index === undefined) {
    problem("index", `a button component needs "index" (0 to 9)`);
  }
  if (!button && c.sub_type !== undefined) {
    problem("sub_type", `only a button component takes "sub_type"`);
  }
  if (!button && c.index !== undefined) {
    problem("index", `only a button component takes "index"`);
  }
  if (c.type === "carousel") {
    if (c.cards === undefined) problem("cards", `a carousel needs "cards"`);
    if (c.parameters !== undefined) {
      problem("parameters", `a carousel takes "cards", not "parameters"`);
    }
    return;
  }
  if (c.cards !== undefined) {
    problem("cards", `only a carousel component takes "cards"`);
  }
  if (c.parameters === undefined) {
    problem("parameters", `a ${c.type} component needs "parameters"`);
  }
});

export const TemplateContent = z.strictObject({
  name: z.string().regex(/^[a-z0-9_]{1,512}$/, {
    message: "must be lowercase letters, digits and underscores",
  }),
  language: z.strictObject({
    code: z.string().regex(/^[a-z]{2,3}(?:_[A-Z]{2})?$/, {
      message: 'must look like "es_AR" or "en"',
    }),
    policy: z.literal("deterministic").optional(),
  }),
  components: z.array(TemplateComponent).max(20).optional(),
});

const InteractiveText = (max: number) =>
  z.strictObject({ text: z.string().min(1).max(max) });
const InteractiveHeader = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("text"), text: z.string().min(1).max(60) }),
  z.strictObject({ type: z.literal("image"), image: mediaObject }),
  z.strictObject({ type: z.literal("video"), video: mediaObject }),
  z.strictObject({ type: z.literal("document"), document: mediaObject }),
]);
const TextHeader = z.strictObject({
  type: z.literal("text"),
  text: z.string().min(1).max(60),
});

const ButtonInteractive = z.strictObject({
  type: z.literal("button"),
  header: InteractiveHeader.optional(),
  body: InteractiveText(1024),
  footer: InteractiveText(60).optional(),
  action: z.strictObject({
    buttons: z.array(z.strictObject({
      type: z.literal("reply"),
      reply: z.strictObject({
        id: z.string().min(1).max(256),
        title: z.string().min(1).max(20),
      }),
    })).min(1).max(3),
  }),
}).refine((v) => unique(v.action.buttons.map((b) => b.reply.id)), {
  message: "button ids must be unique",
}).refine((v) => unique(v.action.buttons.map((b) => b.reply.title)), {
  message: "button titles must be unique",
});

const ListInteractive = z.strictObject({
  type: z.literal("list"),
  header: TextHeader.optional(),
  body: InteractiveText(4096),
  footer: InteractiveText(60).optional(),
  action: z.strictObject({
    button: z.string().min(1).max(20),
    sections: z.array(z.strictObject({
      title: z.string().min(1).max(24).optional(),
      rows: z.array(z.strictObject({
        id: z.string().min(1).max(200),
        title: z.string().min(1).max(24),
        description: z.string().max(72).optional(),
      })).min(1).max(10),
    })).min(1).max(10),
  }),
}).refine(
  (v) => v.action.sections.reduce((n, s) => n + s.rows.length, 0) <= 10,
  { message: "a list holds at most 10 rows in total" },
).refine(
  (v) =>
    v.action.sections.length === 1 ||
    v.action.sections.every((s) => s.title !== undefined),
  { message: "every section needs a title when there is more than one" },
).refine(
  (v) => unique(v.action.sections.flatMap((s) => s.rows.map((r) => r.id))),
  { message: "row ids must be unique" },
);

const CtaUrlInteractive = z.strictObject({
  type: z.literal("cta_url"),
  header: TextHeader.optional(),
  body: InteractiveText(1024),
  footer: InteractiveText(60).optional(),
  action: z.strictObject({
    name: z.literal("cta_url"),
    parameters: z.strictObject({
      display_text: z.string().min(1).max(20),
      url: z.url({ protocol: /^https?$/ }).max(2048),
    }),
  }),
});

const FlowInteractive = z.strictObject({
  type: z.literal("flow"),
  header: TextHeader.optional(),
  body: InteractiveText(1024),
  footer: InteractiveText(60).optional(),
  action: z.strictObject({
    name: z.literal("flow"),
    parameters: z.strictObject({
      flow_message_version: z.literal("3"),
      flow_token: z.string().max(1024).optional(),
      flow_id: z.string().max(64).optional(),
      flow_name: z.string().max(200).optional(),
      flow_cta: z.string().min(1).max(20),
      mode: z.enum(["published", "draft"]).optional(),
      flow_action: z.enum(["navigate", "data_exchange"]).optional(),
      flow_action_payload: z.strictObject({
        screen: z.string().min(1).max(200),
        data: freeJsonObject().optional(),
      }).optional(),
    }).refine(
      (p) => (p.flow_id === undefined) !== (p.flow_name === undefined),
      {
        message: 'give exactly one of "flow_id" or "flow_name"',
      },
    ).refine(
      (p) =>
        p.flow_action !== "navigate" || p.flow_action_payload !== undefined,
      {
        message:
          '"flow_action_payload" is required when flow_action is navigate',
      },
    ),
  }),
});

export const InteractiveContent = z.discriminatedUnion("type", [
  ButtonInteractive,
  ListInteractive,
  CtaUrlInteractive,
  FlowInteractive,
]);

export const ReactionContent = z.strictObject({
  message_id: z.string().min(1).max(128),
  emoji: z.string().max(64).refine((e) => e === "" || isOneEmoji(e), {
    message: "must be one emoji, or empty to remove the reaction",
  }),
});

export const SendMetadata = z.strictObject({
  origin: z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, {
    message: 'must be a lowercase identifier like "external_api"',
  }).optional(),
  sentByAi: z.boolean().optional(),
  campaignId: z.string().refine(isUuid, { message: "must be a UUID" })
    .optional(),
});

const common = {
  phoneNumberId: z.string().refine(isUuid, { message: "must be a UUID" }),
  to: z.string().min(1).max(160).describe(
    "Phone number with country code, or the business-scoped user id (BSUID) of a customer who uses a WhatsApp username, e.g. US.13491208655302741918",
  ),
  clientRef: z.string().max(256).optional(),
  metadata: SendMetadata.optional(),
};

/** The POST /messages body (a batch item has the same shape with phoneNumberId optional). */
export const SendMessageBody = z.discriminatedUnion("type", [
  z.strictObject({ ...common, type: z.literal("text"), text: TextContent }),
  z.strictObject({ ...common, type: z.literal("image"), image: ImageContent }),
  z.strictObject({ ...common, type: z.literal("video"), video: VideoContent }),
  z.strictObject({ ...common, type: z.literal("audio"), audio: AudioContent }),
  z.strictObject({
    ...common,
    type: z.literal("document"),
    document: DocumentContent,
  }),
  z.strictObject({
    ...common,
    type: z.literal("template"),
    template: TemplateContent,
  }),
  z.strictObject({
    ...common,
    type: z.literal("interactive"),
    interactive: InteractiveContent,
  }),
  z.strictObject({
    ...common,
    type: z.literal("reaction"),
    reaction: ReactionContent,
  }),
]);
export type SendMessageInput = z.infer<typeof SendMessageBody>;

function unique(values: string[]): boolean {
  return new Set(values).size === values.length;
}
