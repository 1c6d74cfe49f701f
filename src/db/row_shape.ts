/**
 * A statement whose SQL starts with this returns each row as an array of its
 * column values, in order, on embedded SQLite (sqlite_dialect.ts): node:sqlite
 * builds an object per row otherwise, which for a 12-column row costs about
 * three times as much (the job claim). The libSQL driver ignores the comment
 * and returns objects, so a reader takes either.
 */
export const ROWS_AS_ARRAYS = "/* rows as arrays */ ";
