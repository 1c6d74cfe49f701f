// The inbox panel in Chromium (issue 29), one server and one browser for the
// whole file: sign in, live messages, ticks, media, drafts, a restart with
// nothing missed or doubled, one stream per browser, the phone layout, and
// the closed window with a template sent. Every page fails the test on a
// console error, a CSP violation or a request off the origin.
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
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
/** A 1x1 PNG. */
const PIXEL =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

function bubbles(page: Page, text: string) {
  return page.locator("[role=log] article", { hasText: text });
}

browserTest("the inbox works end to end in Chromium", async (t) => {
  await using server = await startPanelServer();
  const agent = await server.agent("Ana Agent");
  await server.inbound({
    from: ANA,
    name: "Ana Gómez",
    type: "text",
    text: { body: "Hola, ¿tienen stock?" },
  });
  await server.inbound({
    from: BRUNO,
    name: "Bruno",
    type: "text",
    text: { body: "Buenas" },
  });
  await waitFor(
    async () =>
      (await server.h.request("GET", "/api/v2/conversations")).body.data
        .length === 2,
    { what: "the two conversations" },
  );
  const browser = await launchBrowser();
  const context = await browser.newContext({
    viewport: { width: 1280, height: 800 },
    locale: "en-US",
  });
  const { page, problems } = await watchedPage(context, server.baseUrl);
  try {
    await t.step("an agent signs in with a login link", async () => {
      await signIn(page, await server.loginUrl(agent));
      const cookies = await context.cookies();
      const session = cookies.find((c) => c.name === "bm_session")!;
      assert.ok(session.httpOnly);
      assert.equal(session.sameSite, "Lax");
      assert.equal(session.path, "/");
      // Nothing of the session is readable by script.
      assert.equal(await page.evaluate("document.cookie"), "");
      const rows = page.getByRole("list", { name: "Conversations" })
        .getByRole("link");
      await waitFor(async () => await rows.count() === 2, { what: "2 rows" });
      await page.getByText("Live").waitFor();
    });

    await t.step(
      "a customer's message appears in the list and the open conversation without reload, within 1 s",
      async () => {
        await page.getByRole("link", { name: /Ana Gómez/ }).click();
        await bubbles(page, "Hola, ¿tienen stock?").waitFor();
        const posted = performance.now();
        await server.inbound({
          from: ANA,
          name: "Ana Gómez",
          type: "text",
          text: { body: "¿Y en talle M?" },
        });
        await bubbles(page, "¿Y en talle M?").waitFor({ timeout: 5_000 });
        const ms = performance.now() - posted;
        assert.ok(ms <= 1_000, `visible after ${Math.round(ms)} ms`);
        await page.getByRole("link", { name: /Ana Gómez/ })
          .getByText("¿Y en talle M?").waitFor();
        // And into a conversation not open: its row moves and counts it unread.
        await server.inbound({
          from: BRUNO,
          name: "Bruno",
          type: "text",
          text: { body: "¿Abren el sábado?" },
        });
        const bruno = page.getByRole("link", { name: /Bruno/ });
        await bruno.getByText("¿Abren el sábado?").waitFor();
        await bruno.getByLabel("2 unread").waitFor();
      },
    );

    await t.step(
      "a reply goes out with an Idempotency-Key and its ticks move to read",
      async () => {
        const keys: string[] = [];
        page.on("request", (r) => {
          if (r.method() === "POST" && r.url().endsWith("/api/v2/messages")) {
            keys.push(r.headers()["idempotency-key"] ?? "");
          }
        });
        await page.getByRole("textbox", { name: "Message" }).fill(
          "Sí, tenemos en *M*",
        );
        await page.getByRole("button", { name: "Send" }).click();
        const reply = bubbles(page, "Sí, tenemos en M");
        await reply.waitFor();
        await reply.getByRole("img", { name: "Read" }).waitFor({
          timeout: 10_000,
        });
        assert.equal(await reply.count(), 1, "the reply shows once");
        assert.equal(keys.length, 1);
        assert.match(keys[0]!, /^[0-9a-f-]{36}$/);
        // Bold as a DOM node, never HTML.
        assert.equal(await reply.locator("strong").textContent(), "M");
        const sent = (await server.h.request(
          "GET",
          `/api/v2/messages/${await reply.getAttribute("data-message")}`,
        )).body.data;
        assert.equal(sent.origin, "panel");
        assert.equal(sent.agentId, agent.id);
      },
    );

    await t.step(
      "a send the network lost survives a reload and goes out once, with its key",
      async () => {
        const conversation = page.url().split("/").pop()!;
        const posts: { key: string; reached: boolean }[] = [];
        const sentWith = async (text: string) =>
          (await server.h.request(
            "GET",
            `/api/v1/conversations/${conversation}/messages?limit=100`,
          )).body.data.filter((m: { content: { text?: string } }) =>
            m.content.text === text
          );
        // First: the post never reaches the server. Then: it reaches it,
        // and the answer is lost on the way back.
        for (const reached of [false, true]) {
          const text = reached ? "Respuesta perdida" : "Sin red";
          const { promise: lost, resolve } = Promise.withResolvers<void>();
          await page.route("**/api/v2/messages", async (route) => {
            posts.push({
              key: route.request().headers()["idempotency-key"] ?? "",
              reached,
            });
            if (reached) await route.fetch();
            await route.abort("failed");
            resolve();
          });
          await page.getByRole("textbox", { name: "Message" }).fill(text);
          await page.getByRole("button", { name: "Send" }).click();
          const bubble = bubbles(page, text);
          if (!reached) {
            await bubble.getByRole("img", {
              name: "Not sent yet: will retry",
            }).waitFor();
            assert.deepEqual(await sentWith(text), []);
          } else {
            await waitFor(async () => (await sentWith(text)).length === 1, {
              what: "the send stored although its answer was lost",
            });
          }
          await lost; // the page saw the failure: the route is done with
          await page.unroute("**/api/v2/messages");
          await page.waitForTimeout(200); // the outbox's IndexedDB write
          await page.reload();
          const after = bubbles(page, text);
          await after.getByRole("img", { name: "Read" }).waitFor({
            timeout: 10_000,
          });
          assert.equal(await after.count(), 1, `"${text}" shows once`);
          const stored = await sentWith(text);
          assert.equal(stored.length, 1, `"${text}" sent once`);
          assert.equal(stored[0].clientRef, posts.at(-1)!.key);
        }
        // Every post of one send carried its key (the retry after the
        // reload went through the server, not the routes above).
        assert.equal(posts.length, 2);
        assert.notEqual(posts[0]!.key, posts[1]!.key);
        // The retried posts leave nothing behind to post a third time.
        await page.reload();
        await bubbles(page, "Sin red").waitFor();
        assert.equal(await bubbles(page, "Sin red").count(), 1);
        // The aborted posts are the only failures Chromium may report.
        for (let i = problems.length - 1; i >= 0; i--) {
          if (/net::ERR_FAILED/.test(problems[i]!)) problems.splice(i, 1);
        }
      },
    );

    await t.step(
      "quoted replies and reactions show both ways; the agent reacts and takes it back",
      async () => {
        const conversation = page.url().split("/").pop()!;
        const messages = async () =>
          (await server.h.request(
            "GET",
            `/api/v1/conversations/${conversation}/messages?limit=100`,
          )).body.data as {
            id: string;
            type: string;
            direction: string;
            waMessageId: string | null;
            origin?: string;
            content: Record<string, unknown>;
          }[];
        const ours = (await messages()).find((m) =>
          m.content.text === "Sí, tenemos en *M*"
        )!;
        const theirs = (await messages()).find((m) =>
          m.content.text === "¿Y en talle M?"
        )!;
        // The customer quotes our reply: the quote reads as text, no markers.
        await server.inbound({
          from: ANA,
          name: "Ana Gómez",
          type: "text",
          text: { body: "¿Y en L también?" },
          context: {
            from: server.h.tenant.channel.phoneNumber.replace("+", ""),
            id: ours.waMessageId,
          },
        });
        const quoting = bubbles(page, "¿Y en L también?");
        await quoting.waitFor();
        assert.equal(
          (await quoting.locator("blockquote").textContent())?.trim(),
          "Reply to:Sí, tenemos en M",
        );
        // The customer reacts to our reply; it shows on the reply.
        await server.inbound({
          from: ANA,
          name: "Ana Gómez",
          type: "reaction",
          reaction: { message_id: ours.waMessageId, emoji: "👍" },
        });
        const reply = page.locator(`[data-message="${ours.id}"]`);
        await reply.getByTitle("The customer's reaction").getByText("👍")
          .waitFor();
        // Our messages offer no "React"; the customer's do.
        assert.equal(
          await reply.getByRole("button", { name: "React" }).count(),
          0,
        );
        const customer = page.locator(`[data-message="${theirs.id}"]`);
        await customer.getByRole("button", { name: "React" }).click();
        await customer.getByRole("button", { name: "React with ❤️" }).click();
        const mine = customer.getByTitle("Your reaction");
        await mine.getByText("❤️").waitFor();
        await waitFor(
          async () =>
            (await messages()).some((m) =>
              m.type === "reaction" && m.direction === "outbound" &&
              m.content.message_id === theirs.waMessageId &&
              m.content.emoji === "❤️" && m.origin === "panel"
            ),
          { what: "the reaction stored as the agent's" },
        );
        // Chosen again, it is taken back (an empty emoji, as Meta's). A
        // second later on the server's clock: two messages of one
        // millisecond have no order between them, and after a reload the
        // thread must show the removal last.
        server.clock.advance(1_000);
        await customer.getByRole("button", { name: "React" }).click();
        const pressed = customer.getByRole("button", { name: "React with ❤️" });
        assert.equal(await pressed.getAttribute("aria-pressed"), "true");
        await pressed.click();
        await mine.waitFor({ state: "detached" });
        await waitFor(
          async () =>
            (await messages()).some((m) =>
              m.type === "reaction" && m.direction === "outbound" &&
              m.content.message_id === theirs.waMessageId &&
              m.content.emoji === ""
            ),
          { what: "the reaction taken back" },
        );
        // Reactions are not bubbles of their own.
        assert.equal(await bubbles(page, "❤️").count(), 0);
        // Read again from the server, the thread still shows it taken back.
        await page.reload();
        await page.locator(`[data-message="${theirs.id}"]`).waitFor();
        await reply.getByTitle("The customer's reaction").waitFor();
        assert.equal(await mine.count(), 0);
      },
    );

    await t.step(
      "media shows its states: downloading, then a same-origin preview",
      async () => {
        await server.inbound({
          from: ANA,
          name: "Ana Gómez",
          type: "image",
          image: { mimeType: "image/png", dataBase64: PIXEL, caption: "foto" },
        });
        const image = page.locator("[role=log] img[alt=foto]");
        await image.waitFor({ timeout: 10_000 });
        assert.match(
          await image.getAttribute("src") ?? "",
          /^\/panel\/media\//,
        );
        await waitFor(
          () =>
            image.evaluate((img) =>
              (img as unknown as { naturalWidth: number }).naturalWidth === 1
            ),
          { what: "the image to load" },
        );
      },
    );

    await t.step(
      "a draft survives a reload and stays with its conversation",
      async () => {
        const box = page.getByRole("textbox", { name: "Message" });
        await box.fill("Borrador para Ana");
        await page.waitForTimeout(300); // IndexedDB write
        await page.reload();
        await waitFor(
          async () =>
            await page.getByRole("textbox", { name: "Message" })
              .inputValue() ===
              "Borrador para Ana",
          { what: "the draft after reload" },
        );
        await page.getByRole("link", { name: /Bruno/ }).click();
        await bubbles(page, "¿Abren el sábado?").waitFor();
        assert.equal(
          await page.getByRole("textbox", { name: "Message" }).inputValue(),
          "",
          "the draft does not follow the agent",
        );
        await page.getByRole("link", { name: /Ana Gómez/ }).click();
        await bubbles(page, "Hola, ¿tienen stock?").waitFor();
        await waitFor(
          async () =>
            await page.getByRole("textbox", { name: "Message" })
              .inputValue() ===
              "Borrador para Ana",
          { what: "the draft back with Ana" },
        );
      },
    );

    await t.step("tabs share one event stream", async () => {
      const second = await context.newPage();
      await second.goto(`${server.baseUrl}/panel`);
      await second.getByRole("list", { name: "Conversations" }).waitFor();
      await second.getByText("Live").waitFor();
      assert.equal(server.h.container.streams.size, 1);
      await server.inbound({
        from: BRUNO,
        name: "Bruno",
        type: "text",
        text: { body: "Para las dos pestañas" },
      });
      await second.getByRole("link", { name: /Bruno/ })
        .getByText("Para las dos pestañas").waitFor();
      await page.getByRole("link", { name: /Bruno/ })
        .getByText("Para las dos pestañas").waitFor();
      await second.close();
    });

    await t.step(
      "the server restarts mid-session: nothing missed, nothing twice",
      async () => {
        await page.getByRole("link", { name: /Bruno/ }).click();
        await bubbles(page, "Para las dos pestañas").waitFor();
        await server.restart();
        // Written one after the other (each stored before the next), while
        // the page is still reconnecting.
        const conversation = await page.url().split("/").pop()!;
        for (let i = 1; i <= 3; i++) {
          await server.inbound({
            from: BRUNO,
            name: "Bruno",
            type: "text",
            text: { body: `Tras el reinicio ${i}` },
          });
          await waitFor(async () => {
            const res = await server.h.request(
              "GET",
              `/api/v1/conversations/${conversation}/messages`,
            );
            return res.body.data.some((m: { content: { text?: string } }) =>
              m.content.text === `Tras el reinicio ${i}`
            );
          }, { what: `message ${i} stored` });
          server.clock.advance(1_000);
        }
        for (let i = 1; i <= 3; i++) {
          await bubbles(page, `Tras el reinicio ${i}`).waitFor({
            timeout: 15_000,
          });
        }
        await page.getByText("Live").waitFor();
        for (let i = 1; i <= 3; i++) {
          assert.equal(await bubbles(page, `Tras el reinicio ${i}`).count(), 1);
        }
        const texts = await page.locator("[role=log] article .text")
          .allTextContents();
        assert.deepEqual(
          texts.filter((x) => x.startsWith("Tras el reinicio")),
          ["Tras el reinicio 1", "Tras el reinicio 2", "Tras el reinicio 3"],
        );
      },
    );

    await t.step(
      "the phone layout shows one pane at a time and the back gesture works",
      async () => {
        const phone = await browser.newContext({
          viewport: { width: 390, height: 844 },
          isMobile: true,
          hasTouch: true,
        });
        await phone.addCookies(await context.cookies());
        const { page: p, problems: phoneProblems } = await watchedPage(
          phone,
          server.baseUrl,
        );
        await p.goto(`${server.baseUrl}/panel`);
        const list = p.getByRole("list", { name: "Conversations" });
        await list.waitFor();
        await p.screenshot({ path: "docs/panel-phone.png" });
        await p.getByRole("link", { name: /Ana Gómez/ }).click();
        await p.getByRole("textbox", { name: "Message" }).waitFor();
        assert.equal(await list.isVisible(), false, "one pane at a time");
        await p.screenshot({ path: "docs/panel-phone-conversation.png" });
        await p.goBack();
        await list.waitFor({ state: "visible" });
        assert.equal(
          await p.getByRole("textbox", { name: "Message" }).count(),
          0,
        );
        assert.deepEqual(phoneProblems, []);
        await phone.close();
      },
    );

    await t.step(
      "the closed window blocks free text; a template with parameters is sent",
      async () => {
        await page.setViewportSize({ width: 1280, height: 800 });
        await page.getByRole("link", { name: /Ana Gómez/ }).click();
        await page.getByRole("textbox", { name: "Message" }).fill("");
        await page.screenshot({ path: "docs/panel-desktop.png" });
        // 25 hours later, on the server's clock and the page's; the agent
        // keeps working meanwhile (a session ends after 12 idle hours).
        for (const hours of [11, 11, 3]) {
          server.clock.advance(hours * 3600_000);
          assert.equal(
            await page.evaluate(async () =>
              (await fetch("/api/v2/account")).status
            ),
            200,
          );
        }
        await page.clock.install();
        await page.reload(); // every timer of the page on the installed clock
        await page.getByRole("textbox", { name: "Message" }).waitFor();
        await page.clock.fastForward("25:00:00");
        const box = page.getByRole("textbox", { name: "Message" });
        await page.getByText("The 24-hour window is closed").waitFor();
        await waitFor(() => box.isDisabled(), { what: "the textbox disabled" });
        assert.equal(
          await page.getByRole("button", { name: "Send", exact: true })
            .isDisabled(),
          true,
        );
        // The server refuses free text too, whatever the page does.
        const cookie = (await context.cookies()).map((c) =>
          `${c.name}=${c.value}`
        ).join("; ");
        const refused = await server.h.request("POST", "/api/v2/messages", {
          key: null,
          headers: { cookie, "sec-fetch-site": "same-origin" },
          body: {
            phoneNumberId: server.h.tenant.channel.id,
            to: ANA,
            type: "text",
            text: { body: "late" },
          },
        });
        assert.equal(refused.status, 422);
        assert.equal(refused.body.error.code, "SERVICE_WINDOW_EXPIRED");

        await page.getByRole("button", { name: "Template" }).click();
        const dialog = page.getByRole("dialog", { name: "Templates" });
        await dialog.getByRole("searchbox", { name: "Search templates" }).fill(
          "order",
        );
        await dialog.getByRole("radio", { name: /order_update/ }).check();
        // Validated before sending: every parameter.
        await dialog.getByRole("button", { name: "Send template" }).click();
        await dialog.getByRole("alert").getByText("Fill in every parameter")
          .waitFor();
        await dialog.getByLabel("Header text {{1}}").fill("#1042");
        await dialog.getByLabel("Parameter 1").fill("Ana");
        await dialog.getByLabel("Parameter 2").fill("#1042");
        await dialog.getByText("Hola Ana, tu pedido #1042 está en camino.")
          .waitFor();
        await dialog.getByRole("button", { name: "Send template" }).click();
        const sent = page.locator("[role=log] article", {
          hasText: "order_update",
        });
        await sent.waitFor();
        await sent.getByRole("img", { name: "Read" }).waitFor({
          timeout: 10_000,
        });
        const last = (await server.h.request(
          "GET",
          `/api/v2/messages/${await sent.getAttribute("data-message")}`,
        )).body.data;
        assert.equal(last.type, "template");
        assert.deepEqual(last.content.components, [
          { type: "header", parameters: [{ type: "text", text: "#1042" }] },
          {
            type: "body",
            parameters: [{ type: "text", text: "Ana" }, {
              type: "text",
              text: "#1042",
            }],
          },
        ]);
      },
    );

    await t.step(
      "a header image is uploaded from the computer and the template sent with its id",
      async () => {
        await page.getByRole("button", { name: "Template" }).click();
        const dialog = page.getByRole("dialog", { name: "Templates" });
        await dialog.getByRole("radio", { name: /promo_foto/ }).check();
        await dialog.getByLabel("Or upload a file").setInputFiles({
          name: "oferta.png",
          mimeType: "image/png",
          buffer: Buffer.from(PIXEL, "base64"),
        });
        await dialog.getByText("Uploaded: oferta.png").waitFor();
        // Previewed from the file itself (a blob: URL), not fetched.
        const preview = dialog.getByRole("img", { name: "oferta.png" });
        assert.match(await preview.getAttribute("src") ?? "", /^blob:/);
        await dialog.getByLabel("Parameter 1").fill("Ana");
        await dialog.getByRole("button", { name: "Send template" }).click();
        const sent = page.locator("[role=log] article", {
          hasText: "promo_foto",
        });
        await sent.getByRole("img", { name: "Read" }).waitFor({
          timeout: 10_000,
        });
        const message = (await server.h.request(
          "GET",
          `/api/v2/messages/${await sent.getAttribute("data-message")}`,
        )).body.data;
        const header = message.content.components[0];
        assert.equal(header.type, "header");
        const id = header.parameters[0].image.id;
        // Meta (the simulator) holds the very bytes under that id.
        assert.deepEqual(
          server.simulator.state.media.get(id)?.bytes,
          new Uint8Array(Buffer.from(PIXEL, "base64")),
        );
      },
    );

    assert.deepEqual(problems, []);
  } finally {
    await browser.close();
  }
});
