// A template send checked against what its template takes (template_plan.ts),
// the way Meta checks it: every header and body placeholder filled once
// (positional in order, named by `parameter_name` in any order), the header
// in its format, each button by its index and sub_type with the one parameter
// it takes. Carousel and limited-time-offer components, OTP buttons and
// formats this does not know pass as given: Meta's error comes back on the
// message. Pure; shapes (types, lengths, keys) were checked by the schema.
// Past 300 lines because each of Meta's rules comes with the sentence that
// names the component and the parameter; the walk and its bookkeeping are
// shared by header, body and buttons.
import type {
  ButtonPlan,
  ParameterFormat,
  TemplatePlan,
} from "./template_plan.ts";

/** A parameter as the send gives it (outbound_schema's shape). */
export interface SentParameter {
  type: string;
  parameter_name?: string | undefined;
  [key: string]: unknown;
}

/** A component of `template.components` as the send gives it. */
export interface SentComponent {
  type: string;
  sub_type?: string | undefined;
  index?: string | number | undefined;
  parameters?: readonly SentParameter[] | undefined;
}

/** One mismatch: the path of the send it is at and a sentence naming the component and the parameter. */
export interface ParamProblem {
  path: string;
  message: string;
}

/** Where a problem is: the component (and parameter) of the send and how to call it. */
interface Where {
  /** -1: the component is missing from the send. */
  component: number;
  label: string;
}

const BODY_TYPES = new Set(["text", "currency", "date_time"]);
const HEADER_TEXT_MAX = 60;
/** Meta refuses a template text parameter holding these (error 100 / 132018). */
const BAD_WHITESPACE = /[\n\r\t]| {5,}/;

class Problems {
  readonly list: ParamProblem[] = [];

  add(at: Where, message: string, parameter?: number): void {
    const base = at.component < 0
      ? "template.components"
      : `template.components.${at.component}`;
    const path = parameter === undefined
      ? base
      : `${base}.parameters.${parameter}`;
    const where = at.component < 0
      ? `template.components (${at.label})`
      : parameter === undefined
      ? `template.components[${at.component}] (${at.label})`
      : `template.components[${at.component}].parameters[${parameter}] (${at.label})`;
    this.list.push({ path, message: `${where}: ${message}` });
  }
}

const quote = (names: string[]) => names.map((n) => `"${n}"`).join(", ");

function slotName(name: string, format: ParameterFormat): string {
  return format === "NAMED" ? `"${name}"` : `{{${name}}}`;
}

function missing(names: string[], format: ParameterFormat): string {
  const list = names.map((n) => slotName(n, format)).join(", ");
  return names.length === 1
    ? `parameter ${list} is missing`
    : `parameters ${list} are missing`;
}

/** Text rules Meta applies to a header or body parameter's value. */
function checkText(
  p: Problems,
  at: Where,
  j: number,
  label: () => string,
  param: SentParameter,
  max: number | undefined,
): void {
  if (param.type !== "text" || typeof param.text !== "string") return;
  if (max !== undefined && param.text.length > max) {
    const length = [...param.text].length;
    if (length > max) {
      p.add(
        at,
        `${label()} is ${length} characters long; a header parameter takes at most ${max}`,
        j,
      );
    }
  }
  if (BAD_WHITESPACE.test(param.text)) {
    p.add(
      at,
      `${label()} holds a new line, a tab or more than 4 spaces in a row, which Meta refuses in a template parameter`,
      j,
    );
  }
}

/** The placeholders of a text header or the body, filled by `params`. */
function checkSlots(
  p: Problems,
  at: Where,
  names: string[],
  format: ParameterFormat,
  params: readonly SentParameter[],
  options: { part: "header" | "body"; textMax?: number },
): void {
  // Runs on every template send: messages are built only for a problem.
  const { part } = options;
  const named = format === "NAMED";
  const given = named ? new Set<string>() : undefined;
  let nameGiven = false;
  for (let j = 0; j < params.length; j++) {
    const param = params[j]!;
    const name = param.parameter_name;
    if (named) {
      if (name === undefined) {
        p.add(
          at,
          `"parameter_name" is missing: the template's parameters are named (${
            quote(names)
          })`,
          j,
        );
        continue;
      }
      if (!names.includes(name)) {
        p.add(
          at,
          `parameter "${name}" is not in the template's ${part} (${
            names.length ? `it has ${quote(names)}` : "it has no parameters"
          })`,
          j,
        );
        continue;
      }
      if (given!.has(name)) {
        p.add(at, `parameter "${name}" is given twice`, j);
        continue;
      }
      given!.add(name);
    } else {
      if (name !== undefined) {
        nameGiven = true;
        p.add(
          at,
          `"parameter_name" "${name}" is given, but the template's parameters are positional: give them in order without a name`,
          j,
        );
        continue;
      }
      if (j >= names.length) continue; // counted below
    }
    const label = () =>
      `parameter ${slotName(named ? name! : names[j]!, format)}`;
    if (!BODY_TYPES.has(param.type)) {
      p.add(
        at,
        `${label()} is "${param.type}"; a ${part} parameter is "text", "currency" or "date_time"`,
        j,
      );
      continue;
    }
    checkText(p, at, j, label, param, options.textMax);
  }
  const expects = () =>
    `the template's ${part} expects ${names.length} parameter(s), got ${params.length}`;
  if (named) {
    const left = names.filter((n) => !given!.has(n));
    if (left.length) p.add(at, missing(left, format));
    return;
  }
  if (params.length > names.length) {
    p.add(
      at,
      `parameter ${names.length + 1} is extra: ${expects()}`,
      names.length,
    );
  }
  if (params.length < names.length && !nameGiven) {
    p.add(
      at,
      `${missing(names.slice(params.length), format)}: ${expects()}`,
    );
  }
}

function checkHeader(
  p: Problems,
  plan: TemplatePlan,
  at: Where,
  params: readonly SentParameter[],
): void {
  const h = plan.header;
  switch (h.kind) {
    case "unchecked":
      return;
    case "none":
      if (params.length) {
        p.add(
          at,
          `the template's header takes no parameters, got ${params.length}`,
          0,
        );
      }
      return;
    case "text":
      checkSlots(p, at, h.names, plan.format, params, {
        part: "header",
        textMax: HEADER_TEXT_MAX,
      });
      return;
  }
  const want = h.kind === "media" ? h.format : "location";
  const what = `the template's header is ${want.toUpperCase()}`;
  if (params.length === 0) {
    p.add(at, `parameter "${want}" is missing: ${what}`);
    return;
  }
  if (params.length > 1) {
    p.add(at, `parameter 2 is extra: ${what} and takes one parameter`, 1);
  }
  const param = params[0]!;
  if (param.type !== want) {
    p.add(
      at,
      `parameter is "${param.type}", but ${what}: give one "${want}" parameter`,
      0,
    );
    return;
  }
  const location = param.location as Record<string, unknown> | undefined;
  if (want === "location" && (!location?.name || !location?.address)) {
    p.add(
      at,
      `parameter "location" needs "name" and "address" in a location header`,
      0,
    );
  }
}

const ACTION_KEYS: Record<string, { needs: string[]; allows: string[] }> = {
  flow: { needs: [], allows: ["flow_token", "flow_action_data"] },
  catalog: {
    needs: ["thumbnail_product_retailer_id"],
    allows: ["thumbnail_product_retailer_id"],
  },
  mpm: {
    needs: ["thumbnail_product_retailer_id", "sections"],
    allows: ["thumbnail_product_retailer_id", "sections"],
  },
};

function checkButton(
  p: Problems,
  plan: ButtonPlan,
  at: Where,
  c: SentComponent,
  n: number,
): void {
  if (plan.kind === "unchecked") return;
  if (plan.kind === "static") {
    p.add(
      at,
      `the template's button ${n} is a ${plan.type} button${
        plan.type === "URL" ? " with a fixed url" : ""
      }, which takes no parameters: leave it out`,
    );
    return;
  }
  if (c.sub_type !== plan.subType) {
    p.add(
      at,
      `sub_type "${c.sub_type}" does not match the template's button ${n}, a ${plan.type} button: use sub_type "${plan.subType}"`,
    );
    return;
  }
  const params = c.parameters ?? [];
  const takes =
    `a ${plan.subType} button takes one "${plan.parameter}" parameter`;
  if (params.length === 0) {
    if (plan.required) {
      p.add(at, `parameter "${plan.parameter}" is missing: ${takes}`);
    }
    return;
  }
  if (params.length > 1) p.add(at, `parameter 2 is extra: ${takes}`, 1);
  const param = params[0]!;
  if (param.type !== plan.parameter) {
    p.add(at, `parameter is "${param.type}"; ${takes}`, 0);
    return;
  }
  const keys = ACTION_KEYS[plan.subType];
  if (!keys) return;
  const action = (param.action ?? {}) as Record<string, unknown>;
  const given = Object.keys(action);
  const absent = keys.needs.filter((k) => action[k] === undefined);
  const foreign = given.filter((k) => !keys.allows.includes(k));
  if (absent.length || foreign.length) {
    p.add(
      at,
      `parameter "action" of a ${plan.subType} button takes ${
        keys.allows.length ? quote(keys.allows) : "nothing"
      }${keys.needs.length ? ` (${quote(keys.needs)} required)` : ""}, got ${
        given.length ? quote(given) : "none"
      }`,
      0,
    );
  }
}

function buttonIndex(c: SentComponent): number | undefined {
  const n = typeof c.index === "string" ? Number(c.index) : c.index;
  return typeof n === "number" && Number.isInteger(n) && n >= 0 ? n : undefined;
}

/**
 * The mismatches between a template send's `components` and what its
 * template takes, in the order of the send (then what it leaves out); empty
 * when Meta would find the parameters right.
 */
export function templateSendProblems(
  plan: TemplatePlan,
  components: readonly SentComponent[] | undefined,
): ParamProblem[] {
  const p = new Problems();
  const first = new Map<string, number>();
  (components ?? []).forEach((c, i) => {
    let key: string = c.type;
    let label: string = c.type;
    let n: number | undefined;
    if (c.type === "button") {
      n = buttonIndex(c);
      if (n === undefined) {
        p.add(
          { component: i, label },
          'a button needs "sub_type" and "index" (its position in the template\'s buttons, 0 to 9)',
        );
        return;
      }
      key = `button ${n}`;
      label = `button ${n}`;
    } else if (c.type !== "header" && c.type !== "body") {
      return; // carousel, limited_time_offer: passed through
    }
    const at = { component: i, label };
    const earlier = first.get(key);
    if (earlier !== undefined) {
      p.add(at, `${key} is given twice (also template.components[${earlier}])`);
      return;
    }
    first.set(key, i);
    const params = c.parameters ?? [];
    if (c.type === "header") checkHeader(p, plan, at, params);
    else if (c.type === "body") {
      if (plan.body) {
        checkSlots(p, at, plan.body, plan.format, params, { part: "body" });
      }
    } else {
      const b = plan.buttons[n!];
      if (!b) {
        p.add(
          at,
          `the template has no button at index ${n} (${
            plan.buttons.length
              ? `its buttons are 0 to ${plan.buttons.length - 1}`
              : "it has no buttons"
          })`,
        );
        return;
      }
      checkButton(p, b, at, c, n!);
    }
  });
  checkLeftOut(p, plan, first);
  return p.list;
}

/** What the template needs that the send did not give at all. */
function checkLeftOut(
  p: Problems,
  plan: TemplatePlan,
  given: Map<string, number>,
): void {
  const h = plan.header;
  if (!given.has("header") && h.kind !== "none" && h.kind !== "unchecked") {
    const at = { component: -1, label: "header" };
    if (h.kind === "text") {
      checkSlots(p, at, h.names, plan.format, [], { part: "header" });
    } else {
      const want = h.kind === "media" ? h.format : "location";
      p.add(
        at,
        `parameter "${want}" is missing: the template's header is ${want.toUpperCase()}`,
      );
    }
  }
  if (!given.has("body") && plan.body?.length) {
    const at = { component: -1, label: "body" };
    checkSlots(p, at, plan.body, plan.format, [], { part: "body" });
  }
  plan.buttons.forEach((b, n) => {
    if (b.kind !== "dynamic" || !b.required || given.has(`button ${n}`)) {
      return;
    }
    p.add(
      { component: -1, label: `button ${n}` },
      `parameter "${b.parameter}" is missing: the template's ${b.type} button ${n}${
        b.url ? ` ("${b.url}")` : ""
      } takes one; send it with sub_type "${b.subType}" and index "${n}"`,
    );
  });
}
