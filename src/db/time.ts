/** One time format everywhere: ISO 8601 UTC with milliseconds (sorts as text). */
export function toDbTime(date: Date): string {
  return date.toISOString();
}

export function addMs(date: Date, ms: number): Date {
  return new Date(date.getTime() + ms);
}
