// Takes the book's screenshot of the MCP Inspector (web UI) connected to examples/quickstart:
// connects, opens the Tools tab, calls `add` with 2 and 3, and saves the page once the result
// is shown. Run through `book/screenshots/run`, which starts the Inspector and passes its URL.
//
// Usage: node inspector.mjs URL OUTPUT.png
//
// Every request the page makes to a host other than loopback (the Inspector's web fonts) is
// refused, so the screenshot needs no network.

// `run` installs playwright-core under target/book-tools and names its entry point here.
const { chromium } = await import(process.env.PLAYWRIGHT_CORE ?? 'playwright-core');

const [url, output] = process.argv.slice(2);
if (!url || !output) {
  console.error('usage: node inspector.mjs URL OUTPUT.png');
  process.exit(2);
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
});
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  const page = await context.newPage();
  await page.route('**/*', (route) => {
    const target = new URL(route.request().url());
    if (target.protocol === 'data:' || target.protocol === 'blob:' || LOOPBACK.has(target.hostname)) {
      return route.continue();
    }
    return route.abort();
  });

  await page.goto(url, { waitUntil: 'load' });
  // The server card's switch connects to the server the Inspector was started with.
  await page.locator('input[type=checkbox], [role=switch]').first().click({ force: true });
  await page.getByText('Connected', { exact: true }).waitFor({ timeout: 30_000 });

  await page.getByText('Tools', { exact: true }).first().click();
  await page.getByRole('button', { name: 'add', exact: true }).click();
  const fields = page.locator('input[inputmode=numeric], input[type=number], input[inputmode=decimal]');
  await fields.nth(0).waitFor();
  await fields.nth(0).fill('2');
  await fields.nth(1).fill('3');
  await page.getByRole('button', { name: 'Execute Tool' }).click();
  // The result panel shows the text block the tool returned.
  await page.getByText('"5"').or(page.getByText(/^5$/)).first().waitFor({ timeout: 30_000 });
  await page.waitForTimeout(500);
  await page.screenshot({ path: output });
  console.log(`wrote ${output}`);
} finally {
  await browser.close();
}
