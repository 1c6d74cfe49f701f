import assert from "node:assert/strict";
import {
  applyStatusReport,
  type OutboundStatus,
} from "../../../src/domain/messages/status.ts";

// Each row: reports applied in order from "queued", the statuses after each report, and how many events.
const TABLE: {
  name: string;
  reports: OutboundStatus[];
  final: OutboundStatus;
  events: number;
}[] = [
  {
    name: "in order",
    reports: ["sent", "delivered", "read"],
    final: "read",
    events: 3,
  },
  {
    name: "read before delivered",
    reports: ["sent", "read", "delivered"],
    final: "read",
    events: 2,
  },
  {
    name: "delivered before sent",
    reports: ["delivered", "sent"],
    final: "delivered",
    events: 1,
  },
  {
    name: "duplicates",
    reports: ["sent", "sent", "delivered", "delivered"],
    final: "delivered",
    events: 2,
  },
  {
    name: "failed after delivered",
    reports: ["sent", "delivered", "failed"],
    final: "failed",
    events: 3,
  },
  {
    name: "failed is terminal",
    reports: ["failed", "sent", "delivered", "read"],
    final: "failed",
    events: 1,
  },
  {
    name: "failed twice",
    reports: ["sent", "failed", "failed"],
    final: "failed",
    events: 2,
  },
  {
    name: "failed after read is ignored",
    reports: ["read", "failed"],
    final: "read",
    events: 1,
  },
  {
    name: "queued report changes nothing",
    reports: ["queued"],
    final: "queued",
    events: 0,
  },
  {
    name: "sent after read",
    reports: ["read", "sent", "delivered"],
    final: "read",
    events: 1,
  },
];

for (const row of TABLE) {
  Deno.test(`applyStatusReport() handles ${row.name}`, () => {
    let status: OutboundStatus = "queued";
    let events = 0;
    for (const report of row.reports) {
      const decision = applyStatusReport(status, report);
      if (decision.change) {
        assert.equal(decision.from, status);
        status = decision.to;
        events++;
      }
    }
    assert.equal(status, row.final);
    assert.equal(events, row.events);
  });
}
