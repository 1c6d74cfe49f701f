import { AppError } from "../../errors.ts";

/** A custom field value: any JSON scalar. */
export type CustomFieldValue = string | number | boolean | null;
export type CustomFields = Record<string, CustomFieldValue>;

export interface Contact {
  id: string;
  accountId: string;
  /** E.164; null when WhatsApp withholds it (a username user). */
  phoneNumber: string | null;
  /** Business-scoped user id (BSUID), exactly as received. */
  userId: string | null;
  parentUserId: string | null;
  /** Not an identity: a user may change it at any time. */
  username: string | null;
  name: string | null;
  email: string | null;
  tags: string[];
  customFields: CustomFields;
  optedIn: boolean;
  lastMessageAt: string | null;
  createdAt: string;
}

/** What a payload or a send says about a person; at least one of phone number and userId. */
export interface Identity {
  accountId: string;
  /** E.164. */
  phoneNumber?: string | null | undefined;
  /** BSUID exactly as received. */
  userId?: string | null | undefined;
  parentUserId?: string | null | undefined;
  username?: string | null | undefined;
  name?: string | null | undefined;
}

/** A contact known only by its identity: opted in, no tags or fields, no message yet. */
export function newContact(
  input: Identity & { id: string; createdAt: string },
): Contact {
  return {
    id: input.id,
    accountId: input.accountId,
    phoneNumber: input.phoneNumber ?? null,
    userId: input.userId ?? null,
    parentUserId: input.parentUserId ?? null,
    username: input.username ?? null,
    name: input.name ?? null,
    email: null,
    tags: [],
    customFields: {},
    optedIn: true,
    lastMessageAt: null,
    createdAt: input.createdAt,
  };
}

/** The Contact of the API and of `contact.created` events. */
export interface ContactView {
  id: string;
  phoneNumber: string | null;
  userId: string | null;
  username: string | null;
  name: string | null;
  email: string | null;
  tags: string[];
  customFields: CustomFields;
  optedIn: boolean;
  lastMessageAt: string | null;
  createdAt: string;
}

export const MAX_TAGS = 50;
export const MAX_TAG_LENGTH = 64;
export const MAX_CUSTOM_FIELDS = 50;
export const MAX_CUSTOM_FIELD_KEY_LENGTH = 64;
export const MAX_CUSTOM_FIELD_VALUE_LENGTH = 1024;
export const MAX_NAME_LENGTH = 256;
export const MAX_EMAIL_LENGTH = 254;

export function contactView(c: Contact): ContactView {
  return {
    id: c.id,
    phoneNumber: c.phoneNumber,
    userId: c.userId,
    username: c.username,
    name: c.name,
    email: c.email,
    tags: c.tags,
    customFields: c.customFields,
    optedIn: c.optedIn,
    lastMessageAt: c.lastMessageAt,
    createdAt: c.createdAt,
  };
}

/**
 * A business-scoped user id (reference §4.7): ISO country code, `.`, an
 * optional `ENT.` (parent BSUID), then up to 128 alphanumerics.
 */
const BSUID_REGEXP = /^[A-Z]{2}\.(?:ENT\.)?[A-Za-z0-9]{1,128}$/;

/** True for a BSUID such as `US.13491208655302741918` or `US.ENT.118...`. */
export function isBsuid(text: string): boolean {
  return BSUID_REGEXP.test(text);
}

/** Trims tags and drops empty ones and repeats, keeping the first spelling's position. */
export function normaliseTags(tags: readonly string[]): string[] {
  const out: string[] = [];
  for (const raw of tags) {
    const tag = raw.trim();
    if (tag && !out.includes(tag)) out.push(tag);
  }
  return out;
}

/** Merges a patch into custom fields; a key set to null is removed. */
export function mergeCustomFields(
  existing: CustomFields,
  patch: CustomFields,
): CustomFields {
  const out: CustomFields = { ...existing };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = value;
  }
  return out;
}

/** Digits of a search term that looks like a phone number (`+`, spaces, dashes, dots and brackets allowed), else null. */
export function phoneSearchDigits(search: string): string | null {
  const text = search.trim().replace(/[\s\-().\/]/g, "");
  const match = /^\+?(\d{3,16})$/.exec(text);
  return match ? match[1]! : null;
}

/** Normalises tags and checks the limits; throws VALIDATION_ERROR naming the problem. */
export function checkTags(tags: readonly string[]): string[] {
  const out = normaliseTags(tags);
  if (out.length > MAX_TAGS) {
    throw new AppError(
      "VALIDATION_ERROR",
      `Invalid tags: at most ${MAX_TAGS} tags are allowed, got ${out.length}`,
    );
  }
  const long = out.find((t) => t.length > MAX_TAG_LENGTH);
  if (long !== undefined) {
    throw new AppError(
      "VALIDATION_ERROR",
      `Invalid tag "${
        long.slice(0, 20)
      }…": tags are at most ${MAX_TAG_LENGTH} characters`,
    );
  }
  return out;
}

/** Checks the custom fields limit after a merge; throws VALIDATION_ERROR. */
export function checkCustomFields(fields: CustomFields): CustomFields {
  const count = Object.keys(fields).length;
  if (count > MAX_CUSTOM_FIELDS) {
    throw new AppError(
      "VALIDATION_ERROR",
      `Invalid customFields: at most ${MAX_CUSTOM_FIELDS} keys are allowed, got ${count}`,
    );
  }
  return fields;
}
