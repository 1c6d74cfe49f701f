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

const TemplateParameter = z.discriminatedUnion("type", [
  z.strictObject({
    type: z.literal("text"),
    text: z.string().min(1).max(1024),
    parameter_name: z.string().regex(/^[a-z_]{1,20}$/).optional(),
  }),
  z.strictObject({
    type: z.literal("currency"),
    currency: z.strictObject({
      fallback_value: z.string().max(256),
      code: z.string().length(3),
      amount_1000: z.number().int(),
    }),
  }),
  z.strictObject({
    type: z.literal("date_time"),
    date_time: z.strictObject({ fallback_value: z.string().max(256) }),
  }),
  z.strictObject({ type: z.literal("image"), image: mediaObject }),
  z.strictObject({ type: z.literal("video"), video: mediaObject }),
  z.strictObject({ type: z.literal("document"), document: mediaObject }),
  z.strictObject({
    type: z.literal("location"),
    location: z.strictObject({
      latitude: z.number().min(-90).max(90),
      longitude: z.number().min(-180).max(180),
      name: z.string().max(1024).optional(),
      address: z.string().max(1024).optional(),
    }),
  }),
  z.strictObject({ type: z.literal("payload"), payload: z.string().max(1024) }),
  z.strictObject({
    type: z.literal("coupon_code"),
    coupon_code: z.string().max(15),
  }),
  z.strictObject({
    type: z.literal("action"),
    action: z.strictObject({
      flow_token: z.string().max(1024).optional(),
      flow_action_data: freeJsonObject().optional(),
    }),
  }),
]);

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
  components: z.array(z.strictObject({
    // Any case: GET /templates shows components as HEADER, BODY, BUTTONS.
    type: z.string().toLowerCase().pipe(z.enum(["header", "body", "button"])),
    sub_type: z.enum(["quick_reply", "url", "copy_code", "flow"]).optional(),
    index: z.union([z.string().regex(/^\d$/), z.number().int().min(0).max(9)])
      .optional(),
    parameters: z.array(TemplateParameter).max(100),
  })).max(20).optional(),
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
