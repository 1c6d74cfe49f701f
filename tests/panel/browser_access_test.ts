// The inbox panel in Chromium (issue 29), one server and one browser for the
// file: assign and resolve, the resolve URL (302, chooser, empty), an
// `assigned` agent who sees and can act on nothing else, the keyboard, and
// axe on every screen in light and dark.
import assert from "node:assert/strict";
import AxeBuilder from "@axe-core/playwright";
import type { Page } from "playwright-core";
import {
  browserTest,
  launchBrowser,
  signIn,
  startPanelServer,
  waitFor,
  watchedPage,
} from "./_browser.ts";

const ANA = "+5491122334455";
const BRUNO = "+5491133445566";
const CARLA = "+5491144556677";

/** axe's serious and critical violations of the page as it is now. */
async function seriousViolations(page: Page, label: string) {
  const result = await new AxeBuilder({ page }).analyze();
  return result.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) =>
      `${label}: ${v.id} (${v.impact}) ${
        v.nodes.map((n) => n.target.join(" ")).join(", ")
      }`
    );
}

browserTest(
  "agents work on what they see, with the keyboard, and every screen passes axe in light and dark",
  async (t) => {
    await using server = await startPanelServer();
    const all = await server.agent("Alba");
    const assigned = await server.agent("Beto", "assigned");
    for (
      const [from, name] of [[ANA, "Ana"], [BRUNO, "Bruno"], [CARLA, "Carla"]]
    ) {
      await server.inbound({
        from,
        name,
        type: "text",
        text: { body: `Hola, soy ${name}` },
      });
    }
    const conversations = await waitFor(async () => {
      const res = await server.h.request("GET", "/api/v2/conversations");
      return res.body.data.length === 3 ? res.body.data : undefined;
    }, { what: "three conversations" });
    const idOf = (phone: string) =>
      conversations.find((c: { contact: { phoneNumber: string } }) =>
        c.contact.phoneNumber === phone
      ).id as string;
    // Ana's conversation is Beto's; the others nobody's.
    await server.h.request("PATCH", `/api/v2/conversations/${idOf(ANA)}`, {
      body: { assignedTo: assigned.id },
    });
    const browser = await launchBrowser();
    try {
      const context = await browser.newContext({
        viewport: { width: 1280, height: 800 },
        locale: "en-US",
      });
      const { page, problems } = await watchedPage(context, server.baseUrl);
      await signIn(page, await server.loginUrl(all));

      await t.step("assign and resolve", async () => {
        await page.getByRole("link", { name: /Bruno/ }).click();
        await page.getByRole("combobox", { name: "Assign" }).selectOption({
          label: "Me (Alba)",
        });
        await page.getByRole("combobox", { name: "Status", exact: true })
          .selectOption(
            "resolved",
          );
        await waitFor(async () => {
          const c = (await server.h.request(
            "GET",
            `/api/v2/conversations/${idOf(BRUNO)}`,
          )).body.data;
          return c.assignedTo === all.id && c.status === "resolved";
        }, { what: "Bruno's conversation assigned and resolved" });
        // The list's filters follow: resolved and mine.
        await page.getByRole("button", { name: "Mine" }).click();
        const rows = page.getByRole("list", { name: "Conversations" })
          .getByRole("link");
        await waitFor(async () => await rows.count() === 1, { what: "mine" });
        await page.getByRole("button", { name: "Mine" }).click();
        await waitFor(async () => await rows.count() === 3, { what: "all" });
      });

      await t.step(
        "the resolve URL goes to the one match, offers a choice, or says none matched",
        async () => {
          await page.goto(
            `${server.baseUrl}/panel/conversations/resolve?phone=${
              encodeURIComponent(CARLA)
            }`,
          );
          await page.waitForURL(`${server.baseUrl}/panel/c/${idOf(CARLA)}`);
          await page.getByRole("heading", { name: "Carla" }).waitFor();
          // Two contacts share an e-mail: a chooser.
          for (const phone of [BRUNO, CARLA]) {
            const c = conversations.find((
              x: { contact: { phoneNumber: string } },
            ) => x.contact.phoneNumber === phone);
            await server.h.request("PATCH", `/api/v2/contacts/${c.contactId}`, {
              body: { email: "family@example.com" },
            });
          }
          await page.goto(
            `${server.baseUrl}/panel/conversations/resolve?email=family%40example.com`,
          );
          await page.getByText("Several conversations match").waitFor();
          assert.equal(
            await page.locator(".choices").getByRole("link").count(),
            2,
          );
          for (
            const [scheme, label] of [["light", "chooser"], [
              "dark",
              "chooser dark",
            ]] as const
          ) {
            await page.emulateMedia({ colorScheme: scheme });
            assert.deepEqual(await seriousViolations(page, label), []);
          }
          await page.emulateMedia({ colorScheme: "light" });
          await page.goto(
            `${server.baseUrl}/panel/conversations/resolve?phone=%2B5491199990000`,
          );
          await page.getByText("No conversation matches").waitFor();
        },
      );

      await t.step(
        "the keyboard reaches everything: j/k, r, t, /, ? and Esc",
        async () => {
          await page.goto(`${server.baseUrl}/panel`);
          await page.getByRole("list", { name: "Conversations" }).getByRole(
            "link",
          )
            .first().waitFor();
          await page.keyboard.press("j");
          await page.waitForURL(/\/panel\/c\//);
          const first = page.url();
          await page.keyboard.press("j");
          await waitFor(() => page.url() !== first, { what: "the next one" });
          await page.keyboard.press("k");
          await waitFor(() => page.url() === first, {
            what: "back to the first",
          });
          await waitFor(
            () => page.getByRole("textbox", { name: "Message" }).isEnabled(),
            { what: "the composer" },
          );
          await page.keyboard.press("r");
          assert.equal(
            await page.evaluate("document.activeElement.id"),
            "composer-text",
          );
          await page.keyboard.press("Escape"); // leaves the textbox
          await page.keyboard.press("/");
          assert.equal(
            await page.evaluate("document.activeElement.id"),
            "search",
          );
          await page.keyboard.press("Escape");
          await page.keyboard.press("?");
          const help = page.getByRole("dialog", { name: "Keyboard shortcuts" });
          await help.waitFor();
          await page.keyboard.press("Escape");
          await help.waitFor({ state: "hidden" });
          await page.keyboard.press("t");
          const templates = page.getByRole("dialog", { name: "Templates" });
          await templates.waitFor();
          await page.keyboard.press("Escape");
          await templates.waitFor({ state: "hidden" });
          // Tab alone gets to the conversations and the composer.
          await page.keyboard.press("Escape");
          await page.waitForURL(/\/panel$/);
          let reached = false;
          for (let i = 0; i < 20 && !reached; i++) {
            await page.keyboard.press("Tab");
            reached = await page.evaluate(
              "!!document.activeElement.closest('[data-conversation]')",
            ) as boolean;
          }
          assert.ok(reached, "a conversation row is reachable by Tab");
          await page.keyboard.press("Enter");
          await page.waitForURL(/\/panel\/c\//);
        },
      );

      await t.step(
        "axe finds no serious or critical violation on any screen, light and dark",
        async () => {
          const found: string[] = [];
          const screens: [string, () => Promise<void>][] = [
            ["list", async () => {
              await page.goto(`${server.baseUrl}/panel`);
              await page.getByRole("list", { name: "Conversations" }).getByRole(
                "link",
              ).first().waitFor();
            }],
            ["conversation", async () => {
              await page.goto(`${server.baseUrl}/panel/c/${idOf(CARLA)}`);
              await page.getByRole("textbox", { name: "Message" }).waitFor();
            }],
            ["reaction menu", async () => {
              await page.getByRole("button", { name: "React" }).first().click();
              await page.getByRole("button", { name: "React with 👍" }).first()
                .waitFor();
            }],
            ["template dialog", async () => {
              await page.getByRole("button", { name: "Template" }).click();
              await page.getByRole("radio", { name: /order_update/ }).check();
              await page.getByRole("button", { name: "Send template" }).click();
            }],
            ["media header", async () => {
              await page.getByRole("radio", { name: /promo_foto/ }).check();
              await page.getByLabel("Or upload a file").waitFor();
              await page.getByRole("button", { name: "Send template" }).click();
            }],
            ["help", async () => {
              await page.goto(`${server.baseUrl}/panel`);
              await page.getByRole("button", { name: "Keyboard shortcuts" })
                .click();
            }],
          ];
          for (const scheme of ["light", "dark"] as const) {
            await page.emulateMedia({ colorScheme: scheme });
            for (const [name, open] of screens) {
              await open();
              found.push(
                ...await seriousViolations(page, `${name} (${scheme})`),
              );
            }
            // The pages without a session: how to sign in, the Sign in button.
            const anonymous = await browser.newContext({ colorScheme: scheme });
            const { page: p, problems: anonymousProblems } = await watchedPage(
              anonymous,
              server.baseUrl,
            );
            await p.goto(`${server.baseUrl}/panel`);
            found.push(
              ...await seriousViolations(p, `sign-in help (${scheme})`),
            );
            await p.goto(await server.loginUrl(all));
            found.push(...await seriousViolations(p, `login (${scheme})`));
            assert.deepEqual(anonymousProblems, []);
            await anonymous.close();
          }
          await page.emulateMedia({ colorScheme: "light" });
          assert.deepEqual(found, []);
        },
      );

      await t.step(
        "an assigned agent sees and can act on nothing else, in the panel and the API",
        async () => {
          const other = await browser.newContext({
            viewport: { width: 1280, height: 800 },
          });
          const { page: p, problems: theirs } = await watchedPage(
            other,
            server.baseUrl,
          );
          await signIn(p, await server.loginUrl(assigned));
          const rows = p.getByRole("list", { name: "Conversations" })
            .getByRole("link");
          await waitFor(async () => await rows.count() === 1, {
            what: "one row",
          });
          assert.match(await rows.first().textContent() ?? "", /Ana/);
          // A new message in someone else's conversation never shows.
          await server.inbound({
            from: CARLA,
            name: "Carla",
            type: "text",
            text: { body: "No es para Beto" },
          });
          await server.inbound({
            from: ANA,
            name: "Ana",
            type: "text",
            text: { body: "Sí es para Beto" },
          });
          await rows.first().getByText("Sí es para Beto").waitFor();
          assert.equal(await p.getByText("No es para Beto").count(), 0);
          assert.equal(await rows.count(), 1);
          // The API says the same, with the session's cookie.
          const cookie = (await other.cookies()).map((c) =>
            `${c.name}=${c.value}`
          )
            .join("; ");
          const as = (method: string, path: string, body?: unknown) =>
            server.h.request(method, path, {
              key: null,
              headers: { cookie, "sec-fetch-site": "same-origin" },
              ...(body ? { body } : {}),
            });
          assert.equal(
            (await as("GET", `/api/v2/conversations/${idOf(CARLA)}`)).status,
            404,
          );
          assert.equal(
            (await as("PATCH", `/api/v2/conversations/${idOf(CARLA)}`, {
              status: "closed",
            })).status,
            404,
          );
          assert.equal(
            (await as("POST", "/api/v2/messages", {
              phoneNumberId: server.h.tenant.channel.id,
              to: CARLA,
              type: "text",
              text: { body: "x" },
            })).status,
            404,
          );
          assert.equal(
            (await as("PATCH", `/api/v2/conversations/${idOf(ANA)}`, {
              assignedTo: all.id,
            })).status,
            403,
          );
          const list = await as("GET", "/api/v1/conversations");
          assert.deepEqual(list.body.data.map((c: { id: string }) => c.id), [
            idOf(ANA),
          ]);
          assert.deepEqual(theirs, []);
          await other.close();
        },
      );

      assert.deepEqual(problems, []);
    } finally {
      await browser.close();
    }
  },
);
