import {
  type CountryCode,
  getCountries,
  getCountryCallingCode,
  Metadata,
  parsePhoneNumberFromString,
} from "libphonenumber-js/max";

const SEPARATORS_REGEXP = /[\s\-().\/]/g;

function clean(input: string): string {
  return input.trim().replace(SEPARATORS_REGEXP, "");
}

/**
 * Answers by the spelling given (a pure function): a send's recipient is
 * read once per spelling, not cleaned, matched and looked up per request.
 * Spellings past MEMO_SPELLING_LENGTH are read each time (the bound on
 * memory is then entries x that length).
 */
const e164Cache = new Map<string, string | null>();
const E164_CACHE_LIMIT = 20_000;
const MEMO_SPELLING_LENGTH = 24;

/** How many answers toE164 holds in memory (at most E164_CACHE_LIMIT); for tests. */
export function e164MemoSize(): number {
  return e164Cache.size;
}

/** Parses a number given with its country code (`+` optional) into E.164, or null. */
export function toE164(input: string): string | null {
  if (input.length > MEMO_SPELLING_LENGTH) return readE164(input);
  let answer = e164Cache.get(input);
  if (answer === undefined) {
    answer = readE164(input);
    if (e164Cache.size >= E164_CACHE_LIMIT) e164Cache.clear();
    e164Cache.set(input, answer);
  }
  return answer;
}

function readE164(input: string): string | null {
  const text = clean(input);
  if (!/^\+?\d{6,16}$/.test(text)) return null;
  const plus = text.startsWith("+") ? text : `+${text}`;
  const fast = fastE164(plus);
  return fast !== undefined ? fast : libphonenumberE164(plus);
}

/** The slow path, and the reference the fast path is tested against: `+` and 6 to 16 digits. */
export function libphonenumberE164(plus: string): string | null {
  const parsed = parsePhoneNumberFromString(plus);
  if (!parsed || !parsed.isPossible()) return null;
  return parsed.number;
}

/**
 * A calling code's plan when one country has it: the national lengths
 * libphonenumber calls possible, and its national-prefix-for-parsing pattern
 * (anchored, as libphonenumber applies it), null when it has none.
 */
interface OneCountryPlan {
  lengths: readonly number[];
  prefix: RegExp | null;
}

/** Calling code -> its plan, or null when several countries share it. */
let plans: Map<string, OneCountryPlan | null> | undefined;

function plansByCallingCode(): Map<string, OneCountryPlan | null> {
  if (plans) return plans;
  const countriesOf = new Map<string, CountryCode[]>();
  for (const country of getCountries()) {
    const code = getCountryCallingCode(country);
    countriesOf.set(code, [...countriesOf.get(code) ?? [], country]);
  }
  plans = new Map();
  for (const [code, countries] of countriesOf) {
    if (countries.length !== 1) {
      plans.set(code, null);
      continue;
    }
    const metadata = new Metadata();
    metadata.selectNumberingPlan(countries[0]!);
    // The accessor libphonenumber's parse uses (untyped in its .d.ts).
    const plan = metadata.numberingPlan as unknown as {
      possibleLengths(): number[];
      nationalPrefixForParsing(): string | undefined;
    };
    const prefix = plan.nationalPrefixForParsing();
    plans.set(code, {
      lengths: plan.possibleLengths(),
      prefix: prefix ? new RegExp(`^(?:${prefix})`) : null,
    });
  }
  return plans;
}

/**
 * libphonenumberE164() without its argument handling, for `+` and 6 to 16
 * digits whose calling code belongs to one country and whose national part
 * starts with no national prefix: libphonenumber then keeps the digits as
 * they are and the answer is whether their length is possible. Undefined
 * when the slow path must decide (a shared or non-geographic calling code,
 * a prefix to strip, a leading 0). Checked against libphonenumber in
 * tests/domain/phones/phone_fast_test.ts.
 */
export function fastE164(plus: string): string | null | undefined {
  if (plus[1] === "0") return undefined;
  const byCode = plansByCallingCode();
  // Calling codes are 1 to 3 digits and none is a prefix of another.
  for (let end = 2; end <= 4; end++) {
    const plan = byCode.get(plus.slice(1, end));
    if (plan === undefined) continue;
    if (plan === null) return undefined;
    const national = plus.slice(end);
    const prefix = plan.prefix?.exec(national);
    if (prefix && prefix[0] !== "") return undefined;
    return plan.lengths.includes(national.length) ? plus : null;
  }
  return undefined;
}

/**
 * Every E.164 form a loosely written number may stand for: leading `+`
 * optional, bare national digits get the account's country, the old
 * Argentine `15` is dropped, and Argentine mobiles match with and without
 * the `9`. Ordered by likelihood; empty when nothing parses.
 */
export function phoneVariants(input: string, defaultCountry: string): string[] {
  const text = clean(input);
  if (!/^\+?\d{4,17}$/.test(text)) return [];
  const found: string[] = [];
  const add = (e164: string | undefined) => {
    if (e164 && !found.includes(e164)) found.push(e164);
  };
  const international = parsePhoneNumberFromString(
    text.startsWith("+") ? text : `+${text}`,
  );
  // Without `+` the digits are a guess: only a valid international reading counts.
  if (
    international &&
    (text.startsWith("+")
      ? international.isPossible()
      : international.isValid())
  ) add(international.number);
  if (!text.startsWith("+")) {
    const national = parsePhoneNumberFromString(
      text,
      defaultCountry.toUpperCase() as CountryCode,
    );
    if (national?.isPossible()) add(national.number);
  }
  if (found.length === 0) add(withoutMobileNine(text, defaultCountry));
  for (const e164 of [...found]) {
    for (const v of argentineVariants(e164)) add(v);
  }
  return found;
}

/**
 * `+54 9 11 15 2233 4455` carries both the mobile `9` and the old `15`.
 * libphonenumber drops a `15` after the area code (its Argentine metadata
 * knows the 2 to 4 digit area codes) and puts the `9` back, but only when
 * no `9` comes before the area code; so read the number again without it.
 * Kept only when that reading is a mobile (+549...): a `15` was dropped.
 */
function withoutMobileNine(
  text: string,
  defaultCountry: string,
): string | undefined {
  const digits = text.replace(/^\+/, "");
  const parsed = digits.startsWith("549")
    ? parsePhoneNumberFromString(`+54${digits.slice(3)}`)
    : !text.startsWith("+") && defaultCountry.toUpperCase() === "AR" &&
        digits.startsWith("9")
    ? parsePhoneNumberFromString(digits.slice(1), "AR")
    : undefined;
  if (!parsed?.isPossible() || !parsed.number.startsWith("+549")) {
    return undefined;
  }
  return parsed.number;
}

/** `+54 9 AREA NUMBER` (mobile) and `+54 AREA NUMBER` are the same WhatsApp user. */
export function argentineVariants(e164: string): string[] {
  if (!e164.startsWith("+54")) return [];
  const rest = e164.slice(3);
  if (rest.startsWith("9") && rest.length === 11) {
    return [`+54${rest.slice(1)}`];
  }
  if (!rest.startsWith("9") && rest.length === 10) return [`+549${rest}`];
  return [];
}

/** The number in every spelling it may be stored under (for exact lookups). */
export function samePhoneVariants(e164: string): string[] {
  return [e164, ...argentineVariants(e164)];
}
