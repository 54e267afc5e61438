/**
 * The console in a real headless Chromium against a real node (issue 15, "Must show"): log in as a
 * user, see a scroll opened by the official client appear in the live feed and in the table, watch
 * its keep-alive bar run down and the row leave when it expires, open its timeline, move the "as of"
 * slider to before it opened and see it gone, invalidate an API key from the page and see the next
 * client request get 401. Every screen is saved under test/e2e/console/screenshots/ (git-ignored).
 *
 * Skips, saying so, only when /usr/bin/chromium is absent (CI installs Debian's chromium).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { errors } from 'es8';
import { PASSWORD, contextOf, eventually, startConsoleNode, type ConsoleNode } from './setup';

const CHROMIUM = '/usr/bin/chromium';
const HAVE_CHROMIUM = existsSync(CHROMIUM);
const SHOTS = join(__dirname, 'screenshots');
/** Short enough to watch it expire, long enough to see the bar move between two readings. */
const KEEP_ALIVE_S = 6;

if (!HAVE_CHROMIUM) {
  // eslint-disable-next-line no-console
  console.warn(`console browser tests SKIPPED: ${CHROMIUM} is absent (install Debian's chromium: apt-get install -y chromium)`);
}
const suite = HAVE_CHROMIUM ? describe : describe.skip;

suite(`the console in headless Chromium${HAVE_CHROMIUM ? '' : ` (skipped: ${CHROMIUM} is absent)`}`, () => {
  let n: ConsoleNode;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const problems: string[] = [];

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    n = await startConsoleNode();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      timeout: 30_000,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    context = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: 'light' });
    page = await context.newPage();
    // Cumulative layout shift not caused by input (web-vitals' definition), summed over the whole run.
    await page.addInitScript(() => {
      const w = globalThis as unknown as { __cls: number; __shifts: string[] };
      w.__cls = 0;
      w.__shifts = [];
      new PerformanceObserver((list) => {
        for (const e of list.getEntries() as unknown as Array<{ value: number; hadRecentInput: boolean; sources?: Array<{ node?: { id?: string; nodeName?: string } }> }>) {
          if (e.hadRecentInput) continue;
          w.__cls += e.value;
          w.__shifts.push(`${e.value.toFixed(4)} ${(e.sources ?? []).map((x) => x.node?.id || x.node?.nodeName).join(',')}`);
        }
      }).observe({ type: 'layout-shift', buffered: true } as never);
    });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`);
    });
  });

  afterAll(async () => {
    await browser?.close();
    await n?.stop();
  });

  const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

  async function logIn(user: string) {
    await page.goto(`${n.t.url}/_console`);
    await page.getByLabel('Username', { exact: true }).fill(user);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.locator('#app').waitFor({ state: 'visible' });
  }

  const tab = (name: string) => page.getByRole('tab', { name: new RegExp(`^${name}`) }).click();

  it('walks a scroll through its life, time travel and an API key invalidation', async () => {
    // A key of `app`, used once, so it has a last use.
    const appClient = n.client({ user: 'app' });
    const key = await appClient.security.createApiKey({ name: 'browser-key' });
    const keyClient = n.client({ apiKey: key.encoded });
    await keyClient.search({ index: 'books', size: 1 });

    // Log in: the page loads without credentials and asks for them.
    await page.goto(`${n.t.url}/_console`);
    await page.getByRole('heading', { name: 'Log in' }).waitFor();
    await shot('01-login');
    await logIn('ops');
    await page.locator('#who', { hasText: 'ops (default_native, realm)' }).waitFor();
    await page.locator('#contexts-empty').waitFor({ state: 'visible' });
    await shot('02-now-empty');

    // Live: the feed is connected before the client opens its scroll.
    await tab('Live');
    await page.locator('#feed[data-connected="true"]').waitFor({ state: 'attached' });
    const opened = await appClient.search({ index: 'books', scroll: `${KEEP_ALIVE_S}s`, size: 2, sort: ['_doc'] });
    const id = contextOf(n.t, opened._scroll_id!);
    const fact = page.locator(`#feed li[data-type="scroll.opened"][data-id="${id}"]`);
    await fact.waitFor();
    expect(await fact.textContent()).toContain('owner app (default_native)');
    expect(await fact.textContent()).toContain('indices books');
    await shot('03-live-opened');

    // Now: the row, its owner's total, and the keep-alive bar running down.
    await tab('Now');
    const row = page.locator(`#contexts-rows tr[data-id="${id}"]`);
    await row.waitFor();
    expect(await row.locator('td').nth(1).textContent()).toBe('app (default_native)');
    expect(await row.locator('td').nth(2).textContent()).toBe('books');
    await page.locator('#owners-rows tr', { hasText: 'app (default_native)' }).waitFor();
    const bar = row.getByRole('progressbar', { name: 'Keep-alive left' });
    const left = async () => Number(await bar.getAttribute('aria-valuenow'));
    const width = async () => bar.locator('.fill').evaluate((el: { style: { width: string } }) => parseFloat(el.style.width));
    const first = await left();
    const firstWidth = await width();
    expect(first).toBeLessThanOrEqual(KEEP_ALIVE_S);
    await shot('04-now-scroll');
    await page.waitForTimeout(1500);
    expect(await left()).toBeLessThan(first);
    expect(await width()).toBeLessThan(firstWidth);

    // It expires: the row leaves, and the feed shows why.
    await row.waitFor({ state: 'detached', timeout: (KEEP_ALIVE_S + 6) * 1000 });
    await tab('Live');
    const expired = page.locator(`#feed li[data-type="scroll.expired"][data-id="${id}"]`);
    await expired.waitFor();
    await shot('05-live-expired');

    // Its timeline, opened from the feed.
    await expired.getByRole('button', { name: /^Timeline/ }).click();
    const timeline = page.locator('#timeline');
    await timeline.locator(`h3[data-id="${id}"]`).waitFor();
    expect(await timeline.locator('li').evaluateAll((li) => li.map((x) => x.getAttribute('data-type')))).toEqual(['scroll.opened', 'scroll.expired']);
    expect(await timeline.locator('h3 .badge').textContent()).toBe('expired');
    await shot('06-timeline');

    // As of a moment while it was open, then the slider moved to before it opened.
    const openedAt = Date.parse((await n.as(`Basic ${Buffer.from(`ops:${PASSWORD}`).toString('base64')}`, 'GET', `/_contexts/${id}`)).json.opened_at);
    const rows = page.locator('#asof-rows');
    await page.getByRole('textbox', { name: 'As of' }).fill(new Date(openedAt + 500).toISOString());
    await page.locator('#asof-form').getByRole('button', { name: 'Show' }).click();
    await rows.locator(`tr[data-id="${id}"][data-status="open"]`).waitFor();
    await shot('07-asof-open');
    const slider = page.getByRole('slider', { name: 'Moment in the log' });
    await slider.focus();
    await page.keyboard.press('Home');
    await eventually(async () => Number(await rows.getAttribute('data-at')) < openedAt, 10_000, 'the fold before the scroll opened');
    expect(await rows.locator(`tr[data-id="${id}"]`).count()).toBe(0);
    await shot('08-asof-before');

    // The chart counts the scroll for its owner.
    await page.locator('#chart-area svg path.series').first().waitFor();
    expect(await page.locator('#chart-caption').textContent()).toContain('app (default_native) 1');

    // Credentials: the key with its last use; invalidate it from the page.
    await tab('Now');
    const keyRow = page.locator(`#keys-rows tr[data-id="${key.id}"]`);
    await keyRow.waitFor();
    expect(await keyRow.locator('td').nth(1).textContent()).toBe('app (default_native)');
    expect(await keyRow.locator('td').nth(4).textContent()).toMatch(/ago$/);
    await keyRow.getByRole('button', { name: 'Invalidate API key browser-key' }).click();
    await keyRow.getByRole('button', { name: 'Confirm: Invalidate API key browser-key' }).click();
    await page.locator('#credentials-notice', { hasText: `API key browser-key (${key.id}) invalidated.` }).waitFor();
    await shot('09-credentials-invalidated');
    const refused = await keyClient.search({ index: 'books', size: 1 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(errors.ResponseError);
    expect((refused as InstanceType<typeof errors.ResponseError>).statusCode).toBe(401);

    // Cluster: health (replicas unassigned on one node) and this node's shard copies.
    await tab('Cluster');
    await page.locator('#health-badge', { hasText: 'yellow' }).waitFor();
    const node = page.locator(`#nodes-rows tr[data-id="${n.t.sys.ctx.node.id}"]`);
    await node.locator('.copies li', { hasText: 'books[0] P' }).waitFor();
    await page.locator('#unassigned li', { hasText: 'books[0] R' }).waitFor();
    await shot('10-cluster');

    // No layout shift worth the name while data arrives, rows come and go and tabs change (web-vitals' "good" is < 0.1).
    const [cls, shifts] = (await page.evaluate('[window.__cls, window.__shifts]')) as [number, string[]];
    expect(cls).toBeLessThan(0.05); // measured: ≈0.004 (a per-owner row arriving)
    expect(shifts.length).toBeLessThan(5);

    // Dark mode: the same page under prefers-color-scheme: dark.
    await page.emulateMedia({ colorScheme: 'dark' });
    await tab('Now');
    const bg = await page.evaluate('getComputedStyle(document.body).backgroundColor');
    expect(bg).toBe('rgb(13, 17, 23)');
    await shot('11-now-dark');
    await page.emulateMedia({ colorScheme: 'light' });

    expect(problems).toEqual([]);
  });

  it('shows a user without monitor no context, and their own key only', async () => {
    await page.getByRole('button', { name: 'Log out' }).click();
    await logIn('app');
    await page.locator('#contexts-denied').waitFor({ state: 'visible' });
    await tab('Live');
    await page.locator('#feed[data-connected="true"]').waitFor({ state: 'attached' });
    const appClient = n.client({ user: 'app' });
    const s = await appClient.search({ index: 'books', scroll: '1m', size: 1 });
    const own = await appClient.security.createApiKey({ name: 'late-key' });
    // Facts arrive in log order: once the later key shows, the earlier scroll would have.
    await page.locator(`#feed li[data-type="apikey.created"][data-id="${own.id}"]`).waitFor();
    expect(await page.locator('#feed li[data-type^="scroll."]').count()).toBe(0);
    await shot('12-no-monitor-live');
    await tab('Now');
    await page.locator(`#keys-rows tr[data-id="${own.id}"]`).waitFor();
    expect(await page.locator('#keys-rows tr').evaluateAll((trs) => trs.every((tr) => tr.children[1].textContent === 'app (default_native)'))).toBe(true);
    await appClient.clearScroll({ scroll_id: s._scroll_id! });
    expect(problems).toEqual([]);
  });

  it('moves between tabs with the arrow keys and never injects fact data as markup', async () => {
    await tab('Now');
    await page.getByRole('tab', { name: 'Now' }).focus();
    await page.keyboard.press('ArrowRight');
    expect(await page.getByRole('tab', { name: /^Live/ }).getAttribute('aria-selected')).toBe('true');
    await page.keyboard.press('End');
    expect(await page.getByRole('tab', { name: 'Cluster' }).getAttribute('aria-selected')).toBe('true');
    expect(await page.evaluate('document.activeElement.id')).toBe('tab-cluster');
    await page.keyboard.press('Home');
    await page.keyboard.press('ArrowRight');
    // A key whose name is markup shows as text.
    const evil = '<img src=x onerror="window.__pwned=1">';
    const k = await n.client({ user: 'app' }).security.createApiKey({ name: evil });
    const li = page.locator(`#feed li[data-id="${k.id}"]`);
    await li.waitFor();
    expect(await li.textContent()).toContain(`name ${evil}`);
    expect(await li.locator('img').count()).toBe(0);
    expect(await page.evaluate('window.__pwned')).toBeUndefined();
    expect(problems).toEqual([]);
  });
});
