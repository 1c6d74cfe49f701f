/**
 * Who gets the free slots of a capped claim: groups (a webhook subscription)
 * belong to owners (its account), and slots go round-robin by owner, then by
 * group within the owner, each within its caps. Pure: queue.ts reads the
 * groups and claims what planClaim() hands out.
 */

/** Between an owner and its group in a group key: `<owner>/<group>`. */
export const OWNER_SEPARATOR = "/";

/** A group key, or null for the jobs without a group (first in the ring). */
export type RingMember = string | null;

export interface GroupLimits {
  /** At most this many running jobs per group. */
  cap: number;
  /** Running jobs per group key. */
  running: ReadonlyMap<string, number>;
  /**
   * At most this many running jobs per owner (see ownerOf), all its groups
   * together; no owner cap without it.
   */
  ownerCap?: number | undefined;
  /**
   * The owner the last claim started with in the ring of owners (see
   * ringOrder; an owner of a key without a separator is the key itself):
   * the next one starts just after it, so no owner starves when a claim has
   * fewer slots than the owners have room.
   */
  after?: RingMember | undefined;
  /** Per owner, the group its last claim started with among the owner's groups. */
  within?: ReadonlyMap<string, string> | undefined;
}

/** The group key of `group` owned by `owner` (neither may contain the separator). */
export function ownedGroupKey(owner: string, group: string): string {
  return `${owner}${OWNER_SEPARATOR}${group}`;
}

/** The owner of a group key: the part before the separator, or the key itself without one. */
export function ownerOf(key: string): string {
  const at = key.indexOf(OWNER_SEPARATOR);
  return at < 0 ? key : key.slice(0, at);
}

/** Sorted `keys` from just after `after` (from the start without it), wrapping around. */
function rotate(keys: readonly string[], after: string | undefined): string[] {
  if (after === undefined) return [...keys];
  return [...keys.filter((k) => k > after), ...keys.filter((k) => k <= after)];
}

/**
 * The members of the ring [null, ...keys in ascending order] in the order a
 * claim visits them: starting just after `after` (from the start without
 * it) and wrapping around. `keys` must be sorted and without null.
 */
export function ringOrder(
  keys: readonly string[],
  after: RingMember | undefined,
): RingMember[] {
  if (after === undefined) return [null, ...keys];
  if (after === null) return [...keys, null];
  return [
    ...keys.filter((k) => k > after),
    null,
    ...keys.filter((k) => k <= after),
  ];
}

/** The distinct values of `items`, sorted. */
function sortedSet(items: Iterable<string>): string[] {
  return [...new Set(items)].sort();
}

/**
 * The `after` for the next claim: the first owner this claim took jobs
 * from, in its visiting order (unchanged when it took none).
 */
export function nextAfter(
  after: RingMember | undefined,
  claimed: Iterable<{ groupKey: string | null }>,
): RingMember | undefined {
  const owners = new Set<RingMember>();
  for (const job of claimed) {
    owners.add(job.groupKey === null ? null : ownerOf(job.groupKey));
  }
  if (owners.size === 0) return after;
  const keys = sortedSet([...owners].filter((m): m is string => m !== null));
  return ringOrder(keys, after).find((m) => owners.has(m));
}

/**
 * Sets in `within`, for each owner this claim took jobs from, the first of
 * its groups it took from in the owner's visiting order.
 */
export function moveWithin(
  within: Map<string, string>,
  claimed: Iterable<{ groupKey: string | null }>,
): void {
  const byOwner = new Map<string, string[]>();
  for (const { groupKey } of claimed) {
    if (groupKey === null) continue;
    const owner = ownerOf(groupKey);
    byOwner.set(owner, [...byOwner.get(owner) ?? [], groupKey]);
  }
  for (const [owner, keys] of byOwner) {
    const first = rotate(sortedSet(keys), within.get(owner))[0]!;
    within.delete(owner); // re-inserted last: the map's order is its age
    within.set(owner, first);
  }
}

/** Running jobs per owner, from the running jobs per group. */
export function runningByOwner(
  running: ReadonlyMap<string, number>,
): Map<string, number> {
  const owners = new Map<string, number>();
  for (const [key, n] of running) {
    const owner = ownerOf(key);
    owners.set(owner, (owners.get(owner) ?? 0) + n);
  }
  return owners;
}

/** The owners at their cap (none without one). */
export function fullOwners(limits: GroupLimits): string[] {
  const cap = limits.ownerCap;
  if (cap === undefined) return [];
  return [...runningByOwner(limits.running)]
    .filter(([, n]) => n >= cap).map(([owner]) => owner);
}

interface OwnerTurn {
  room: number;
  groups: RingMember[];
  next: number;
}

/**
 * How many jobs to ask of each due member, in the order to ask them: up to
 * `limit` slots dealt one at a time, round-robin over the owners (from just
 * after `limits.after`), each owner's slot going to its next group with room
 * (from just after its `within`), no group past `cap - running`, no owner
 * past `ownerCap` minus its running jobs. The jobs without a group (null)
 * are one owner of one group without caps. `due` is sorted, null first.
 */
export function planClaim(
  due: readonly RingMember[],
  limit: number,
  limits: GroupLimits,
): Map<RingMember, number> {
  const plan = new Map<RingMember, number>();
  const owners = new Map<RingMember, RingMember[]>();
  for (const member of due) {
    const owner = member === null ? null : ownerOf(member);
    owners.set(owner, [...owners.get(owner) ?? [], member]);
  }
  const ownerRunning = runningByOwner(limits.running);
  const groupRoom = (m: RingMember) =>
    m === null
      ? Infinity
      : limits.cap - (limits.running.get(m) ?? 0) - (plan.get(m) ?? 0);
  const keys = [...owners.keys()].filter((o): o is string => o !== null)
    .sort();
  const turns: OwnerTurn[] = [];
  for (const owner of ringOrder(keys, limits.after)) {
    const members = owners.get(owner);
    if (members === undefined) continue;
    const room = owner === null || limits.ownerCap === undefined
      ? Infinity
      : limits.ownerCap - (ownerRunning.get(owner) ?? 0);
    const groups = owner === null ? [null] : rotate(
      members as string[],
      limits.within?.get(owner),
    );
    turns.push({
      room,
      groups: groups.filter((g) => groupRoom(g) > 0),
      next: 0,
    });
  }
  let left = limit;
  while (left > 0) {
    let dealt = false;
    for (const turn of turns) {
      if (left === 0) break;
      if (turn.room <= 0 || turn.groups.length === 0) continue;
      const group = turn.groups[turn.next]!;
      plan.set(group, (plan.get(group) ?? 0) + 1);
      turn.room--;
      left--;
      dealt = true;
      if (groupRoom(group) <= 0) turn.groups.splice(turn.next, 1);
      else turn.next++;
      if (turn.next >= turn.groups.length) turn.next = 0;
    }
    if (!dealt) break;
  }
  return plan;
}
