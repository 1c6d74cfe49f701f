// Templates as Meta returns them from GET /{waba-id}/message_templates
// (components and parameter_format; shapes of meta-management.md §1.1), and
// a send that fills each one right. Shared by the validator's own tests and
// the ones through POST /messages.

import { parseSendMessage } from "../../src/domain/messages/outbound.ts";
import type { SentComponent } from "../../src/domain/templates/template_params.ts";

type Json = Record<string, unknown>;

export interface TemplateFixture {
  name: string;
  category: "MARKETING" | "UTILITY" | "AUTHENTICATION";
  /** Meta's parameter_format; absent for a hand-made template (inferred). */
  parameterFormat?: "POSITIONAL" | "NAMED";
  components: Json[];
  /** `template.components` of a send Meta takes. */
  valid: Json[];
}

/** A text parameter, named when `name` is given. */
export const text = (value: string, name?: string) => ({
  type: "text",
  text: value,
  ...(name ? { parameter_name: name } : {}),
});

/** Header text, body of text, currency and date_time, and every button type. */
export const ORDER: TemplateFixture = {
  name: "order_shipped",
  category: "UTILITY",
  parameterFormat: "POSITIONAL",
  components: [
    {
      type: "HEADER",
      format: "TEXT",
      text: "Order {{1}}",
      example: { header_text: ["A-100"] },
    },
    {
      type: "BODY",
      text: "Hi {{1}}, you paid {{2}} on {{3}}.",
      example: { body_text: [["Ana", "$10.00", "May 1"]] },
    },
    { type: "FOOTER", text: "Reply STOP to opt out" },
    {
      type: "BUTTONS",
      buttons: [
        { type: "QUICK_REPLY", text: "Stop promos" },
        {
          type: "URL",
          text: "Track",
          url: "https://shop.example/track/{{1}}",
          example: ["https://shop.example/track/A-100"],
        },
        { type: "COPY_CODE", example: "SAVE10" },
        {
          type: "FLOW",
          text: "Rate us",
          flow_id: "1234567890",
          flow_action: "navigate",
          navigate_screen: "RATE",
        },
        { type: "PHONE_NUMBER", text: "Call", phone_number: "15550051310" },
        { type: "URL", text: "Help", url: "https://shop.example/help" },
      ],
    },
  ],
  valid: [
    { type: "header", parameters: [text("A-100")] },
    {
      type: "body",
      parameters: [
        text("Ana"),
        {
          type: "currency",
          currency: {
            fallback_value: "$10.00",
            code: "USD",
            amount_1000: 10000,
          },
        },
        { type: "date_time", date_time: { fallback_value: "May 1, 2026" } },
      ],
    },
    {
      type: "button",
      sub_type: "quick_reply",
      index: "0",
      parameters: [{ type: "payload", payload: "STOP" }],
    },
    {
      type: "button",
      sub_type: "url",
      index: "1",
      parameters: [text("A-100")],
    },
    {
      type: "button",
      sub_type: "copy_code",
      index: "2",
      parameters: [{ type: "coupon_code", coupon_code: "SAVE10" }],
    },
    {
      type: "button",
      sub_type: "flow",
      index: "3",
      parameters: [{
        type: "action",
        action: { flow_token: "tok-1", flow_action_data: { order: "A-100" } },
      }],
    },
  ],
};

/** Meta's named example (templates.md): header and body by name. */
export const NAMED: TemplateFixture = {
  name: "order_confirmation",
  category: "UTILITY",
  parameterFormat: "NAMED",
  components: [
    {
      type: "HEADER",
      format: "TEXT",
      text: "Order {{order_id}}",
      example: {
        header_text_named_params: [{ param_name: "order_id", example: "A-1" }],
      },
    },
    {
      type: "BODY",
      text: "Thank you, {{first_name}}! Your order number is {{order_number}}.",
      example: {
        body_text_named_params: [
          { param_name: "first_name", example: "Pablo" },
          { param_name: "order_number", example: "860198-230332" },
        ],
      },
    },
  ],
  valid: [
    { type: "header", parameters: [text("A-1", "order_id")] },
    {
      type: "body",
      parameters: [
        text("SKBUP2-4CPIG9", "order_number"),
        text("Jessica", "first_name"),
      ],
    },
  ],
};

/** A media header of `format`, filled by `parameter`. */
export function mediaHeader(
  format: "IMAGE" | "VIDEO" | "DOCUMENT" | "LOCATION",
  parameter: Json,
): TemplateFixture {
  return {
    name: `promo_${format.toLowerCase()}`,
    category: "MARKETING",
    components: [
      format === "LOCATION"
        ? { type: "HEADER", format }
        : { type: "HEADER", format, example: { header_handle: ["4::aW1h"] } },
      { type: "BODY", text: "Our summer sale is on!" },
    ],
    valid: [{ type: "header", parameters: [parameter] }],
  };
}

/** An authentication template: the code in the body and in the OTP button. */
export const OTP: TemplateFixture = {
  name: "login_code",
  category: "AUTHENTICATION",
  components: [
    {
      type: "BODY",
      text: "*{{1}}* is your verification code.",
      add_security_recommendation: true,
    },
    { type: "FOOTER", code_expiration_minutes: 10 },
    {
      type: "BUTTONS",
      buttons: [{ type: "OTP", otp_type: "COPY_CODE", text: "Copy code" }],
    },
  ],
  valid: [
    { type: "body", parameters: [text("123456")] },
    {
      type: "button",
      sub_type: "url",
      index: "0",
      parameters: [text("123456")],
    },
  ],
};

/** A limited-time offer: image header, offer, body, coupon and link. */
export const OFFER: TemplateFixture = {
  name: "flash_sale",
  category: "MARKETING",
  components: [
    { type: "HEADER", format: "IMAGE", example: { header_handle: ["4::aW"] } },
    {
      type: "LIMITED_TIME_OFFER",
      limited_time_offer: { text: "Expiring offer!", has_expiration: true },
    },
    { type: "BODY", text: "Good news, {{1}}! Use code {{2}}." },
    {
      type: "BUTTONS",
      buttons: [
        { type: "COPY_CODE", example: "HOT25" },
        {
          type: "URL",
          text: "Shop",
          url: "https://shop.example/offer/{{1}}",
        },
      ],
    },
  ],
  valid: [
    {
      type: "header",
      parameters: [{
        type: "image",
        image: { link: "https://cdn.example/sale.jpg" },
      }],
    },
    {
      type: "limited_time_offer",
      parameters: [{
        type: "limited_time_offer",
        limited_time_offer: { expiration_time_ms: 1_790_000_000_000 },
      }],
    },
    { type: "body", parameters: [text("Ana"), text("HOT25")] },
    {
      type: "button",
      sub_type: "copy_code",
      index: 0,
      parameters: [{ type: "coupon_code", coupon_code: "HOT25" }],
    },
    {
      type: "button",
      sub_type: "url",
      index: 1,
      parameters: [text("summer")],
    },
  ],
};

/** A media card carousel: a bubble body, then cards passed through. */
export const CAROUSEL: TemplateFixture = {
  name: "summer_carousel",
  category: "MARKETING",
  components: [
    { type: "BODY", text: "Hi {{1}}, have a look:" },
    {
      type: "CAROUSEL",
      cards: [0, 1].map(() => ({
        components: [
          { type: "HEADER", format: "IMAGE" },
          { type: "BODY", text: "Use code {{1}}" },
          {
            type: "BUTTONS",
            buttons: [{ type: "QUICK_REPLY", text: "More" }],
          },
        ],
      })),
    },
  ],
  valid: [
    { type: "body", parameters: [text("Ana")] },
    {
      type: "carousel",
      cards: [0, 1].map((card_index) => ({
        card_index,
        components: [
          {
            type: "header",
            parameters: [{
              type: "image",
              image: { id: `media-${card_index}` },
            }],
          },
          { type: "body", parameters: [text(`CODE${card_index}`)] },
          {
            type: "button",
            sub_type: "quick_reply",
            index: "0",
            parameters: [{ type: "payload", payload: `more-${card_index}` }],
          },
        ],
      })),
    },
  ],
};

/** A catalog template (sub_type catalog in Meta's OpenAPI) and a multi-product one. */
export const CATALOG: TemplateFixture = {
  name: "intro_catalog_offer",
  category: "MARKETING",
  components: [
    { type: "BODY", text: "Now shop {{1}} items from {{2}} at {{3}}% off" },
    {
      type: "BUTTONS",
      buttons: [
        { type: "CATALOG", text: "View catalog" },
        { type: "MPM", text: "View items" },
      ],
    },
  ],
  valid: [
    { type: "body", parameters: [text("100"), text("400"), text("3")] },
    {
      type: "button",
      sub_type: "CATALOG",
      index: 0,
      parameters: [{
        type: "action",
        action: { thumbnail_product_retailer_id: "2lc20305pt" },
      }],
    },
    {
      type: "button",
      sub_type: "mpm",
      index: "1",
      parameters: [{
        type: "action",
        action: {
          thumbnail_product_retailer_id: "2lc20305pt",
          sections: [{
            title: "Picks",
            product_items: [{ product_retailer_id: "2lc20305pt" }],
          }],
        },
      }],
    },
  ],
};

export const header = (...parameters: Json[]) => ({
  type: "header",
  parameters,
});
export const body = (...parameters: Json[]) => ({ type: "body", parameters });
export const button = (
  sub_type: string,
  index: string,
  ...parameters: Json[]
) => ({ type: "button", sub_type, index, parameters });
export const payload = { type: "payload", payload: "STOP" };

/** parseSendMessage of a template send with these components (the API's schema). */
export function parseTemplateSend(components: unknown[]) {
  return parseSendMessage({
    phoneNumberId: "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
    to: "+5491122334455",
    type: "template",
    template: { name: "t", language: { code: "en_US" }, components },
  });
}

/** The components as the schema gives them to the validator; throws when it refuses them. */
export function parsedComponents(components: unknown[]): SentComponent[] {
  const result = parseTemplateSend(components);
  if (!result.ok) throw new Error(JSON.stringify(result.problem));
  const value = result.value as { template: { components?: SentComponent[] } };
  return value.template.components ?? [];
}
