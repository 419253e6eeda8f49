// Drives docs/explorer/rope.html in headless Chromium as a student would (typing in the boxes,
// dragging the base slider, pressing "shift both", loading an attention file, hovering a cell)
// and compares every number it shows with the C++ library's (rope_cases.cpp's JSON).
//
//   node tests/browser/check_page.js --page docs/explorer/rope.html --cases CASES.json
//        --screenshot OUT.png [--attention FILE.json] [--break sin-sign | theta-d-minus-1]
//
// Prints one "MISMATCH case …" line per disagreement, then "FAIL: …" (exit 1) or "PASS: …".
// --break runs the same checks on a copy of the page with a classic RoPE bug planted (sin's
// sign flipped in the rotation, or θ_i = base^(−2i/(D−1))): the test that must see MISMATCH.
// Tolerance: relative 1e-5 (the page prints 6 significant digits); angles compared modulo 2π.
"use strict";
const fs = require("fs");
const path = require("path");
const { pathToFileURL } = require("url");
const { chromium } = require("playwright-core");

const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, "")] = process.argv[i + 1];
for (const need of ["page", "cases", "screenshot"])
  if (!args[need]) { console.log(`FAIL: --${need} is missing (see the head of check_page.js)`); process.exit(2); }

// The planted bugs: [the page's exact text, its broken replacement].
const BREAKS = {
  "sin-sign": ["const c = Math.cos(a), s = Math.sin(a);", "const c = Math.cos(a), s = -Math.sin(a);"],
  "theta-d-minus-1": ["(_, i) => Math.pow(base, -2 * i / D));", "(_, i) => Math.pow(base, -2 * i / (D - 1)));"],
};
function pageToOpen() {
  if (!args.break) return path.resolve(args.page);
  const plant = BREAKS[args.break];
  if (!plant) { console.log(`FAIL: --break ${args.break}: choose ${Object.keys(BREAKS).join(" or ")}`); process.exit(2); }
  const text = fs.readFileSync(args.page, "utf8");
  if (text.split(plant[0]).length !== 2) {
    console.log(`FAIL: the page no longer holds "${plant[0]}" exactly once; update BREAKS in check_page.js`);
    process.exit(2);
  }
  const copy = path.join(path.dirname(path.resolve(args.screenshot)), "rope-broken.html");
  fs.writeFileSync(copy, text.replace(plant[0], plant[1]));
  return copy;
}

const mismatches = [];
let compared = 0;
function close(page, expected, angle) {
  if (!Number.isFinite(page)) return false;
  if (angle) {
    const d = ((page - expected) % (2 * Math.PI) + 3 * Math.PI) % (2 * Math.PI) - Math.PI;
    return Math.abs(d) <= 1e-5;
  }
  return Math.abs(page - expected) <= 1e-5 * Math.abs(expected) + 1e-9;
}
function check(label, what, pageValue, expected, angle = false) {
  compared += 1;
  if (!close(pageValue, expected, angle))
    mismatches.push(`MISMATCH ${label} ${what}: page ${pageValue}, C++ ${expected}`);
}
const number = (text) => Number(String(text).trim().split(/\s+/)[0]);

async function setCase(page, c) {
  await page.selectOption("#pairing", c.pairing);
  await page.fill("#pairs", String(c.pairs));
  await page.fill("#m", String(c.m));
  await page.fill("#n", String(c.n));
  await page.fill("#shift-by", String(c.shift));
  if (c.drag_base) {  // drag the log slider past its right end: base = 10^6
    const box = await page.locator("#base-slider").boundingBox();
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width + 40, box.y + box.height / 2, { steps: 8 });
    await page.mouse.up();
  } else {
    await page.fill("#base", String(c.base));
  }
}

async function checkCase(page, c, index) {
  const label = `case ${index} (m=${c.m} n=${c.n} base=${c.base} pairs=${c.pairs} ${c.pairing})`;
  await setCase(page, c);
  const text = (id) => page.textContent(`#${id}`);
  check(label, "base", Number(await page.inputValue("#base")), c.base);
  check(label, "D", number(await text("D")), 2 * c.pairs);
  check(label, "delta", number(await text("delta")), c.m - c.n);
  for (const [id, values] of [["q", c.q], ["k", c.k]]) {
    const shown = (await text(id)).trim().split(/\s+/).map(Number);
    if (shown.length !== values.length) mismatches.push(`MISMATCH ${label} ${id}: ${shown.length} numbers, C++ ${values.length}`);
    values.forEach((v, d) => check(label, `${id}[${d}]`, shown[d], v));
  }
  for (let i = 0; i < c.pairs; ++i) {
    check(label, `theta[${i}]`, number(await text(`theta-${i}`)), c.theta[i]);
    check(label, `angle_q[${i}]`, number(await text(`angle-q-${i}`)), c.angle_q[i], true);
    check(label, `angle_k[${i}]`, number(await text(`angle-k-${i}`)), c.angle_k[i], true);
  }
  if (await page.locator(`#theta-${c.pairs}`).count()) mismatches.push(`MISMATCH ${label} pairs: a row for pair ${c.pairs}`);
  check(label, "score", number(await text("score")), c.score);
  check(label, "score_shifted", number(await text("score-shifted")), c.score_shifted);
  check(label, "decay", number(await text("decay-at")), c.decay);
  check(label, "decay_zero", number(await text("decay-zero")), c.decay_zero);
  // Press "shift both": the boxes move by s and the score shown is the library's at (m+s, n+s).
  await page.click("#shift-both");
  check(label, "m after shift", Number(await page.inputValue("#m")), c.m + c.shift);
  check(label, "n after shift", Number(await page.inputValue("#n")), c.n + c.shift);
  check(label, "score after shift", number(await text("score")), c.score_shifted);
}

async function checkAttention(page, file) {
  const doc = JSON.parse(fs.readFileSync(file, "utf8"));
  await page.setInputFiles("#attn-file", file);
  await page.waitForFunction(() => document.getElementById("attn-info").textContent.startsWith("run "));
  const layer = doc.layers.length - 1, head = doc.heads.length - 1;
  await page.selectOption("#attn-layer", String(layer));
  await page.selectOption("#attn-head", String(head));
  const canvas = page.locator("#attn-canvas");
  await canvas.scrollIntoViewIfNeeded();  // the mouse reaches only what is in the viewport
  const box = await canvas.boundingBox();
  const geometry = await canvas.evaluate((c) => ({ ...c.dataset }));
  const [left, top, cell, T] = ["left", "top", "cell", "size"].map((k) => Number(geometry[k]));
  if (T !== doc.T) mismatches.push(`MISMATCH attention T: page ${T}, file ${doc.T}`);
  const T1 = doc.T - 1;
  for (const [m, n] of [[T1, 0], [1, T1], [Math.floor(T1 / 2), Math.floor(T1 / 3)]]) {
    await page.mouse.move(box.x + left + (n + 0.5) * cell, box.y + top + (m + 0.5) * cell);
    const label = `attention layer ${doc.layers[layer]} head ${doc.heads[head]} (m=${m}, n=${n})`;
    check(label, "m", number(await page.textContent("#attn-m")), m);
    check(label, "n", number(await page.textContent("#attn-n")), n);
    const tokens = [await page.textContent("#attn-m-token"), await page.textContent("#attn-n-token")];
    if (tokens[0] !== doc.tokens[m] || tokens[1] !== doc.tokens[n])
      mismatches.push(`MISMATCH ${label} tokens: page ${tokens}, file ${doc.tokens[m]},${doc.tokens[n]}`);
    check(label, "p_mn", number(await page.textContent("#attn-p")), doc.weights[layer][head][m][n]);
  }
  return doc.T;
}

(async () => {
  const cases = JSON.parse(fs.readFileSync(args.cases, "utf8")).cases;
  const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", headless: true,
                                          args: ["--no-sandbox"] });  // root in containers
  const page = await browser.newPage({ viewport: { width: 1040, height: 900 } });
  const problems = [];
  page.on("pageerror", (e) => problems.push(`FAIL: the page threw: ${e.message}`));
  await page.route("**/*", (route) => {  // offline: the page may load only itself
    const url = route.request().url();
    if (url.startsWith("file:")) return route.continue();
    problems.push(`FAIL: the page asked the network for ${url}`);
    return route.abort();
  });
  await page.goto(pathToFileURL(pageToOpen()).href);
  for (let i = 0; i < cases.length; ++i) await checkCase(page, cases[i], i);
  let attentionNote = "";
  if (args.attention) attentionNote = `, attention p_mn at 3 cells of a T = ${await checkAttention(page, args.attention)} map`;
  await page.selectOption("#pairing", "interleaved");  // a readable picture: 8 pairs
  await page.fill("#pairs", "8");
  await page.fill("#m", "7");
  await page.fill("#n", "3");
  await page.fill("#base", "10000");
  await page.evaluate(() => window.scrollTo(0, 0));  // the sticky controls at the top
  fs.mkdirSync(path.dirname(path.resolve(args.screenshot)), { recursive: true });
  await page.screenshot({ path: args.screenshot, fullPage: true });
  await browser.close();
  for (const line of [...mismatches, ...problems]) console.log(line);
  if (mismatches.length || problems.length) {
    console.log(`FAIL: ${mismatches.length} of ${compared} values differ from the C++ library` +
                (problems.length ? `, ${problems.length} page problem(s)` : ""));
    process.exit(1);
  }
  console.log(`PASS: ${compared} values of ${cases.length} cases equal the C++ library's${attentionNote}; ` +
              `screenshot ${args.screenshot}`);
})().catch((e) => { console.log(`FAIL: ${e.message.split("\n")[0]}`); process.exit(1); });
