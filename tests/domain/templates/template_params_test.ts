// The template send validator, one row per parameter kind and per mismatch.
// Every send first goes through the API's schema (parsedComponents), so the
// validator sees what POST /messages gives it.
import assert from "node:assert/strict";
import { templatePlan } from "../../../src/domain/templates/template_plan.ts";
import { templateSendProblems } from "../../../src/domain/templates/template_params.ts";
import {
  body,
  button,
  CAROUSEL,
  CATALOG,
  header,
  mediaHeader,
  NAMED,
  OFFER,
  ORDER,
  OTP,
  parsedComponents,
  payload,
  type TemplateFixture,
  text,
} from "../../_support/template_fixtures.ts";

type Json = Record<string, unknown>;

function problemsOf(
  fixture: TemplateFixture,
  components: unknown[],
  parameterFormat = fixture.parameterFormat,
) {
  const plan = templatePlan({
    components: fixture.components,
    parameterFormat,
  });
  return templateSendProblems(plan, parsedComponents(components));
}

const image = { type: "image", image: { link: "https://cdn.example/a.jpg" } };

/** ORDER's valid send with component `i` replaced (null: left out). */
function order(changes: Record<number, Json | null>): Json[] {
  return ORDER.valid.flatMap((c, i) =>
    i in changes ? (changes[i] === null ? [] : [changes[i]!]) : [c]
  );
}
const PRODUCT: TemplateFixture = {
  name: "spm_offer",
  category: "MARKETING",
  components: [
    { type: "HEADER", format: "PRODUCT" },
    { type: "BODY", text: "Hi {{1}}, this one is for you" },
    { type: "BUTTONS", buttons: [{ type: "SPM", text: "View" }] },
  ],
  valid: [],
};
const HELLO: TemplateFixture = {
  name: "hello",
  category: "UTILITY",
  components: [{ type: "BODY", text: "Hello!" }],
  valid: [],
};
Deno.test("a send Meta takes passes, for every kind of template", () => {
  const ok: [string, TemplateFixture, unknown[]][] = [
    ["positional header, body, every button", ORDER, ORDER.valid],
    ["optional buttons left out", ORDER, order({ 2: null, 5: null })],
    ["named, in any order", NAMED, NAMED.valid],
    ["named, body before header", NAMED, [...NAMED.valid].reverse()],
    ["authentication code and OTP button", OTP, OTP.valid],
    ["limited-time offer passed through", OFFER, OFFER.valid],
    ["carousel passed through", CAROUSEL, CAROUSEL.valid],
    ["catalog and multi-product buttons", CATALOG, CATALOG.valid],
    ["a product header passed through", PRODUCT, [
      header({
        type: "product",
        product: { product_retailer_id: "2lc20305pt", catalog_id: "194836" },
      }),
      body(text("Ana")),
    ]],
    ["no parameters at all", HELLO, []],
    ["an empty body for a body without placeholders", HELLO, [body()]],
  ];
  const media: [string, "IMAGE" | "VIDEO" | "DOCUMENT" | "LOCATION", Json][] = [
    ["image by link", "IMAGE", image],
    ["image by id", "IMAGE", { type: "image", image: { id: "1234" } }],
    ["video by link", "VIDEO", {
      type: "video",
      video: { link: "https://cdn.example/a.mp4" },
    }],
    ["document by id with a filename", "DOCUMENT", {
      type: "document",
      document: { id: "987", filename: "invoice.pdf" },
    }],
    ["location", "LOCATION", {
      type: "location",
      location: {
        latitude: -34.6,
        longitude: -58.4,
        name: "Shop",
        address: "Av. Corrientes 1234",
      },
    }],
  ];
  for (const [what, format, parameter] of media) {
    const fixture = mediaHeader(format, parameter);
    ok.push([`${format} header, ${what}`, fixture, fixture.valid]);
  }
  for (const [what, fixture, components] of ok) {
    assert.deepEqual(problemsOf(fixture, components), [], what);
  }
});

Deno.test("each mismatch is a problem naming the component and the parameter", () => {
  const rows: [string, TemplateFixture, unknown[], RegExp, string][] = [
    // body, positional
    [
      "a positional body parameter missing",
      ORDER,
      order({ 1: body(text("Ana"), text("$10")) }),
      /^template\.components\[1\] \(body\): parameter \{\{3\}\} is missing: the template's body expects 3 parameter\(s\), got 2$/,
      "template.components.1",
    ],
    [
      "a positional body parameter extra",
      ORDER,
      order({ 1: body(text("a"), text("b"), text("c"), text("d")) }),
      /^template\.components\[1\]\.parameters\[3\] \(body\): parameter 4 is extra: the template's body expects 3 parameter\(s\), got 4$/,
      "template.components.1.parameters.3",
    ],
    [
      "the body left out",
      ORDER,
      order({ 1: null }),
      /^template\.components \(body\): parameters \{\{1\}\}, \{\{2\}\}, \{\{3\}\} are missing: the template's body expects 3 parameter\(s\), got 0$/,
      "template.components",
    ],
    [
      "a body parameter of a header type",
      ORDER,
      order({ 1: body(image, text("b"), text("c")) }),
      /\(body\): parameter \{\{1\}\} is "image"; a body parameter is "text", "currency" or "date_time"$/,
      "template.components.1.parameters.0",
    ],
    [
      "a named parameter given to a positional template",
      ORDER,
      order({ 1: body(text("Ana", "name"), text("b"), text("c")) }),
      /\(body\): "parameter_name" "name" is given, but the template's parameters are positional/,
      "template.components.1.parameters.0",
    ],
    [
      "a body parameter with a new line",
      ORDER,
      order({ 1: body(text("Ana\nand Bo"), text("b"), text("c")) }),
      /\(body\): parameter \{\{1\}\} holds a new line, a tab or more than 4 spaces in a row/,
      "template.components.1.parameters.0",
    ],
    [
      "a body parameter with five spaces in a row",
      ORDER,
      order({ 1: body(text("a     b"), text("b"), text("c")) }),
      /more than 4 spaces in a row/,
      "template.components.1.parameters.0",
    ],
    [
      "the body given twice",
      ORDER,
      [...ORDER.valid, ORDER.valid[1]],
      /^template\.components\[6\] \(body\): body is given twice \(also template\.components\[1\]\)$/,
      "template.components.6",
    ],
    // body, named
    [
      "a positional parameter given to a named template",
      NAMED,
      [NAMED.valid[0], body(text("Jessica"), text("SKB"))],
      /^template\.components\[1\]\.parameters\[0\] \(body\): "parameter_name" is missing: the template's parameters are named \("first_name", "order_number"\)$/,
      "template.components.1.parameters.0",
    ],
    [
      "a named parameter missing",
      NAMED,
      [NAMED.valid[0], body(text("Jessica", "first_name"))],
      /^template\.components\[1\] \(body\): parameter "order_number" is missing$/,
      "template.components.1",
    ],
    [
      "a name the template does not have",
      NAMED,
      [
        NAMED.valid[0],
        body(
          text("Jessica", "first_name"),
          text("X", "order_number"),
          text("Y", "last_name"),
        ),
      ],
      /\(body\): parameter "last_name" is not in the template's body \(it has "first_name", "order_number"\)$/,
      "template.components.1.parameters.2",
    ],
    [
      "a name given twice",
      NAMED,
      [
        NAMED.valid[0],
        body(
          text("Jessica", "first_name"),
          text("Jess", "first_name"),
          text("X", "order_number"),
        ),
      ],
      /\(body\): parameter "first_name" is given twice$/,
      "template.components.1.parameters.1",
    ],
    [
      "a named template's header left out",
      NAMED,
      [NAMED.valid[1]],
      /^template\.components \(header\): parameter "order_id" is missing$/,
      "template.components",
    ],
    // header
    [
      "a text header parameter missing",
      ORDER,
      order({ 0: null }),
      /^template\.components \(header\): parameter \{\{1\}\} is missing/,
      "template.components",
    ],
    [
      "a text header parameter past 60 characters",
      ORDER,
      order({ 0: header(text("x".repeat(61))) }),
      /\(header\): parameter \{\{1\}\} is 61 characters long; a header parameter takes at most 60$/,
      "template.components.0.parameters.0",
    ],
    [
      "header parameters for a template whose header takes none",
      CAROUSEL,
      [header(text("x")), ...CAROUSEL.valid],
      /^template\.components\[0\]\.parameters\[0\] \(header\): the template's header takes no parameters, got 1$/,
      "template.components.0.parameters.0",
    ],
    [
      "a video for an image header",
      mediaHeader("IMAGE", image),
      [header({ type: "video", video: { id: "1" } })],
      /\(header\): parameter is "video", but the template's header is IMAGE: give one "image" parameter$/,
      "template.components.0.parameters.0",
    ],
    [
      "text for a document header",
      mediaHeader("DOCUMENT", image),
      [header(text("invoice"))],
      /parameter is "text", but the template's header is DOCUMENT/,
      "template.components.0.parameters.0",
    ],
    [
      "a media header left out",
      mediaHeader("VIDEO", image),
      [],
      /^template\.components \(header\): parameter "video" is missing: the template's header is VIDEO$/,
      "template.components",
    ],
    [
      "two media for one header",
      mediaHeader("IMAGE", image),
      [header(image, image)],
      /\(header\): parameter 2 is extra: the template's header is IMAGE and takes one parameter$/,
      "template.components.0.parameters.1",
    ],
    [
      "a location header without its name and address",
      mediaHeader("LOCATION", image),
      [header({ type: "location", location: { latitude: 1, longitude: 2 } })],
      /\(header\): parameter "location" needs "name" and "address"/,
      "template.components.0.parameters.0",
    ],
    // buttons
    [
      "a URL button with a placeholder left out",
      ORDER,
      order({ 3: null }),
      /^template\.components \(button 1\): parameter "text" is missing: the template's URL button 1 \("https:\/\/shop\.example\/track\/\{\{1\}\}"\) takes one; send it with sub_type "url" and index "1"$/,
      "template.components",
    ],
    [
      "a copy-code button left out",
      ORDER,
      order({ 4: null }),
      /^template\.components \(button 2\): parameter "coupon_code" is missing/,
      "template.components",
    ],
    [
      "a sub_type that is not the button's",
      ORDER,
      order({ 2: button("url", "0", text("x")) }),
      /^template\.components\[2\] \(button 0\): sub_type "url" does not match the template's button 0, a QUICK_REPLY button: use sub_type "quick_reply"$/,
      "template.components.2",
    ],
    [
      "an index past the template's buttons",
      ORDER,
      [...ORDER.valid, button("quick_reply", "7", payload)],
      /\(button 7\): the template has no button at index 7 \(its buttons are 0 to 5\)$/,
      "template.components.6",
    ],
    [
      "a button for a template without buttons",
      NAMED,
      [...NAMED.valid, button("quick_reply", "0", payload)],
      /the template has no button at index 0 \(it has no buttons\)$/,
      "template.components.2",
    ],
    [
      "parameters for a phone number button",
      ORDER,
      [...ORDER.valid, button("url", "4", text("x"))],
      /\(button 4\): the template's button 4 is a PHONE_NUMBER button, which takes no parameters: leave it out$/,
      "template.components.6",
    ],
    [
      "parameters for a URL button without placeholder",
      ORDER,
      [...ORDER.valid, button("url", "5", text("x"))],
      /button 5 is a URL button with a fixed url, which takes no parameters/,
      "template.components.6",
    ],
    [
      "text for a quick reply",
      ORDER,
      order({ 2: button("quick_reply", "0", text("STOP")) }),
      /\(button 0\): parameter is "text"; a quick_reply button takes one "payload" parameter$/,
      "template.components.2.parameters.0",
    ],
    [
      "two parameters for a URL button",
      ORDER,
      order({ 3: button("url", "1", text("a"), text("b")) }),
      /\(button 1\): parameter 2 is extra: a url button takes one "text" parameter$/,
      "template.components.3.parameters.1",
    ],
    [
      "a button given twice",
      ORDER,
      [...ORDER.valid, ORDER.valid[3]],
      /\(button 1\): button 1 is given twice \(also template\.components\[3\]\)$/,
      "template.components.6",
    ],
    [
      "a catalog key on a flow button",
      ORDER,
      order({
        5: button("flow", "3", {
          type: "action",
          action: { thumbnail_product_retailer_id: "x" },
        }),
      }),
      /\(button 3\): parameter "action" of a flow button takes "flow_token", "flow_action_data", got "thumbnail_product_retailer_id"$/,
      "template.components.5.parameters.0",
    ],
    [
      "a multi-product button without sections",
      CATALOG,
      [
        CATALOG.valid[0],
        button("mpm", "1", {
          type: "action",
          action: { thumbnail_product_retailer_id: "x" },
        }),
      ],
      /\(button 1\): parameter "action" of a mpm button takes .*\("thumbnail_product_retailer_id", "sections" required\)/,
      "template.components.1.parameters.0",
    ],
  ];
  for (const [what, fixture, components, message, path] of rows) {
    const problems = problemsOf(fixture, components);
    assert.ok(problems.length > 0, `${what}: no problem found`);
    assert.match(problems[0]!.message, message, what);
    assert.equal(problems[0]!.path, path, what);
  }
});

Deno.test("a hand-made template without parameter_format is read as named from its placeholders", () => {
  // A hand-made template (no parameter_format) with named placeholders.
  assert.deepEqual(problemsOf(NAMED, NAMED.valid, undefined), []);
  assert.match(
    problemsOf(NAMED, [body(text("Jessica"))], undefined)[0]!.message,
    /"parameter_name" is missing/,
  );
});
