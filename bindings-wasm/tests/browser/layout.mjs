// Shared by the browser tests (browser.test.mjs, offline.test.mjs).

// Everything the page shows lies inside the viewport (no element reaches past its left or right edge,
// the document does not scroll sideways) and no diagram label is clipped.
export async function layoutProblems(page) {
  return page.evaluate(() => {
    const vw = document.documentElement.clientWidth;
    const name = (el) =>
      el.tagName.toLowerCase() +
      (el.id ? `#${el.id}` : '') +
      (el.className && typeof el.className === 'string'
        ? `.${el.className.trim().replace(/\s+/g, '.')}`
        : '');
    const bad = [];
    let checked = 0;
    for (const el of document.body.querySelectorAll('*')) {
      const r = el.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) continue; // not rendered (hidden, <script>, <option>)
      checked++;
      if (r.left < -0.5 || r.right > vw + 0.5)
        bad.push(`${name(el)} spans ${r.left.toFixed(1)}..${r.right.toFixed(1)} of ${vw}`);
    }
    if (document.documentElement.scrollWidth > vw)
      bad.push(`the document is ${document.documentElement.scrollWidth} px wide, the viewport ${vw}`);
    for (const seg of document.querySelectorAll('#diagram .seg')) {
      const box = seg.getBoundingClientRect();
      if (seg.scrollWidth > seg.clientWidth)
        bad.push(`${name(seg)}: its label is clipped (${seg.scrollWidth} > ${seg.clientWidth})`);
      for (const label of seg.children) {
        const r = label.getBoundingClientRect();
        if (r.left < box.left - 0.5 || r.right > box.right + 0.5)
          bad.push(`${name(seg)}: label "${label.textContent}" outside its field`);
      }
    }
    return { bad, checked, vw };
  });
}
