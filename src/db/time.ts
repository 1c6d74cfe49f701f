// The last answer: a send formats the same instant several times over.
let lastMs = Number.NaN;
let lastText = "";

/** One time format everywhere: ISO 8601 UTC with milliseconds (sorts as text). */
export function toDbTime(date: Date): string {
  const ms = date.getTime();
  if (ms !== lastMs) {
    lastText = date.toISOString(); // throws on an invalid date, as before
    lastMs = ms;
  }
  return lastText;
}

export function addMs(date: Date, ms: number): Date {
  return new Date(date.getTime() + ms);
}
