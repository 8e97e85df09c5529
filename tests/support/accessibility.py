"""Accessibility checks the browser tests share: axe-core's serious and critical findings, and the theme switch.

Guarantees: ``axe_problems(page)`` waits until no finite CSS transition or animation runs (an endless one, the typing
dots, may), runs the axe-core bundled with ``axe-playwright-python`` on the whole page as it is (a contrast finding
axe blames on a dialog's backdrop is measured again: ``RECHECKED``) and returns one line per serious or critical
violation (its id, help and up to three nodes), [] when there is none; ``switch_theme(page)`` presses the theme button
and returns once the other theme's colours have settled.
"""

from __future__ import annotations

from importlib import resources

from playwright.sync_api import Page

SETTLED = """() => document.getAnimations().every(
  (a) => a.playState !== 'running' || a.effect?.getComputedTiming().iterations === Infinity)"""


# axe resolves the background of text on a button inside a Quasar dialog to the dialog's backdrop (its inner box
# is ``pointer-events: none``), though an opaque card lies between them; such a finding is measured again here from
# the page's own computed colours: the text's colour (its alpha and the opacity of the elements between it and what
# is painted under it composed over that; not axe's colour, which axe already blended with the backdrop) against
# the nearest opaque ancestor of the text, kept only if it still fails
RECHECKED = r"""(nodes) => nodes.filter((n) => {
  const check = n.any.find((a) => a.id === 'color-contrast');
  if (!check || !check.relatedNodes.some((r) => r.html.includes('q-dialog__backdrop'))) return true;
  const lum = (rgb) => {
    const c = rgb.map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
  };
  const rgba = (css) => { const m = css.match(/[\d.]+/g).map(Number); return m.length === 3 ? [...m, 1] : m; };
  const target = document.querySelector(n.target[0]);
  if (!target) return true;
  let el = target, bg = null, alpha = rgba(getComputedStyle(target).color)[3];
  for (; el && !bg; el = el.parentElement) {
    const style = getComputedStyle(el), m = rgba(style.backgroundColor);
    if (m[3] === 1) bg = m.slice(0, 3);
    else alpha *= parseFloat(style.opacity);  // a faded element between the text and what is painted under it
  }
  if (!bg) return true;
  const f = rgba(getComputedStyle(target).color);
  const fg = [0, 1, 2].map((i) => f[i] * alpha + bg[i] * (1 - alpha));
  const [a, b] = [lum(fg), lum(bg)];
  return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05) < parseFloat(check.data.expectedContrastRatio);
})"""


def axe_problems(page: Page) -> list[str]:
    page.wait_for_function(SETTLED)  # colours mid-transition (a theme applied, a notice fading in) are not the page's
    source = resources.files("axe_playwright_python").joinpath("axe.min.js").read_text(encoding="utf-8")
    page.evaluate(source)
    result = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
    problems = []
    for v in result["violations"]:
        nodes = page.evaluate(RECHECKED, v["nodes"]) if v["id"] == "color-contrast" else v["nodes"]
        if nodes and v["impact"] in ("serious", "critical"):
            shown = [n["html"][:200] + n["failureSummary"][:300] for n in nodes[:3]]
            problems.append(f"{v['id']} ({v['impact']}): {v['help']} — {shown}")
    return problems


def switch_theme(page: Page) -> None:
    dark = page.evaluate("document.body.classList.contains('body--dark')")
    page.get_by_role("button", name="Switch between light and dark").click()
    page.wait_for_function("d => document.body.classList.contains('body--dark') !== d", arg=dark)
    drawer = "getComputedStyle(document.querySelector('.q-drawer')).backgroundColor"
    page.wait_for_function(
        f"{drawer} === (document.body.classList.contains('body--dark') ? 'rgb(17, 24, 39)' : 'rgb(255, 255, 255)')"
    )  # the theme's colours have settled (no transition left)
