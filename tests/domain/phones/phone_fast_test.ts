// toE164's fast path (fastE164) must give libphonenumber's answer wherever it
// answers at all: on tricky spellings, and on every calling code with national
// parts of every length and every leading digit.
import assert from "node:assert/strict";
import {
  getCountries,
  getCountryCallingCode,
  parsePhoneNumberFromString,
} from "libphonenumber-js/max";
import {
  e164MemoSize,
  fastE164,
  libphonenumberE164,
  toE164,
} from "../../../src/domain/phones/phone.ts";

/** toE164 as it was before the fast path: clean, check, libphonenumber. */
function reference(input: string): string | null {
  const text = input.trim().replace(/[\s\-().\/]/g, "");
  if (!/^\+?\d{6,16}$/.test(text)) return null;
  const parsed = parsePhoneNumberFromString(
    text.startsWith("+") ? text : `+${text}`,
  );
  if (!parsed || !parsed.isPossible()) return null;
  return parsed.number;
}

const TRICKY = [
  // Argentine mobiles with and without the 9, with the old 0 and 15.
  "+5491122334455",
  "+541122334455",
  "+54 9 11 2233-4455",
  "5491122334455",
  "+54 9 11 15 2233 4455",
  "+54 11 15 2233 4455",
  "+54 0 11 2233 4455",
  "+54 011 15 2233 4455",
  "+54 9 351 15 123 4567",
  "+54 9 2966 15 12 3456",
  "+549112233445",
  "+54911223344556",
  "+5490112233445",
  "+5415 2233 4455",
  "+5411 1522 3344",
  "+549 11 1522 3344",
  "+54 9 11 15",
  "+54911",
  // Leading zeros, too short, too long, non-digits.
  "+0054 9 11 2233 4455",
  "0054 9 11 2233 4455",
  "+05491122334455",
  "+12345",
  "+123456",
  "+12345678901234567",
  "+1234567890123456",
  "+54 9 11 2233 445a",
  "+54 9 11 2233 4455 ext 12",
  "++5491122334455",
  "+54_9_11_2233_4455",
  "",
  "   ",
  "+",
  // Shared calling codes (NANPA, GB and the islands, RU and KZ) and
  // non-geographic ones.
  "+1 202 555 0143",
  "+1 555 0143",
  "+44 20 7946 0958",
  "+44 7700 900123",
  "+7 912 345 67 89",
  "+7 701 234 56 78",
  "+800 1234 5678",
  "+882 1234 5678",
  "+999 1234 5678",
  // National prefixes elsewhere: Brazil's carrier codes, Mexico's 1, Italy's 0.
  "+55 11 91234 5678",
  "+55 0 15 11 91234 5678",
  "+52 1 55 1234 5678",
  "+52 55 1234 5678",
  "+39 06 1234 5678",
  "+39 333 123 4567",
  "+49 030 1234567",
  "+49 30 1234567",
  "+34 612 345 678",
  "+598 94 123 456",
  "+56 9 6123 4567",
  "+57 3 211 234 567",
  "+51 912 345 678",
];

Deno.test("toE164 answers as libphonenumber did on tricky spellings", () => {
  for (const input of TRICKY) {
    assert.equal(toE164(input), reference(input), JSON.stringify(input));
  }
});

/** A small deterministic generator, so a failure names a reproducible input. */
function digitsFrom(seed: number): (n: number) => string {
  let s = seed >>> 0;
  return (n) => {
    let out = "";
    for (let i = 0; i < n; i++) {
      s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
      out += String(s % 10);
    }
    return out;
  };
}

Deno.test("fastE164 gives libphonenumber's answer on every calling code, length and leading digit", () => {
  const codes = new Set(getCountries().map((c) => getCountryCallingCode(c)));
  const digits = digitsFrom(20261123);
  let answered = 0;
  let checked = 0;
  const answeredCodes = new Set<string>();
  for (const code of codes) {
    for (let total = 6; total <= 16; total++) {
      const length = total - code.length;
      if (length < 1) continue;
      for (let first = 0; first <= 9; first++) {
        for (let k = 0; k < 3; k++) {
          const plus = `+${code}${first}${digits(length - 1)}`;
          checked++;
          const fast = fastE164(plus);
          if (fast === undefined) continue;
          answered++;
          answeredCodes.add(code);
          assert.equal(fast, libphonenumberE164(plus), plus);
        }
      }
    }
  }
  // Not vacuous: the fast path answers most numbers of most calling codes.
  assert.ok(answered > checked / 2, `${answered} of ${checked}`);
  assert.ok(answeredCodes.size > codes.size / 2, `${answeredCodes.size}`);
});

Deno.test("fastE164 answers the common spellings itself and leaves prefixes and shared codes to libphonenumber", () => {
  // Argentine mobiles with the 9 and fixed lines without it: no prefix to strip.
  assert.equal(fastE164("+5491122334455"), "+5491122334455");
  assert.equal(fastE164("+541122334455"), "+541122334455");
  assert.equal(fastE164("+54911223344"), null);
  // A national prefix (0, or an area code and 15) is libphonenumber's to strip.
  assert.equal(fastE164("+5401122334455"), undefined);
  assert.equal(fastE164("+541115223344"), undefined);
  assert.equal(fastE164("+05491122334455"), undefined);
  // Shared (NANPA) and non-geographic calling codes.
  assert.equal(fastE164("+12025550143"), undefined);
  assert.equal(fastE164("+80012345678"), undefined);
});

Deno.test("toE164 answers a repeated number from memory as libphonenumber does, invalid ones included, and the memory stays bounded", () => {
  // Shared calling codes (+1, +7, +44) go to libphonenumber and its memo.
  const inputs = [
    "+1 555 000 1234",
    "+15550001234",
    "+1 (212) 555-0142",
    "+1555",
    "+1 999 999 999 999",
    "+7 912 345 67 89",
    "+7 000",
    "+44 20 7946 0958",
    "+44 0",
    "12125550142",
  ];
  for (let round = 0; round < 3; round++) {
    for (const input of inputs) {
      assert.equal(toE164(input), reference(input), JSON.stringify(input));
    }
  }
  // Past its bound the memory starts over instead of growing.
  const digits = digitsFrom(7);
  for (let i = 0; i < 20_500; i++) {
    const input = `+1${digits(10)}`;
    const answer = toE164(input);
    if (i % 100 === 0) assert.equal(answer, reference(input), input);
    assert.ok(e164MemoSize() <= 20_000, `${e164MemoSize()} answers held`);
  }
  assert.ok(e164MemoSize() < 20_000, "started over once past the bound");
});

Deno.test("toE164 reads each spelling once, fast path or not", () => {
  const before = e164MemoSize();
  // +54 is Argentina's alone (fast path), +1 is shared (libphonenumber).
  const spellings = ["+54 9 11 5555-0142", "+1 (212) 555-0142"];
  for (let i = 0; i < 3; i++) {
    assert.equal(toE164(spellings[0]!), "+5491155550142");
    assert.equal(toE164(spellings[1]!), "+12125550142");
  }
  assert.equal(e164MemoSize() - before, 2);
  // A long spelling is read every time, never held.
  const long = `+54 9 11 ${" ".repeat(30)}5555-0142`;
  assert.equal(toE164(long), "+5491155550142");
  assert.equal(e164MemoSize() - before, 2);
});
