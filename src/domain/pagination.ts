import { AppError } from "../errors.ts";

/** Keyset position for cursor lists: the sort timestamp and the id of the last row seen. */
export interface CursorPosition {
  at: string;
  id: string;
}

export interface CursorPage<T> {
  items: T[];
  cursor: string | null;
  hasMore: boolean;
}

export interface PageResult<T> {
  items: T[];
  page: number;
  pageSize: number;
  total: number;
}

export function encodeCursor(position: CursorPosition): string {
  return btoa(JSON.stringify([position.at, position.id]))
    .replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** Decodes an opaque cursor; a tampered or foreign cursor is a VALIDATION_ERROR. */
export function decodeCursor(cursor: string): CursorPosition {
  try {
    const text = atob(cursor.replace(/-/g, "+").replace(/_/g, "/"));
    const value = JSON.parse(text);
    if (
      Array.isArray(value) && value.length === 2 &&
      typeof value[0] === "string" && typeof value[1] === "string" &&
      !Number.isNaN(Date.parse(value[0]))
    ) {
      return { at: value[0], id: value[1] };
    }
  } catch {
    // fall through to the error below
  }
  throw new AppError(
    "VALIDATION_ERROR",
    `Invalid query parameter "cursor": "${cursor}" is not a cursor returned by this list`,
  );
}

/** Builds a page from `limit + 1` fetched rows. */
export function toCursorPage<T>(
  rows: T[],
  limit: number,
  positionOf: (row: T) => CursorPosition,
): CursorPage<T> {
  const hasMore = rows.length > limit;
  const items = hasMore ? rows.slice(0, limit) : rows;
  const last = items.at(-1);
  return {
    items,
    hasMore,
    cursor: hasMore && last ? encodeCursor(positionOf(last)) : null,
  };
}
