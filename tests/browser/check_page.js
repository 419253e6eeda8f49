// Drives docs/explorer/rope.html in headless Chromium as a student would (typing in the boxes,
// dragging the base slider, pressing "shift both", loading an attention file, hovering a cell)
// and compares every number it shows with the C++ library's (rope_cases.cpp's JSON).
// Also per case: k = R₋₁q and k = R₁q (the k shown, the score, the curve's peak at Δ = ∓1 with
// the value |q|²) and both pairings with "permute q and k" (half on permuted q, k gives the
// interleaved score). Once: the sentence at the pairing switch; at 64 pairs no two θ labels
// under the clocks overlap; the sticky control panel takes at most PANEL_SHARE of a 900 px
// window; the heat map is at least 500 px (T ≤ 60) with axis titles and a colour bar of its own colours;
// after switching head and layer the hovered cell's p is the new head's.
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
  await page.selectOption("#k-choice", "formula");
  await page.selectOption("#pairing", "half");  // where the toggle is live
  await page.uncheck("#permute");
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
  await checkKChoices(page, c, label);
  await checkPermute(page, c, label);
  // Press "shift both": the boxes move by s and the score shown is the library's at (m+s, n+s).
  await page.click("#shift-both");
  check(label, "m after shift", Number(await page.inputValue("#m")), c.m + c.shift);
  check(label, "n after shift", Number(await page.inputValue("#n")), c.n + c.shift);
  check(label, "score after shift", number(await text("score")), c.score_shifted);
}

// k = R₋₁q and R₁q: k is q turned by one position back (on), so ⟨R_m q, R_n k⟩ = ⟨R_m q,
// R_{n∓1} q⟩ peaks, at |q|², where Δ = m − n = ∓1. The k shown and the score at (m, n) are the
// library's (rope_kernel with sin sign −1 / +1 at position 1); the peak is read off the page.
// The page opens where the two things to see are visible: k = R₋₁q, whose score curve peaks at
// Δ = −1, and a decay bound already well below bound(0) at the opening m − n.
async function checkOpening(page) {
  const text = (id) => page.textContent(`#${id}`);
  compared += 1;
  const choice = await page.$eval("#k-choice", (e) => e.value);
  if (choice !== "minus") mismatches.push(`MISMATCH opening: k is "${choice}", not R₋₁q`);
  const peak = number(await text("score-peak-delta"));
  if (peak !== -1) mismatches.push(`MISMATCH opening: the score curve peaks at Δ = ${peak}, not −1`);
  const zero = number(await text("decay-zero")), at = number(await text("decay-at"));
  if (!(at < 0.75 * zero))
    mismatches.push(`MISMATCH opening: bound(m − n) = ${at} is not visibly below bound(0) = ${zero}`);
}

async function checkKChoices(page, c, label) {
  const text = (id) => page.textContent(`#${id}`);
  for (const [choice, k, expected, peak] of [["minus", c.k_minus, c.score_k_minus, -1],
                                             ["plus", c.k_plus, c.score_k_plus, 1]]) {
    await page.selectOption("#k-choice", choice);
    const shown = (await text("k")).trim().split(/\s+/).map(Number);
    if (shown.length !== k.length) mismatches.push(`MISMATCH ${label} k ${choice}: ${shown.length} numbers, C++ ${k.length}`);
    k.forEach((v, d) => check(label, `k ${choice}[${d}]`, shown[d], v));
    check(label, `score with k ${choice}`, number(await text("score")), expected);
    check(label, `curve peak Δ with k ${choice}`, number(await text("score-peak-delta")), peak);
    check(label, `curve peak with k ${choice} (|q|²)`, number(await text("score-peak")), c.q_norm2);
  }
  await page.selectOption("#k-choice", "formula");
}

// The two pairings differ on the same q, k; "permute q and k" (dims 2i, 2i+1 → i, i + D/2)
// makes half give the interleaved score back, as the library computes it.
async function checkPermute(page, c, label) {
  const score = async () => number(await page.textContent("#score"));
  await page.selectOption("#pairing", "interleaved");
  const interleaved = await score();
  check(label, "score interleaved", interleaved, c.score_interleaved);
  await page.selectOption("#pairing", "half");
  check(label, "score half", await score(), c.score_half);
  await page.check("#permute");
  const permuted = await score();
  check(label, "score half on permuted q, k", permuted, c.score_half_permuted);
  check(label, "score half on permuted q, k = the page's interleaved", permuted, interleaved);
  await page.uncheck("#permute");
  await page.selectOption("#pairing", c.pairing);
}

// Boxes a and b overlap (more than a pixel's rounding).
const overlap = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > 0.5 &&
                          Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 0.5;
const rect = (r) => ({ left: r.left, right: r.right, top: r.top, bottom: r.bottom });

// At 64 (and 32) pairs, for small and large bases: one label per pair, none overlapping another
// label or another pair's clock, none wider than its box.
async function checkLabels(page) {
  const settings = [[64, "10000"], [64, "1000000"], [64, "2"], [32, "10000"]];
  for (const [pairs, base] of settings) {
    await page.fill("#pairs", String(pairs));
    await page.fill("#base", base);
    const found = await page.evaluate(() => [...document.querySelectorAll("#clocks .clock")].map((clock) => {
      const label = clock.querySelector(".clock-label"), canvas = clock.querySelector("canvas");
      const box = (e) => { const r = e.getBoundingClientRect(); return { left: r.left, right: r.right, top: r.top, bottom: r.bottom }; };
      return { text: label.textContent, label: box(label), canvas: box(canvas),
               spills: label.scrollWidth > label.clientWidth + 1 };
    }));
    const where = `θ labels at ${pairs} pairs, base ${base}`;
    compared += 1;
    if (found.length !== pairs) { mismatches.push(`MISMATCH ${where}: ${found.length} labelled clocks`); continue; }
    for (let i = 0; i < pairs; ++i) {
      if (!found[i].text.includes(`pair ${i}`) || !found[i].text.includes("θ = "))
        mismatches.push(`MISMATCH ${where}: label ${i} reads "${found[i].text}"`);
      if (found[i].spills) mismatches.push(`MISMATCH ${where}: label ${i} is wider than its box`);
      for (let j = 0; j < pairs; ++j) {
        if (j > i && overlap(found[i].label, found[j].label))
          mismatches.push(`MISMATCH ${where}: labels of pairs ${i} and ${j} overlap`);
        if (j !== i && overlap(found[i].label, found[j].canvas))
          mismatches.push(`MISMATCH ${where}: label ${i} covers the clock of pair ${j}`);
      }
    }
  }
}

// The sticky panel: at most PANEL_SHARE of the window's height; the pairing sentence in it.
const PANEL_SHARE = 0.15;
async function checkPanel(page) {
  await page.evaluate(() => window.scrollTo(0, 0));
  const panel = await page.locator(".controls").boundingBox();
  const height = page.viewportSize().height;
  compared += 2;
  if (panel.height > PANEL_SHARE * height)
    mismatches.push(`MISMATCH control panel: ${panel.height.toFixed(0)} px high, over ${PANEL_SHARE} of a ${height} px window`);
  const note = page.locator(".controls #pairing-note");
  const said = (await note.count()) ? await note.textContent() : "";
  if (!(await note.count()) || !(await note.isVisible()) || !/agree only after permuting q and k/.test(said.replace(/\s+/g, " ")))
    mismatches.push(`MISMATCH pairing sentence: "${said.trim()}" (want it beside the switch, saying the pairings agree only after permuting q and k)`);
}

// The heat map's frame: ≥ 500 px up to T = 60, axis titles beside it, a colour bar as tall as the map whose
// colour at height √p is the map's colour for p (read back from both canvases' pixels).
async function checkHeatMap(page, doc, layer, head) {
  const geometry = await page.locator("#attn-canvas").evaluate((c) => ({ ...c.dataset }));
  const [left, top, cell, T] = ["left", "top", "cell", "size"].map((k) => Number(geometry[k]));
  const box = async (sel) => ((await page.locator(sel).count()) && (await page.locator(sel).isVisible())
    ? page.locator(sel).boundingBox() : null);
  const map = await box("#attn-canvas"), bar = await box("#attn-colorbar");
  const x = await box("#attn-xtitle"), y = await box("#attn-ytitle");
  compared += 5;
  if (T <= 60 && T * cell < 500) mismatches.push(`MISMATCH heat map: ${T * cell} px for T = ${T}, want at least 500`);
  if (!x || !/key/.test(await page.textContent("#attn-xtitle")) || x.y < map.y + map.height - 1 ||
      x.x > map.x + map.width || x.x + x.width < map.x + left)
    mismatches.push("MISMATCH heat map: no axis title for the keys under the map");
  if (!y || !/query/.test(await page.textContent("#attn-ytitle")) || y.x + y.width > map.x + 1 ||
      y.y > map.y + map.height || y.y + y.height < map.y + top)
    mismatches.push("MISMATCH heat map: no axis title for the queries left of the map");
  if (!bar || Math.abs(bar.height - T * cell) > 2 || Math.abs(bar.y - (map.y + top)) > 2 || bar.x < map.x + map.width - 1) {
    mismatches.push(`MISMATCH heat map: no colour bar right of the map and as tall as it (${JSON.stringify(bar)})`);
    return;
  }
  const p = doc.weights[layer][head];
  let most = [0, 0];
  p.forEach((row, m) => row.forEach((v, n) => { if (v > p[most[0]][most[1]]) most = [m, n]; }));
  for (const [m, n] of [most, [doc.T - 1, 0], [Math.floor(doc.T / 2), Math.floor(doc.T / 2)]]) {
    const colours = await page.evaluate(([m, n, value, left, top, cell]) => {
      const pixel = (id, px, py) => [...document.getElementById(id).getContext("2d").getImageData(px, py, 1, 1).data.slice(0, 3)];
      const bar = document.getElementById("attn-colorbar");
      const row = Math.min(bar.height - 2, Math.max(1, Math.round((1 - Math.sqrt(value)) * bar.height)));
      return [pixel("attn-canvas", left + (n + 0.5) * cell, top + (m + 0.5) * cell), pixel("attn-colorbar", bar.width / 2, row)];
    }, [m, n, p[m][n], left, top, cell]);
    compared += 1;
    if (colours[0].some((v, i) => Math.abs(v - colours[1][i]) > 4))
      mismatches.push(`MISMATCH heat map cell (${m}, ${n}) p = ${p[m][n]}: colour ${colours[0]}, the colour bar at that p ${colours[1]}`);
  }
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
  await checkHeatMap(page, doc, layer, head);
  // Hover the cell where this head and layer 0's head 0 differ most, then switch head, then
  // layer, without moving the mouse: the line shows the cell's p in the head now selected.
  let cellAt = [0, 0], most = -1;
  doc.weights[layer][head].forEach((row, m) => row.forEach((v, n) => {
    const d = Math.min(Math.abs(v - doc.weights[layer][0][m][n]), Math.abs(doc.weights[layer][0][m][n] - doc.weights[0][0][m][n]));
    if (d > most) { most = d; cellAt = [m, n]; }
  }));
  const [m, n] = cellAt;
  if (most < 1e-4) mismatches.push(`MISMATCH attention: the heads differ by at most ${most}; the switch check cannot tell them apart`);
  await page.mouse.move(box.x + left + (n + 0.5) * cell, box.y + top + (m + 0.5) * cell);
  check(`attention hover (m=${m}, n=${n})`, "p_mn before the switch", number(await page.textContent("#attn-p")), doc.weights[layer][head][m][n]);
  await page.selectOption("#attn-head", "0");
  check(`attention hover (m=${m}, n=${n}) after switching to head ${doc.heads[0]}`, "p_mn",
        number(await page.textContent("#attn-p")), doc.weights[layer][0][m][n]);
  await page.selectOption("#attn-layer", "0");
  check(`attention hover (m=${m}, n=${n}) after switching to layer ${doc.layers[0]}`, "p_mn",
        number(await page.textContent("#attn-p")), doc.weights[0][0][m][n]);
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
  await checkOpening(page);
  for (let i = 0; i < cases.length; ++i) await checkCase(page, cases[i], i);
  await checkLabels(page);
  await checkPanel(page);
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
