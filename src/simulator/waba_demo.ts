/**
 * The simulator WABA's demo templates, in Meta's shape (component samples
 * from the reference, meta-management.md §1.1): more than one page at
 * Meta's default page size of 25, every status, positional and named
 * parameters, text, image, video, document and location headers, and
 * quick-reply, URL, phone, copy-code, flow and OTP buttons.
 */
/** A template as Meta stores it (GET /{waba}/message_templates answers these fields). */
export interface SimTemplate {
  id: string;
  name: string;
  language: string;
  category: string;
  status: string;
  components: Record<string, unknown>[];
  parameter_format?: "POSITIONAL" | "NAMED";
  quality_score?: { score: string; date: number };
  rejected_reason?: string;
  previous_category?: string;
  correct_category?: string;
  sub_category?: string;
}

type Component = Record<string, unknown>;

function body(text: string, examples: string[]): Component {
  return examples.length
    ? { type: "BODY", text, example: { body_text: [examples] } }
    : { type: "BODY", text };
}

function namedBody(text: string, params: [string, string][]): Component {
  return {
    type: "BODY",
    text,
    example: {
      body_text_named_params: params.map(([param_name, example]) => ({
        param_name,
        example,
      })),
    },
  };
}

function mediaHeader(format: "IMAGE" | "VIDEO" | "DOCUMENT"): Component {
  return {
    type: "HEADER",
    format,
    example: { header_handle: [`4::aW1hZ2UvanBlZw==:ARb${format}demo`] },
  };
}

const GREEN = (date: number) => ({ score: "GREEN", date });

/** A fresh copy of the demo templates (each WABA gets its own). */
export function demoTemplates(): SimTemplate[] {
  const date = 1_751_247_548;
  const t = (
    n: number,
    fields: Omit<SimTemplate, "id" | "quality_score"> & {
      quality_score?: SimTemplate["quality_score"];
    },
  ): SimTemplate => ({
    id: String(1_689_556_908_129_800n + BigInt(n)),
    quality_score: GREEN(date),
    ...fields,
  });
  const templates: SimTemplate[] = [
    t(1, {
      name: "order_update",
      language: "es_AR",
      category: "UTILITY",
      status: "APPROVED",
      parameter_format: "POSITIONAL",
      components: [
        body("Hola {{1}}, tu pedido {{2}} está en camino.", [
          "Ana",
          "A-1001",
        ]),
      ],
    }),
    t(2, {
      name: "welcome",
      language: "en_US",
      category: "MARKETING",
      status: "APPROVED",
      parameter_format: "POSITIONAL",
      components: [
        { type: "HEADER", format: "TEXT", text: "Welcome!" },
        body("Hi {{1}}, welcome to Demo Business!", ["Ana"]),
      ],
    }),
    {
      // An id past 2^53, as Meta's can be: exact everywhere or nowhere.
      id: "17841400000000001",
      name: "order_confirmation",
      language: "en_US",
      category: "UTILITY",
      status: "APPROVED",
      parameter_format: "NAMED",
      quality_score: GREEN(date),
      components: [
        mediaHeader("IMAGE"),
        namedBody(
          "Thank you, {{first_name}}! Your order number is {{order_number}}.",
          [["first_name", "Pablo"], ["order_number", "860198-230332"]],
        ),
        { type: "FOOTER", text: "Lucky Shrub: the Succulent Specialists!" },
        {
          type: "BUTTONS",
          buttons: [
            {
              type: "URL",
              text: "Track",
              url: "https://example.com/track/{{1}}",
              example: ["https://example.com/track/ABC"],
            },
            {
              type: "PHONE_NUMBER",
              text: "Call",
              phone_number: "15550051310",
            },
          ],
        },
      ],
    },
    t(4, {
      name: "summer_sale",
      language: "en_US",
      category: "MARKETING",
      status: "PAUSED",
      parameter_format: "POSITIONAL",
      quality_score: { score: "RED", date },
      components: [
        {
          type: "HEADER",
          format: "TEXT",
          text: "Our {{1}} is on!",
          example: { header_text: ["Summer Sale"] },
        },
        body(
          "Shop now through {{1}} and use code {{2}} to get {{3}} off.",
          ["the end of August", "25OFF", "25%"],
        ),
        {
          type: "BUTTONS",
          buttons: [{ type: "QUICK_REPLY", text: "Unsubscribe from Promos" }],
        },
      ],
    }),
    t(5, {
      name: "abandoned_cart",
      language: "en",
      category: "MARKETING",
      status: "REJECTED",
      rejected_reason: "INVALID_FORMAT",
      components: [body("You left {{1}}{{2}} in your cart.", ["2", "items"])],
    }),
    t(6, {
      name: "invoice_ready",
      language: "en_US",
      category: "UTILITY",
      status: "APPROVED",
      parameter_format: "POSITIONAL",
      components: [
        mediaHeader("DOCUMENT"),
        body("Invoice {{1}} for {{2}} is attached.", ["F-2231", "$100.99"]),
      ],
    }),
    t(7, {
      name: "product_video",
      language: "en_US",
      category: "MARKETING",
      status: "PENDING",
      quality_score: { score: "UNKNOWN", date },
      components: [mediaHeader("VIDEO"), body("See {{1}} in action.", ["it"])],
    }),
    t(8, {
      name: "store_location",
      language: "en_US",
      category: "UTILITY",
      status: "APPROVED",
      components: [
        { type: "HEADER", format: "LOCATION" },
        body("Your order {{1}} is ready for pickup here.", ["A-1001"]),
      ],
    }),
    t(9, {
      name: "verification_code",
      language: "en_US",
      category: "AUTHENTICATION",
      status: "APPROVED",
      components: [
        { type: "BODY", add_security_recommendation: true },
        { type: "FOOTER", code_expiration_minutes: 10 },
        {
          type: "BUTTONS",
          buttons: [{ type: "OTP", otp_type: "COPY_CODE", text: "Copy Code" }],
        },
      ],
    }),
    t(10, {
      name: "coupon_offer",
      language: "en_US",
      category: "MARKETING",
      status: "APPROVED",
      components: [
        body("Use code {{1}} at checkout.", ["250FF"]),
        {
          type: "BUTTONS",
          buttons: [{ type: "COPY_CODE", example: "250FF" }],
        },
      ],
    }),
    t(11, {
      name: "old_promo",
      language: "en_US",
      category: "MARKETING",
      status: "DISABLED",
      components: [body("Last chance!", [])],
    }),
    t(12, {
      name: "appointment_reminder",
      language: "es_AR",
      category: "UTILITY",
      status: "IN_APPEAL",
      components: [body("Recordá tu turno del {{1}}.", ["lunes"])],
    }),
    t(13, {
      name: "flow_signup",
      language: "en_US",
      category: "MARKETING",
      status: "APPROVED",
      components: [
        body("Sign up in a minute.", []),
        {
          type: "BUTTONS",
          buttons: [{
            type: "FLOW",
            text: "Check out this offer!",
            flow_id: "1234567890",
            flow_action: "navigate",
            navigate_screen: "WELCOME_SCREEN",
          }],
        },
      ],
    }),
    t(14, {
      name: "welcome",
      language: "es_AR",
      category: "MARKETING",
      status: "APPROVED",
      parameter_format: "POSITIONAL",
      components: [body("Hola {{1}}, ¡bienvenida!", ["Ana"])],
    }),
  ];
  for (let i = 1; i <= 20; i++) {
    const n = String(i).padStart(2, "0");
    templates.push(t(100 + i, {
      name: `notice_${n}`,
      language: "en_US",
      category: "UTILITY",
      status: "APPROVED",
      parameter_format: "POSITIONAL",
      components: [body(`Notice ${n}: {{1}}`, ["details"])],
    }));
  }
  return templates;
}
