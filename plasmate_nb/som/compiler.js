// plasmate_nb in-page SOM compiler (SOM "0.1", Plasmate-compatible shape).
//
// `compileSom(budgetMs, cache, forceFull)`, called in an isolated world by compiler.py's
// factory, walks the LIVE DOM once and returns `{json: <canonical SOM JSON string>, nodes:
// Map<somId, Node>}` when `cache` is null, `{parts, meta, nodes, stats}` when it keeps a record
// in `cache` for incremental compiles (the text is the parts joined, then meta), or `{json:
// null, error: <fixed code>}`. Nothing is written into the DOM or onto `window`.
//
// Hostile pages: the page's own scripts ran before us and may have replaced globals.
// We never call JSON.stringify or Array.prototype methods (JSON is built by hand, arrays
// grow by index), the few builtins we need are captured at the start, every node is
// inspected inside try/catch (a node whose getters throw is treated as absent, giving a
// partial SOM), and a visit counter plus a deadline stop a page that grows under us.
//
// Deliberate deviations from the reference compiler (also in DEVIATIONS.md):
//  D1 live state: input/textarea `value`, `checked`, option selectedness and details
//     `open` come from DOM properties, not attributes.
//  D2 password inputs never carry a value (attribute or live) anywhere in the SOM.
//  D3 visibility: `hidden`, aria-hidden and the static strip rules are kept; the <style>
//     text parser and inline-style substring tests are replaced by the live computed
//     style (display:none, visibility:hidden|collapse drop the subtree).
//  D4 lang = document.documentElement.lang, "en" when empty (no doctype bug).
//  D5 <article>: emitted as a `section` element without text, followed by its content
//     compiled like region content (headings, paragraphs, lists ... are kept). Inside an
//     article, <header>/<footer> tags are not landmarks (they are scoped to it).
//  D6 shadow DOM: open `element.shadowRoot` (declarative or attachShadow) is read. Hosts
//     that are SOM elements carry it as `shadow`; a host that is not a SOM element
//     (custom elements, div/span hosts) becomes a `group` element carrying `shadow`,
//     and its light-DOM children are then walked as before.
//  D7 `url` is location.href; origin is the tuple origin of location (punycode host).
//  D8 wrapped labels: a control that is the first labelable descendant of a <label>
//     without `for` and has no id takes the label's text as its `label` (rule 3's place).
(function compileSom(budgetMs, cache, forceFull) {
  "use strict";

  // ---- builtins, captured before the walk (page getters may change globals mid-walk)
  const dateNow = Date.now;
  const computedStyle = getComputedStyle;
  const NativeMap = Map;
  const parseJson = JSON.parse;
  const URLCtor = URL;
  const isArray = Array.isArray;
  const encoder = new TextEncoder();
  const startedAt = dateNow();
  const deadline = startedAt + (budgetMs > 0 ? budgetMs : 30000);

  // ---- constants
  const MAX_VISITS = 4000000;
  const BUDGET = { code: "budget exceeded" };
  // Deeper than this a recording walk stops and the document is compiled unrecorded from then on:
  // each recorded level costs stack frames, and a walk that ran out of stack would lose content.
  const TOO_DEEP = { code: "too deep" };
  const MAX_RECORDED_DEPTH = 400;
  let recordedDepth = 0;
  const MISMATCH = { code: "mismatch" }; // a replayed subtree does not line up: compile in full
  const HEX = "0123456789abcdef";
  const MAX_ELEMENTS = 400;
  const MAX_PARAGRAPHS = 10;
  const MAX_LINKS = 200;
  const MAX_NAV_LINKS = 80;
  const MAX_LIST_ITEMS = 5;
  const TABLE_ROWS = 30;
  const TABLE_COLS = 12;

  const INTERACTIVE = { __proto__: null, link: 1, button: 1, text_input: 1, textarea: 1, select: 1, checkbox: 1, radio: 1, details: 1 };
  const FORM_CONTROLS = { __proto__: null, text_input: 1, textarea: 1, select: 1, checkbox: 1, radio: 1, button: 1 };
  const ACTIONS_JSON = {
    __proto__: null, link: '["click"]', button: '["click"]', text_input: '["type","clear"]',
    textarea: '["type","clear"]', select: '["select"]', checkbox: '["toggle"]', radio: '["select"]', details: '["toggle"]',
  };
  const ARIA_ELEMENT_ROLES = {
    __proto__: null, button: "button", link: "link", checkbox: "checkbox", switch: "checkbox",
    menuitemcheckbox: "checkbox", radio: "radio", menuitemradio: "radio", textbox: "text_input",
    searchbox: "text_input", slider: "text_input", spinbutton: "text_input", combobox: "select",
    listbox: "select", menuitem: "button", tab: "button", option: "button", img: "image", group: "group",
    radiogroup: "group",
  };
  const TAG_ROLES = {
    __proto__: null, button: "button", textarea: "textarea", select: "select", h1: "heading", h2: "heading",
    h3: "heading", h4: "heading", h5: "heading", h6: "heading", img: "image", picture: "image", ul: "list",
    ol: "list", table: "table", p: "paragraph", section: "section", article: "section", fieldset: "group",
    hr: "separator", details: "details", iframe: "iframe",
  };
  const BUTTON_INPUTS = { __proto__: null, submit: 1, button: 1, reset: 1, image: 1 };
  // Input types whose live `.value` is user state (D1); others keep the attribute.
  const ATTRIBUTE_VALUE_INPUTS = { __proto__: null, checkbox: 1, radio: 1, submit: 1, button: 1, reset: 1, image: 1, file: 1 };
  const LANDMARK_TOKENS = {
    __proto__: null, navigation: ["navigation", "navigation"], main: ["main", "main"],
    complementary: ["aside", "aside"], banner: ["header", "header"], contentinfo: ["footer", "footer"],
    dialog: ["dialog", "dialog"], alertdialog: ["dialog", "dialog"], search: ["navigation", "search"],
  };
  const LANDMARK_TAGS = {
    __proto__: null, nav: ["navigation", "navigation"], main: ["main", "main"], aside: ["aside", "aside"],
    header: ["header", "header"], footer: ["footer", "footer"], dialog: ["dialog", "dialog"],
  };
  const HINT_REGION_TAGS = { __proto__: null, div: 1, section: 1, article: 1, ul: 1, ol: 1 };
  const STRIP_TAGS = { __proto__: null, script: 1, style: 1, noscript: 1, meta: 1, link: 1, template: 1 };
  const CONSENT_WORDS = ["cookie", "consent", "gdpr", "onetrust", "cookiebanner", "cookie-banner", "cookie_banner",
    "cc-window", "cc-banner", "privacy-banner", "privacy_banner"];
  const CONSENT_IDS = { __proto__: null, cybotcookiebotdialog: 1, "onetrust-banner-sdk": 1, "cookie-law-info-bar": 1, cookieconsent: 1, sp_message_container: 1 };
  const LABELABLE = { __proto__: null, button: 1, input: 1, meter: 1, output: 1, progress: 1, select: 1, textarea: 1 };
  const FS_DISABLE_TAGS = { __proto__: null, input: 1, textarea: 1, button: 1, select: 1, fieldset: 1 };
  const TABLE_PASS = { __proto__: null, tbody: 1, thead: 1, tfoot: 1, tr: 1, td: 1, th: 1 };
  const TABLE_TEXT_PARENTS = { __proto__: null, table: 1, tbody: 1, thead: 1, tfoot: 1, tr: 1, td: 1, th: 1 };
  const LAYOUT_BLOCK_TAGS = { __proto__: null, nav: 1, form: 1, header: 1, footer: 1, aside: 1, main: 1, article: 1, section: 1 };
  // The footer phrases, case-insensitively. The same as looking for them in the lowercased text:
  // the only non-ASCII characters that lowercase to ASCII letters (U+0130, U+212A) cannot complete one.
  const FOOTER_PHRASES = /copyright|\u00a9|privacy|terms of|all rights reserved/i;
  const TUPLE_SCHEMES = { __proto__: null, "http:": 1, "https:": 1, "ws:": 1, "wss:": 1, "ftp:": 1 };
  // [hint, substrings] in alphabetical hint order, so output is sorted by construction.
  const HINTS = [
    ["active", ["active", "is-active", "current"]], ["badge", ["badge", "chip", "tag", "pill"]],
    ["card", null], ["collapsed", ["collapsed", "is-closed"]], ["danger", ["danger", "destructive", "delete"]],
    ["disabled", ["disabled", "is-disabled"]], ["error", ["error", "invalid"]],
    ["expanded", ["expanded", "is-open", "show"]], ["hero", ["hero", "jumbotron", "banner"]],
    ["hidden", ["hidden", "sr-only", "visually-hidden"]], ["large", ["lg", "large", "xl"]],
    ["loading", ["loading", "spinner", "skeleton"]], ["modal", ["modal", "dialog", "popup", "overlay"]],
    ["notification", ["toast", "snackbar", "notification", "alert"]], ["primary", ["primary", "cta"]],
    ["required", ["required", "mandatory"]], ["secondary", ["secondary"]],
    ["selected", ["selected", "is-selected", "checked"]], ["small", ["sm", "small", "xs", "mini"]],
    ["sticky", ["sticky", "fixed", "pinned"]], ["success", ["success"]], ["warning", ["warning", "caution"]],
  ];
  const ARIA_KEYS = {
    __proto__: null, "aria-expanded": "expanded", "aria-selected": "selected", "aria-checked": "checked",
    "aria-readonly": "readonly", "aria-disabled": "disabled", "aria-current": "current", "aria-pressed": "pressed",
    "aria-hidden": "hidden", "aria-controls": "controls", "aria-haspopup": "haspopup", "aria-invalid": "invalid",
    "aria-placeholder": "placeholder", "aria-autocomplete": "autocomplete",
    "aria-activedescendant": "active_descendant", "aria-errormessage": "errormessage",
    "aria-keyshortcuts": "keyshortcuts", "aria-roledescription": "roledescription", "aria-busy": "busy",
    "aria-live": "live", "aria-atomic": "atomic", "aria-relevant": "relevant", "aria-owns": "owns",
    "aria-flowto": "flowto", "aria-details": "details", "aria-multiline": "multiline",
    "aria-multiselectable": "multiselectable", "aria-orientation": "orientation", "aria-sort": "sort",
    "aria-level": "level", "aria-posinset": "posinset", "aria-setsize": "setsize", "aria-grabbed": "grabbed",
    "aria-dropeffect": "dropeffect", "aria-valuemin": "valuemin", "aria-valuemax": "valuemax",
    "aria-valuenow": "valuenow", "aria-valuetext": "valuetext", "aria-label": "label",
    "aria-labelledby": "labelledby", "aria-describedby": "describedby",
  };
  // Global attributes copied as raw strings.
  const RAW_GLOBALS = {
    __proto__: null, accesskey: "accesskey", title: "title", role: "source_role", name: "name", accept: "accept",
    autocomplete: "autocomplete", inputmode: "inputmode", enterkeyhint: "enterkeyhint",
    autocapitalize: "autocapitalize", dirname: "dirname", form: "form", formaction: "formaction",
    formmethod: "formmethod", formenctype: "formenctype", formtarget: "formtarget", list: "list",
    popovertarget: "popovertarget", popovertargetaction: "popovertargetaction", commandfor: "commandfor",
    command: "command", popover: "popover", step: "step", pattern: "pattern",
  };
  const REGION_LABEL_ATTRS = ["aria-label", "title", "placeholder"];
  const TEST_ID_ATTRS = ["data-testid", "data-test", "data-qa"];
  const INT_GLOBALS = { __proto__: null, tabindex: 1, minlength: 1, maxlength: 1, min: 1, max: 1 };
  const SHA_K = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
  ];
  const SHA_KI = new Int32Array(SHA_K);
  const SHA_W = new Int32Array(64);
  let shaBytes = new Uint8Array(512);
  let shaWords = new Int32Array(256);

  // ---- per-compile state
  let visits = 0;
  let useMap = false;
  try {
    const probe = {};
    const m = new NativeMap();
    m.set("p", probe);
    useMap = m.get("p") === probe && m.size === 1;
  } catch (e) {
    useMap = false;
  }
  const nodes = useMap ? new NativeMap() : { __proto__: null };
  const shownCache = useMap ? new NativeMap() : null;
  // A Map: a compile may add many fresh keys, each of which an object would intern.
  const idCounts = new NativeMap();
  const regionCounters = { __proto__: null };
  const regions = [];
  let origin = "null";
  let mainMode = false;
  let paraCounter = 0;
  // Incremental compile (docs/contract.md#incremental-compile): `state` is what this world keeps
  // between compiles of its document (null: a compile that neither reads nor records it).
  if (cache !== null && cache !== undefined && cache.s === undefined) cache.s = null;
  const state = cache === null || cache === undefined ? null : newState(cache);
  const recording = state !== null;
  let incremental = false; // replay clean subtrees in this compile
  let frame = null; // the recording of the subtree being walked
  const idLog = []; // [record, hash, node] in allocation order, for the events that replay them

  function tick() {
    visits++;
    if ((visits & 1023) === 0 && (visits > MAX_VISITS || dateNow() > deadline)) throw BUDGET;
  }
  function add(list, item) {
    list[list.length] = item;
  }

  // ---- text (Unicode White_Space, code points, UTF-8 bytes)
  function isWs(c) {
    if (c > 32 && c < 0x85) return false;
    return c === 32 || (c >= 9 && c <= 13) || c === 0x85 || c === 0xa0 || c === 0x1680 ||
      (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000;
  }
  function isHigh(c) { return c >= 0xd800 && c <= 0xdbff; }
  function isLow(c) { return c >= 0xdc00 && c <= 0xdfff; }
  function collapse(s) {
    let out = "";
    let start = -1;
    const n = s.length;
    for (let i = 0; i < n; i++) {
      if (isWs(s.charCodeAt(i))) {
        if (start >= 0) { out = out === "" ? s.slice(start, i) : out + " " + s.slice(start, i); start = -1; }
      } else if (start < 0) start = i;
    }
    if (start >= 0) out = out === "" ? (start === 0 ? s : s.slice(start)) : out + " " + s.slice(start);
    return out;
  }
  function trimWs(s) {
    let a = 0;
    let b = s.length;
    while (a < b && isWs(s.charCodeAt(a))) a++;
    while (b > a && isWs(s.charCodeAt(b - 1))) b--;
    return a === 0 && b === s.length ? s : s.slice(a, b);
  }
  function cpLength(s) {
    const n = s.length;
    let count = 0;
    for (let i = 0; i < n; i++) {
      if (isHigh(s.charCodeAt(i)) && i + 1 < n && isLow(s.charCodeAt(i + 1))) i++;
      count++;
    }
    return count;
  }
  function cpPrefix(s, k) {
    const n = s.length;
    let i = 0;
    for (let count = 0; i < n && count < k; count++) {
      if (isHigh(s.charCodeAt(i)) && i + 1 < n && isLow(s.charCodeAt(i + 1))) i += 2;
      else i++;
    }
    return s.slice(0, i);
  }
  // UTF-8 width of the code point starting at t[i]; 4 means a surrogate pair (two units).
  function utf8Width(t, i, n) {
    const c = t.charCodeAt(i);
    if (c < 0x80) return 1;
    if (c < 0x800) return 2;
    return isHigh(c) && i + 1 < n && isLow(t.charCodeAt(i + 1)) ? 4 : 3;
  }
  function utf8Length(s) {
    const n = s.length;
    let bytes = 0;
    for (let i = 0; i < n; ) {
      const w = utf8Width(s, i, n);
      bytes += w;
      i += w === 4 ? 2 : 1;
    }
    return bytes;
  }
  // The same count for large strings (the document's HTML, the SOM), by native code; lone
  // surrogates become U+FFFD there, 3 bytes, as in utf8Length.
  const NON_ASCII = /[^\x00-\x7f]/;
  function byteLength(s) {
    return NON_ASCII.test(s) ? encoder.encode(s).length : s.length;
  }
  // Cut at a sentence end or a word boundary within `max` UTF-8 bytes (docs/contract.md#text-and-truncation).
  function smartTruncate(t, max) {
    const n = t.length;
    let bytes = 0;
    let i = 0;
    let punctIdx = -1;
    let punctByte = -1;
    let wsIdx = -1;
    while (i < n) {
      const w = utf8Width(t, i, n);
      if (bytes + w > max) break;
      const c = t.charCodeAt(i);
      if (c === 46 || c === 33 || c === 63) { punctIdx = i; punctByte = bytes; }
      else if (isWs(c)) wsIdx = i;
      bytes += w;
      i += w === 4 ? 2 : 1;
    }
    if (i >= n) return t;
    if (punctIdx >= 0 && punctByte >= ((max * 2) / 5 | 0)) return t.slice(0, punctIdx + 1);
    if (wsIdx >= 0) return t.slice(0, wsIdx) + "...";
    const target = bytes - 3 > 1 ? bytes - 3 : 1;
    let b = 0;
    let j = 0;
    while (j < n) {
      const w = utf8Width(t, j, n);
      if (b + w > target) break;
      b += w;
      j += w === 4 ? 2 : 1;
    }
    return t.slice(0, j) + "...";
  }
  function normalizeText(raw) {
    const t = collapse(raw);
    return t.length > 200 && cpLength(t) > 200 ? smartTruncate(t, 200) : t;
  }
  function truncateText(raw, max) {
    const t = collapse(raw);
    return t.length > max && cpLength(t) > max ? cpPrefix(t, max - 3) + "..." : t;
  }
  function lower(s) { return s.toLowerCase(); }
  function has(s, word) { return s.indexOf(word) >= 0; }
  function hasAny(s, words) {
    for (let i = 0; i < words.length; i++) if (s.indexOf(words[i]) >= 0) return true;
    return false;
  }
  // Split on White_Space and visit lowercased tokens until `visit` returns non-null.
  function firstToken(value, table) {
    const n = value.length;
    let start = -1;
    for (let i = 0; i <= n; i++) {
      if (i === n || isWs(value.charCodeAt(i))) {
        if (start >= 0) {
          const hit = table[lower(value.slice(start, i))];
          if (hit !== undefined) return hit;
          start = -1;
        }
      } else if (start < 0) start = i;
    }
    return null;
  }
  function splitWs(value) {
    const out = [];
    const n = value.length;
    let start = -1;
    for (let i = 0; i <= n; i++) {
      if (i === n || isWs(value.charCodeAt(i))) {
        if (start >= 0) { add(out, value.slice(start, i)); start = -1; }
      } else if (start < 0) start = i;
    }
    return out;
  }
  function joinList(list, sep) {
    let out = "";
    for (let i = 0; i < list.length; i++) out = i === 0 ? list[i] : out + sep + list[i];
    return out;
  }

  // ---- JSON fragments (serde_json escaping; lone surrogates escaped so Python can encode)
  function uEscape(c) {
    return "\\u" + HEX[(c >> 12) & 15] + HEX[(c >> 8) & 15] + HEX[(c >> 4) & 15] + HEX[c & 15];
  }
  function q(s) {
    const n = s.length;
    let i = 0;
    for (; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c < 32 || c === 34 || c === 92 || (c >= 0xd800 && c <= 0xdfff)) break;
    }
    if (i === n) return '"' + s + '"';
    let out = '"';
    let from = 0;
    for (; i < n; i++) {
      const c = s.charCodeAt(i);
      let rep = null;
      if (c === 34) rep = '\\"';
      else if (c === 92) rep = "\\\\";
      else if (c < 32) {
        rep = c === 10 ? "\\n" : c === 13 ? "\\r" : c === 9 ? "\\t" : c === 8 ? "\\b" : c === 12 ? "\\f" : uEscape(c);
      } else if (isHigh(c)) {
        if (i + 1 < n && isLow(s.charCodeAt(i + 1))) { i++; continue; }
        rep = uEscape(c);
      } else if (isLow(c)) rep = uEscape(c);
      if (rep !== null) { out += s.slice(from, i) + rep; from = i + 1; }
    }
    return out + s.slice(from) + '"';
  }
  function sortStrings(list) {
    for (let i = 1; i < list.length; i++) {
      const v = list[i];
      let j = i - 1;
      while (j >= 0 && list[j] > v) { list[j + 1] = list[j]; j--; }
      list[j + 1] = v;
    }
    return list;
  }
  // An object of JSON fragments, keys in alphabetical order (serde_json::Map).
  function objectJson(map) {
    const keys = [];
    for (const k in map) add(keys, k);
    sortStrings(keys);
    let out = "{";
    for (let i = 0; i < keys.length; i++) out += (i ? "," : "") + q(keys[i]) + ":" + map[keys[i]];
    return out + "}";
  }
  function arrayJson(fragments) {
    return "[" + joinList(fragments, ",") + "]";
  }
  // Any parsed JSON value (JSON-LD), objects with sorted keys.
  function valueJson(v, depth) {
    if (depth > 64) return "null";
    if (v === null) return "null";
    const t = typeof v;
    if (t === "string") return q(v);
    if (t === "boolean") return v ? "true" : "false";
    if (t === "number") return v === v && v !== Infinity && v !== -Infinity ? "" + v : "null";
    if (t !== "object") return "null";
    if (isArray(v)) {
      const parts = [];
      for (let i = 0; i < v.length; i++) add(parts, valueJson(v[i], depth + 1));
      return arrayJson(parts);
    }
    const map = { __proto__: null };
    for (const k in v) map[k] = valueJson(v[k], depth + 1);
    return objectJson(map);
  }
  // Rust i64 parse: optional sign, ASCII digits, no whitespace.
  function intJson(raw) {
    const n = raw.length;
    let i = raw.charCodeAt(0) === 43 || raw.charCodeAt(0) === 45 ? 1 : 0;
    if (i >= n) return null;
    for (let j = i; j < n; j++) {
      const c = raw.charCodeAt(j);
      if (c < 48 || c > 57) return null;
    }
    const negative = raw.charCodeAt(0) === 45;
    while (i < n - 1 && raw.charCodeAt(i) === 48) i++;
    const digits = raw.slice(i);
    const limit = negative ? "9223372036854775808" : "9223372036854775807";
    if (digits.length > 19 || (digits.length === 19 && digits > limit)) return null;
    return negative && digits !== "0" ? "-" + digits : digits;
  }
  function intOrString(raw) {
    const v = intJson(raw);
    return v === null ? q(raw) : v;
  }

  // ---- SHA-256 over UTF-8 (synchronous; crypto.subtle is async)
  // Two hex digits per byte: the id's 12 digits are 6 concatenations, not 16.
  const HEX_BYTES = [];
  for (let i = 0; i < 256; i++) HEX_BYTES[i] = HEX[i >> 4] + HEX[i & 15];
  // Message words (big-endian) are written straight from the string when it is ASCII (ids
  // are origin|role|name|path, almost always ASCII); other text goes through UTF-8 bytes.
  function sha256Hex12(s) {
    const len = s.length;
    let words = shaWords;
    let n = 0; // message length in bytes
    let ascii = true;
    const need = ((len * 3) >> 2) + 32; // words for the UTF-8 worst case plus padding
    if (need > words.length) words = shaWords = new Int32Array(need);
    let i = 0;
    for (; i + 3 < len; i += 4) {
      const a = s.charCodeAt(i), b = s.charCodeAt(i + 1), c = s.charCodeAt(i + 2), d = s.charCodeAt(i + 3);
      if ((a | b | c | d) >= 0x80) { ascii = false; break; }
      words[i >> 2] = (a << 24) | (b << 16) | (c << 8) | d;
    }
    if (ascii) {
      let w = 0;
      let shift = 24;
      for (; i < len; i++) {
        const c = s.charCodeAt(i);
        if (c >= 0x80) { ascii = false; break; }
        w |= c << shift;
        shift -= 8;
      }
      if (ascii) {
        words[len >> 2] = w | (0x80 << shift);
        n = len;
      }
    }
    if (!ascii) n = utf8Words(s, words);
    const nw = ((n + 8) >> 6) * 16 + 16; // words incl. padding and length
    for (let j = (n >> 2) + 1; j < nw; j++) words[j] = 0;
    words[nw - 2] = (n / 0x20000000) | 0;
    words[nw - 1] = n << 3;
    let h0 = 0x6a09e667 | 0, h1 = 0xbb67ae85 | 0, h2 = 0x3c6ef372 | 0, h3 = 0xa54ff53a | 0;
    let h4 = 0x510e527f | 0, h5 = 0x9b05688c | 0, h6 = 0x1f83d9ab | 0, h7 = 0x5be0cd19 | 0;
    const W = SHA_W;
    const K = SHA_KI;
    for (let off = 0; off < nw; off += 16) {
      for (let t = 0; t < 16; t++) W[t] = words[off + t];
      for (let t = 16; t < 64; t++) {
        const x = W[t - 15];
        const y = W[t - 2];
        const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
        const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
        W[t] = W[t - 16] + s0 + W[t - 7] + s1;
      }
      let a = h0, b = h1, c = h2, d = h3, e = h4, f = h5, g = h6, h = h7;
      for (let t = 0; t < 64; t++) {
        const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
        const t1 = (h + S1 + ((e & f) ^ (~e & g)) + K[t] + W[t]) | 0;
        const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
        const t2 = (S0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
        h = g; g = f; f = e; e = (d + t1) | 0; d = c; c = b; b = a; a = (t1 + t2) | 0;
      }
      h0 = (h0 + a) | 0; h1 = (h1 + b) | 0; h2 = (h2 + c) | 0; h3 = (h3 + d) | 0;
      h4 = (h4 + e) | 0; h5 = (h5 + f) | 0; h6 = (h6 + g) | 0; h7 = (h7 + h) | 0;
    }
    const x = HEX_BYTES;
    return x[h0 >>> 24] + x[(h0 >>> 16) & 255] + x[(h0 >>> 8) & 255] + x[h0 & 255] + x[h1 >>> 24] + x[(h1 >>> 16) & 255];
  }
  // UTF-8 bytes of `s` (lone surrogates as U+FFFD) into big-endian words with the 0x80
  // terminator; returns the byte length.
  function utf8Words(s, words) {
    const len = s.length;
    if (len * 3 + 72 > shaBytes.length) shaBytes = new Uint8Array(len * 3 + 72);
    const buf = shaBytes;
    let n = 0;
    for (let i = 0; i < len; i++) {
      let c = s.charCodeAt(i);
      if (c < 0x80) buf[n++] = c;
      else if (c < 0x800) { buf[n++] = 0xc0 | (c >> 6); buf[n++] = 0x80 | (c & 63); }
      else if (isHigh(c) && i + 1 < len && isLow(s.charCodeAt(i + 1))) {
        c = 0x10000 + ((c - 0xd800) << 10) + (s.charCodeAt(++i) - 0xdc00);
        buf[n++] = 0xf0 | (c >> 18); buf[n++] = 0x80 | ((c >> 12) & 63);
        buf[n++] = 0x80 | ((c >> 6) & 63); buf[n++] = 0x80 | (c & 63);
      } else {
        if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd;
        buf[n++] = 0xe0 | (c >> 12); buf[n++] = 0x80 | ((c >> 6) & 63); buf[n++] = 0x80 | (c & 63);
      }
    }
    buf[n] = 0x80;
    buf[n + 1] = 0; buf[n + 2] = 0; buf[n + 3] = 0;
    for (let j = 0; j <= n; j += 4) words[j >> 2] = (buf[j] << 24) | (buf[j + 1] << 16) | (buf[j + 2] << 8) | buf[j + 3];
    return n;
  }
  function idName(name) {
    const t = trimWs(lower(name));
    return t.length > 100 ? cpPrefix(t, 100) : t;
  }
  function elementId(role, name, path, node, rec) {
    allocId(rec, "e_" + sha256Hex12(origin + "|" + role + "|" + idName(name) + "|" + path), node);
  }
  // Gives `rec` the id for hash `raw` (with its collision suffix, in allocation order); true
  // when that differs from the id it had (a replayed record's cached JSON is then stale).
  function allocId(rec, raw, node) {
    if (recording) add(idLog, [rec, raw, node]);
    return assignId(rec, raw, node);
  }
  // The same for a recorded [rec, raw, node] (a replay only runs while recording), logged as it
  // is (the triple never changes).
  function replayId(entry) {
    add(idLog, entry);
    return assignId(entry[0], entry[1], entry[2]);
  }
  // A hash's first id is the hash itself (then in `nodes`, where no suffixed id can equal it):
  // only collisions are counted.
  function assignId(rec, raw, node) {
    let id = raw;
    if (useMap ? nodes.has(raw) : nodes[raw] !== undefined) {
      const seen = idCounts.get(raw);
      const n = seen === undefined ? 2 : seen + 1;
      idCounts.set(raw, n);
      id = raw + "_" + n;
    }
    if (useMap) nodes.set(id, node);
    else nodes[id] = node;
    if (rec.id === id) return false;
    rec.id = id;
    return true;
  }

  // ---- attributes: each element's are read once, into a record name -> value (what
  // el.getAttribute(name) answers, undefined for null): one call per attribute instead of one per
  // question. The names asked are lowercase, for which getAttribute answers the first attribute of
  // exactly that qualified name, as the record keeps it.
  const NO_ATTRIBUTES = { __proto__: null };
  function readAttributes(el) {
    if (!el.hasAttributes()) return NO_ATTRIBUTES;
    const names = el.getAttributeNames();
    const a = { __proto__: null };
    for (let i = 0; i < names.length; i++) {
      const name = names[i];
      if (a[name] !== undefined) continue;
      const v = el.getAttribute(name);
      if (v !== null) a[name] = v;
    }
    return a;
  }

  // ---- visibility and stripping
  function staticStrip(a, tag) {
    if (STRIP_TAGS[tag] === 1) return true;
    if (tag === "svg" && !(a.role === "img" && (a["aria-label"] !== undefined || a.title !== undefined))) return true;
    if (a === NO_ATTRIBUTES) return false;
    if (a.hidden !== undefined) return true;
    const ariaHidden = a["aria-hidden"];
    if (ariaHidden !== undefined && lower(ariaHidden) === "true") return true;
    const cls = a.class;
    const id = a.id;
    const lc = cls === undefined ? "" : lower(cls);
    const li = id === undefined ? "" : lower(id);
    if ((lc !== "" && hasAny(lc, CONSENT_WORDS)) || (li !== "" && hasAny(li, CONSENT_WORDS))) return true;
    const ariaLabel = a["aria-label"];
    if (ariaLabel !== undefined) {
      const la = lower(ariaLabel);
      if (has(la, "cookie") || has(la, "consent")) return true;
    }
    const role = a.role;
    if (role !== undefined && (tag === "div" || tag === "aside" || tag === "section")) {
      const r = lower(role);
      if ((r === "dialog" || r === "alertdialog") &&
        (has(lc, "modal") || has(lc, "overlay") || has(lc, "popup") || has(li, "modal") || has(li, "overlay"))) return true;
    }
    if (li !== "" && CONSENT_IDS[li] === 1) return true;
    if (tag === "img" && (a.alt === "" || role === "presentation")) return true;
    return false;
  }
  // D3: the live computed style replaces the reference's <style>/inline-style parsing.
  // Fast path: checkVisibility({visibilityProperty}) is true only for an element with a box
  // whose computed visibility is visible, so it is never hidden by the rule below; any other
  // answer (no box: display:none ancestors or contents, closed details ...) asks the style.
  const VISIBLE_OPTIONS = { __proto__: null, visibilityProperty: true };
  function styleHidden(el) {
    if (typeof el.checkVisibility === "function" && el.checkVisibility(VISIBLE_OPTIONS) === true) return false;
    const cs = computedStyle(el);
    if (cs.display === "none") return true;
    const v = cs.visibility;
    return v === "hidden" || v === "collapse";
  }
  // The attribute record of `el`, or null when it is stripped (kept for the compile: the walks
  // ask it of every element they read).
  function shown(el) {
    if (shownCache !== null) {
      const cached = shownCache.get(el);
      if (cached !== undefined) return cached;
    }
    if (state !== null) watchRootOf(el); // outside the try: it must never decide the result
    let result;
    try {
      result = readAttributes(el);
      if (staticStrip(result, el.localName) || styleHidden(el)) result = null;
    } catch (e) {
      result = null; // a node that throws on inspection is treated as absent
    }
    if (shownCache !== null) shownCache.set(el, result);
    return result;
  }
  function isStripped(el) {
    return shown(el) === null;
  }
  // An element's shadow tree decides whether it shows (`:host` rules) and what of its light children
  // does (slots, their styles, `::slotted`): every walk asks shown() before it reads an element
  // or its children, so here that root is watched, walked or not.
  function watchRootOf(el) {
    const root = openShadowRoot(el);
    if (root !== null) observeRoot(root);
  }
  function inStrippedSubtree(el, root) {
    for (let n = el; n !== null && n !== root; n = n.parentNode) {
      if (n.nodeType === 1 && isStripped(n)) return true;
    }
    return false;
  }
  // Raw visible text: every text node under `node`, joined with no separator. A shadow root on
  // the way is never walked, but its slots decide what of the light DOM shows: it is watched
  // (watchRootOf).
  function visibleText(node) {
    let out = "";
    for (let k = node.firstChild; k !== null; k = k.nextSibling) {
      const t = k.nodeType;
      if (t === 3) out += k.data;
      else if (t === 1 && !isStripped(k)) out += visibleText(k);
    }
    return out;
  }
  // <label> text: text nodes joined with spaces, skipping labelable descendants.
  function labelText(node, parts) {
    for (let k = node.firstChild; k !== null; k = k.nextSibling) {
      const t = k.nodeType;
      if (t === 3) add(parts, k.data);
      else if (t === 1 && !isStripped(k) && LABELABLE[k.localName] !== 1) labelText(k, parts);
    }
    return parts;
  }
  function firstVisibleChild(el, tag) {
    for (let k = el.firstElementChild; k !== null; k = k.nextElementSibling) {
      if (k.localName === tag && !isStripped(k)) return k;
    }
    return null;
  }
  // Normalised text of the first visible <tag> child (caption, legend, summary); null if none.
  function childText(el, tag) {
    const child = firstVisibleChild(el, tag);
    return child === null ? null : normalizeText(visibleText(child));
  }
  function putChildText(attrs, el, tag) {
    const text = childText(el, tag);
    if (text !== null && text !== "") attrs[tag] = q(text);
  }

  // ---- label index (docs/contract.md#labels), one per tree scope (document body, each shadow root), lazy
  function makeScope(root) {
    return { root, ids: null, idTexts: { __proto__: null }, fors: null, wrapped: null, footerFree: null };
  }
  function scopeIds(scope) {
    if (scope.ids === null) {
      const ids = { __proto__: null };
      const list = scope.root.querySelectorAll("[id]");
      for (let i = 0; i < list.length; i++) {
        const el = list[i];
        const id = el.getAttribute("id");
        const slot = ids[id];
        if (slot === undefined) ids[id] = [el];
        else add(slot, el);
      }
      scope.ids = ids;
    }
    return scope.ids;
  }
  function elementIndexText(el) {
    return el.localName === "label" ? normalizeText(joinList(labelText(el, []), " ")) : normalizeText(visibleText(el));
  }
  // by_id[id]: text of the last visible element with that id and non-empty text.
  function byIdText(scope, id) {
    const cached = scope.idTexts[id];
    if (cached !== undefined) return cached;
    const candidates = scopeIds(scope)[id];
    if (state !== null) {
      state.refIds[id] = 1;
      if (candidates !== undefined) for (let i = 0; i < candidates.length; i++) addRef(candidates[i]);
    }
    let text = "";
    if (candidates !== undefined) {
      for (let i = candidates.length - 1; i >= 0 && text === ""; i--) {
        const el = candidates[i];
        if (!inStrippedSubtree(el, scope.root)) text = elementIndexText(el);
      }
    }
    scope.idTexts[id] = text;
    return text;
  }
  function idRefsText(scope, value) {
    const ids = splitWs(value);
    const parts = [];
    for (let i = 0; i < ids.length; i++) {
      const t = byIdText(scope, ids[i]);
      if (t !== "") add(parts, t);
    }
    return normalizeText(joinList(parts, " "));
  }
  // The label index of `scope`: `fors` (reference by_for) and, D8, `wrapped`: the first
  // labelable descendant of a <label> without `for` when that control has no id, with the
  // label's text (the accessible name a browser computes; the reference gives it none).
  // Kept between a document's compiles: whatever could change it (a label, its ancestors, a
  // control inside one, a `for` or `id`) means a full compile, which starts a fresh record.
  function labelIndex(scope) {
    if (scope.fors !== null) return scope;
    const kept = state === null ? undefined : state.labels.get(scope.root);
    if (kept !== undefined) {
      scope.fors = kept.fors;
      scope.wrapped = kept.wrapped;
      return scope;
    }
    const fors = { __proto__: null };
    const wrapped = useMap ? new NativeMap() : null;
    const labels = scope.root.querySelectorAll("label");
    for (let i = 0; i < labels.length; i++) {
      const label = labels[i];
      try {
        if (inStrippedSubtree(label, scope.root)) continue;
        let target = null;
        let bare = null;
        const forAttr = label.getAttribute("for");
        if (forAttr !== null) {
          const t = trimWs(forAttr);
          if (t !== "") target = t;
        } else {
          const inner = label.querySelectorAll("button,input,meter,output,progress,select,textarea");
          for (let j = 0; j < inner.length && target === null; j++) {
            const innerId = inner[j].getAttribute("id");
            if (innerId !== null && innerId !== "") target = innerId;
            else if (j === 0) bare = inner[j];
          }
        }
        if (target === null && bare === null) continue;
        const text = normalizeText(joinList(labelText(label, []), " "));
        if (text === "") continue;
        if (target !== null) fors[target] = text;
        if (bare !== null && wrapped !== null) wrapped.set(bare, text);
      } catch (e) {
        if (e === BUDGET) throw e;
      }
    }
    if (state !== null) for (let i = 0; i < labels.length; i++) addRef(labels[i]);
    scope.fors = fors;
    scope.wrapped = wrapped;
    if (state !== null) state.labels.set(scope.root, { fors, wrapped });
    return scope;
  }
  function byForText(scope, id) {
    const text = labelIndex(scope).fors[id];
    return text === undefined ? null : text;
  }
  function wrappedText(scope, el) {
    const wrapped = labelIndex(scope).wrapped;
    const text = wrapped === null ? undefined : wrapped.get(el);
    return text === undefined ? null : text;
  }

  // ---- roles
  function inputType(a) {
    const t = a.type;
    return t === undefined ? "text" : lower(t);
  }
  // The element role of `el`, or null (no element). Tables are not layout-checked here:
  // every walker that can emit a table checks is_layout_table before asking.
  function roleOf(a, tag) {
    const roleAttr = a.role;
    if (roleAttr !== undefined) return firstToken(roleAttr, ARIA_ELEMENT_ROLES);
    if (tag === "a") return a.href !== undefined ? "link" : null;
    if (tag === "input") {
      const t = inputType(a);
      if (BUTTON_INPUTS[t] === 1) return "button";
      if (t === "checkbox") return "checkbox";
      if (t === "radio") return "radio";
      return t === "hidden" ? null : "text_input";
    }
    const r = TAG_ROLES[tag];
    return r === undefined ? null : r;
  }
  function landmarkOf(a, tag, scoped) {
    const roleAttr = a.role;
    if (roleAttr !== undefined) {
      const hit = firstToken(roleAttr, LANDMARK_TOKENS);
      if (hit !== null) return hit;
    }
    if (scoped && (tag === "header" || tag === "footer")) return null; // D5
    const byTag = LANDMARK_TAGS[tag];
    return byTag === undefined ? null : byTag;
  }
  function hintFor(s) {
    if (s === "") return null;
    if (has(s, "nav") || has(s, "menu")) return LANDMARK_TAGS.nav;
    if (has(s, "main-content") || has(s, "maincontent") || has(s, "primary-content") || has(s, "article-body") || has(s, "main")) return LANDMARK_TAGS.main;
    if (has(s, "sidebar") || has(s, "side-bar") || has(s, "aside") || has(s, "rail")) return LANDMARK_TAGS.aside;
    if (has(s, "footer") || has(s, "copyright")) return LANDMARK_TAGS.footer;
    if (has(s, "header") || has(s, "masthead")) return LANDMARK_TAGS.header;
    if (has(s, "search")) return LANDMARK_TOKENS.search;
    return null;
  }
  function classIdHint(a) {
    const cls = a.class;
    const byClass = cls === undefined ? null : hintFor(lower(cls));
    if (byClass !== null) return byClass;
    const id = a.id;
    return id === undefined ? null : hintFor(lower(id));
  }

  // ---- heuristics (docs/contract.md#traversal): these look at the raw subtree
  function linkCount(el) {
    return el.querySelectorAll("a[href]").length + (el.localName === "a" && el.hasAttribute("href") ? 1 : 0);
  }
  function looksLikeNavigation(el) {
    const direct = el.childNodes.length;
    if (direct === 0) return false;
    const links = linkCount(el);
    return links >= 3 && links / direct > 0.5;
  }
  function rawTextNoScripts(node) {
    let out = "";
    for (let k = node.firstChild; k !== null; k = k.nextSibling) {
      if (k.nodeType === 3) out += k.data;
      else if (k.nodeType === 1 && k.localName !== "script" && k.localName !== "style") out += rawTextNoScripts(k);
    }
    return out;
  }
  // An element's text is part of its tree scope's text: when that has no footer phrase, no
  // element in it has one (asked once per scope, not of every div and section).
  function looksLikeFooter(el, scope) {
    if (scope.footerFree === null) {
      const all = scope.root.textContent;
      scope.footerFree = typeof all === "string" && !FOOTER_PHRASES.test(all);
    }
    if (scope.footerFree) return false;
    const quick = el.textContent;
    if (typeof quick !== "string" || !FOOTER_PHRASES.test(quick)) return false;
    return FOOTER_PHRASES.test(rawTextNoScripts(el));
  }
  function hasMainWithin6(el) {
    const t = el.localName;
    if (t === "main" || t === "article") return true;
    const list = el.querySelectorAll("main,article");
    for (let i = 0; i < list.length; i++) {
      let depth = 0;
      for (let n = list[i]; n !== null && n !== el && depth <= 6; n = n.parentNode) depth++;
      if (depth <= 6) return true;
    }
    return false;
  }
  function isLayoutTable(table) {
    let dataMarker = false;
    let layout = false;
    let links = 0;
    let cells = 0;
    const stack = [];
    for (let k = table.lastElementChild; k !== null; k = k.previousElementSibling) add(stack, k);
    while (stack.length > 0) {
      tick();
      const el = stack[stack.length - 1];
      stack.length = stack.length - 1;
      const tag = el.localName;
      if (tag === "th" || tag === "caption") { dataMarker = true; break; }
      if (tag === "table") { layout = true; continue; }
      if (LAYOUT_BLOCK_TAGS[tag] === 1) layout = true;
      else if (tag === "div" && el.querySelectorAll("a[href]").length >= 2) layout = true;
      else if (tag === "a" && el.hasAttribute("href")) links++;
      else if (tag === "td") cells++;
      for (let k = el.lastElementChild; k !== null; k = k.previousElementSibling) add(stack, k);
    }
    if (dataMarker) return false;
    if (layout) return true;
    if (table.hasAttribute("cellpadding") || table.hasAttribute("cellspacing") || table.hasAttribute("border") ||
      table.hasAttribute("width") || table.hasAttribute("bgcolor")) return true;
    return links >= 20 || cells <= 2;
  }

  // ---- element construction (docs/contract.md#elements-roles-and-actions)
  function newElement(id, role, text) {
    return { id, role, html_id: null, text, label: null, attrs: null, hints: null, shadow: null, href: null, json: null, jb: -1, jc: 0, ji: 0 };
  }
  function resolveLabel(el, a, tag, text, scope) {
    const fromAttrs = a !== NO_ATTRIBUTES ? attributeLabel(el, a, tag, text, scope)
      : LABELABLE[tag] === 1 ? wrappedLabel(el, text, scope) : null;
    if (fromAttrs !== null || tag !== "fieldset") return fromAttrs;
    return childText(el, "legend");
  }
  function attributeLabel(el, a, tag, text, scope) {
    const labelledBy = a["aria-labelledby"];
    if (labelledBy !== undefined) {
      const t = idRefsText(scope, labelledBy);
      if (t !== "" && t !== text) return t;
    }
    const ariaLabel = a["aria-label"];
    if (ariaLabel !== undefined && ariaLabel !== "") {
      const t = normalizeText(ariaLabel);
      if (t !== text) return t;
    }
    const id = a.id;
    if (id !== undefined && id !== "") {
      const t = byForText(scope, id);
      if (t !== null && t !== text) return t;
    } else if (LABELABLE[tag] === 1) {
      const t = wrappedLabel(el, text, scope);
      if (t !== null) return t;
    }
    const title = a.title;
    if (title !== undefined && title !== "") {
      const t = normalizeText(title);
      if (t !== text) return t;
    }
    const placeholder = a.placeholder;
    if (placeholder !== undefined && placeholder !== "") return normalizeText(placeholder);
    if (tag === "input") {
      const type = inputType(a);
      const source = type === "image" ? a.alt
        : type === "submit" || type === "button" || type === "reset" ? a.value : undefined;
      if (source !== undefined) {
        const t = normalizeText(source);
        if (t !== "" && t !== text) return t;
      }
    }
    return null;
  }
  function wrappedLabel(el, text, scope) { // D8
    const t = wrappedText(scope, el);
    return t !== null && t !== text ? t : null;
  }
  function putRaw(attrs, a, name, key) {
    const v = a[name];
    if (v !== undefined) attrs[key] = q(v);
  }
  function putFlag(attrs, a, name) {
    if (a[name] !== undefined) attrs[name] = "true";
  }
  function selectAttrs(el, a, attrs) {
    const multiple = a.multiple !== undefined;
    const options = [];
    for (let k = el.firstElementChild; k !== null; k = k.nextElementSibling) {
      if (isStripped(k)) continue;
      if (k.localName === "option") add(options, [k, null, false]);
      else if (k.localName === "optgroup") {
        const label = k.getAttribute("label");
        const disabled = k.hasAttribute("disabled");
        for (let o = k.firstElementChild; o !== null; o = o.nextElementSibling) {
          if (o.localName === "option" && !isStripped(o)) add(options, [o, label === "" ? null : label, disabled]);
        }
      }
    }
    const rows = [];
    let anySelected = false;
    for (let i = 0; i < options.length; i++) {
      const o = options[i][0];
      const text = normalizeText(visibleText(o));
      const valueAttr = o.getAttribute("value");
      const selected = o.selected === true; // D1: live selectedness
      anySelected = anySelected || selected;
      add(rows, { disabled: options[i][2] || o.hasAttribute("disabled"), group: options[i][1], selected, text, value: valueAttr === null ? text : valueAttr });
    }
    if (!multiple && !anySelected && rows.length > 0) rows[0].selected = true;
    const fragments = [];
    const selectedValues = [];
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i];
      let s = "{";
      if (r.disabled) s += '"disabled":true,';
      if (r.group !== null) s += '"group":' + q(r.group) + ",";
      if (r.selected) { s += '"selected":true,'; add(selectedValues, q(r.value)); }
      add(fragments, s + '"text":' + q(r.text) + ',"value":' + q(r.value) + "}");
    }
    if (fragments.length > 0) attrs.options = arrayJson(fragments);
    if (multiple) attrs.multiple = "true";
    const size = a.size;
    if (size !== undefined) attrs.size = intOrString(size);
    putFlag(attrs, a, "required");
    if (selectedValues.length > 0) attrs.value = selectedValues[0];
    if (multiple && selectedValues.length > 0) attrs.selected_values = arrayJson(selectedValues);
  }
  function listItems(el) {
    const items = [];
    let extra = 0;
    for (let k = el.firstElementChild; k !== null; k = k.nextElementSibling) {
      if (k.localName !== "li" || isStripped(k)) continue;
      const text = normalizeText(visibleText(k));
      if (text === "") continue;
      if (items.length < MAX_LIST_ITEMS) add(items, '{"text":' + q(text) + "}");
      else extra++;
    }
    if (extra > 0) add(items, '{"text":' + q("[" + extra + " more items]") + "}");
    return items;
  }
  function tableRows(node, state) {
    for (let k = node.firstElementChild; k !== null; k = k.nextElementSibling) {
      if (isStripped(k)) continue;
      if (k.localName !== "tr") { tableRows(k, state); continue; }
      const cells = [];
      let hasTd = false;
      for (let c = k.firstElementChild; c !== null && cells.length < TABLE_COLS; c = c.nextElementSibling) {
        const tag = c.localName;
        if ((tag !== "td" && tag !== "th") || isStripped(c)) continue;
        if (tag === "td") hasTd = true;
        const text = q(truncateText(visibleText(c), 80));
        const span = intJson(c.getAttribute("colspan") || "1");
        let repeat = span === null || span.charCodeAt(0) === 45 ? 1 : +span;
        if (repeat < 1) repeat = 1;
        for (let r = 0; r < repeat && cells.length < TABLE_COLS; r++) add(cells, text);
      }
      if (cells.length === 0) continue;
      if (!hasTd && state.headers === null) state.headers = arrayJson(cells);
      else if (state.rows.length < TABLE_ROWS) add(state.rows, arrayJson(cells));
    }
  }
  function tagAttrs(el, a, tag, attrs, fsDisabled) {
    switch (tag) {
      case "a": {
        putRaw(attrs, a, "href", "href"); putRaw(attrs, a, "target", "target"); putRaw(attrs, a, "rel", "rel");
        putRaw(attrs, a, "hreflang", "hreflang"); putRaw(attrs, a, "type", "type");
        putRaw(attrs, a, "referrerpolicy", "referrerpolicy");
        const download = a.download;
        if (download !== undefined) attrs.download = download === "" ? "true" : q(download);
        break;
      }
      case "input": {
        const type = inputType(a);
        attrs.input_type = q(type);
        if (BUTTON_INPUTS[type] === 1) attrs.button_type = q(type);
        if (type !== "password") { // D2: a password's value never leaves the page
          if (ATTRIBUTE_VALUE_INPUTS[type] === 1) putRaw(attrs, a, "value", "value");
          else {
            const live = el.value; // D1
            if (typeof live === "string" && (live !== "" || a.value !== undefined)) attrs.value = q(live);
          }
        }
        if (type === "image") { putRaw(attrs, a, "alt", "alt"); putRaw(attrs, a, "src", "src"); }
        putRaw(attrs, a, "placeholder", "placeholder");
        putFlag(attrs, a, "required");
        if (fsDisabled || a.disabled !== undefined) attrs.disabled = "true";
        if ((type === "checkbox" || type === "radio") && el.checked === true) attrs.checked = "true"; // D1
        putFlag(attrs, a, "multiple");
        if (type === "radio") putRaw(attrs, a, "name", "group");
        break;
      }
      case "textarea": {
        const live = el.value; // D1
        const value = typeof live === "string" ? normalizeText(live) : "";
        if (value !== "") attrs.value = q(value);
        putRaw(attrs, a, "placeholder", "placeholder");
        putFlag(attrs, a, "required");
        putFlag(attrs, a, "readonly");
        if (fsDisabled || a.disabled !== undefined) attrs.disabled = "true";
        break;
      }
      case "button": {
        const raw = a.type;
        const t = raw === undefined ? "" : lower(trimWs(raw));
        attrs.button_type = t === "button" || t === "reset" ? q(t) : '"submit"';
        putRaw(attrs, a, "value", "value");
        if (fsDisabled || a.disabled !== undefined) attrs.disabled = "true";
        break;
      }
      case "select":
        selectAttrs(el, a, attrs);
        if (fsDisabled || a.disabled !== undefined) attrs.disabled = "true";
        break;
      case "h1": case "h2": case "h3": case "h4": case "h5": case "h6":
        attrs.level = tag.slice(1);
        break;
      case "img": case "picture":
        putRaw(attrs, a, "alt", "alt"); putRaw(attrs, a, "src", "src");
        break;
      case "ul": case "ol": {
        attrs.ordered = tag === "ol" ? "true" : "false";
        const items = listItems(el);
        if (items.length > 0) attrs.items = arrayJson(items);
        break;
      }
      case "table": {
        putChildText(attrs, el, "caption");
        const state = { headers: null, rows: [] };
        tableRows(el, state);
        if (state.headers !== null) attrs.headers = state.headers;
        if (state.rows.length > 0) attrs.rows = arrayJson(state.rows);
        break;
      }
      case "section": case "article":
        putRaw(attrs, a, "aria-label", "section_label");
        break;
      case "fieldset": {
        putChildText(attrs, el, "legend");
        if (fsDisabled || a.disabled !== undefined) attrs.disabled = "true";
        break;
      }
      case "details": {
        attrs.open = el.open === true ? "true" : "false"; // D1
        putChildText(attrs, el, "summary");
        break;
      }
      case "iframe": {
        putRaw(attrs, a, "src", "src");
        const srcdoc = a.srcdoc;
        if (srcdoc !== undefined && srcdoc !== "") { attrs.has_srcdoc = "true"; attrs.srcdoc_preview = q(cpPrefix(srcdoc, 200)); }
        putRaw(attrs, a, "name", "name"); putRaw(attrs, a, "sandbox", "sandbox"); putRaw(attrs, a, "allow", "allow");
        putRaw(attrs, a, "width", "width"); putRaw(attrs, a, "height", "height");
        break;
      }
      default:
        break;
    }
  }
  function boolOrRaw(raw, trimmed, emptyIsTrue) {
    const v = lower(trimmed ? trimWs(raw) : raw);
    if (v === "true" || (emptyIsTrue && v === "")) return "true";
    if (v === "false") return "false";
    return q(raw);
  }
  // Each attribute once, in any order: no two of them write the same key differently.
  function globalAttrs(a, attrs, scope) {
    const aria = { __proto__: null };
    let hasAria = false;
    let describedBy = null;
    let description = null;
    for (const name in a) {
      const raw = a[name];
      const ariaKey = ARIA_KEYS[name];
      if (ariaKey !== undefined) {
        const v = trimWs(raw);
        const lv = lower(v);
        aria[ariaKey] = lv === "true" ? "true" : lv === "false" ? "false" : q(v);
        hasAria = true;
      }
      const rawKey = RAW_GLOBALS[name];
      if (rawKey !== undefined) { attrs[rawKey] = q(raw); continue; }
      if (INT_GLOBALS[name] === 1) { attrs[name] = intOrString(raw); continue; }
      switch (name) {
        case "contenteditable": attrs.contenteditable = boolOrRaw(raw, false, true); break;
        case "spellcheck": attrs.spellcheck = boolOrRaw(raw, true, true); break;
        case "draggable": attrs.draggable = boolOrRaw(raw, true, false); break;
        case "capture": attrs.capture = raw === "" ? "true" : q(raw); break;
        case "formnovalidate": attrs.formnovalidate = "true"; break;
        case "readonly": attrs.readonly = "true"; break;
        case "aria-readonly": if (lower(raw) === "true") attrs.readonly = "true"; break;
        case "aria-required": if (lower(raw) === "true") attrs.required = "true"; break;
        case "aria-disabled": if (lower(raw) === "true") attrs.disabled = "true"; break;
        case "aria-describedby": describedBy = raw; break;
        case "aria-description": description = raw; break;
        default: break;
      }
    }
    for (let i = 0; i < TEST_ID_ATTRS.length; i++) {
      const v = a[TEST_ID_ATTRS[i]];
      if (v !== undefined && trimWs(v) !== "") { attrs.test_id = q(trimWs(v)); break; }
    }
    let desc = describedBy === null ? "" : idRefsText(scope, describedBy);
    if (desc === "" && description !== null) desc = normalizeText(description);
    if (desc !== "") attrs.description = q(desc);
    if (hasAria) attrs.aria = objectJson(aria);
  }
  function classHints(a) {
    const cls = a.class;
    if (cls === undefined || cls === "") return null;
    const lc = lower(cls);
    const found = [];
    for (let i = 0; i < HINTS.length; i++) {
      const words = HINTS[i][1];
      const hit = words === null ? has(lc, "card") && !has(lc, "discard") : hasAny(lc, words);
      if (hit) add(found, '"' + HINTS[i][0] + '"');
    }
    return found.length > 0 ? arrayJson(found) : null;
  }
  function hasKeys(map) {
    for (const k in map) return true;
    return false;
  }
  // null when the budget of `out` drops it: its text was counted, nothing else is needed.
  function buildElement(el, a, tag, role, path, inert, fsDisabled, scope, out) {
    let text = null;
    const articleSection = tag === "article" && role === "section"; // D5: its content follows
    if (role !== "table" && role !== "list" && role !== "group" && !articleSection) {
      const raw = visibleText(el);
      if (raw !== "") {
        if (role === "paragraph" && tag === "p" && mainMode) {
          if (frame !== null) frame.usesPara = true;
          text = truncateText(raw, paraCounter === 0 ? 200 : 80);
          paraCounter++;
        } else text = normalizeText(raw);
      }
    }
    const href = role === "link" && tag === "a" && a.href !== undefined ? a.href : null;
    const ev = beginEvent(role, href, text, idLog.length);
    if (!admit(out, role, href, text)) { endEvent(ev, null); return null; }
    const rec = newElement("", role, text);
    const withAttrs = a !== NO_ATTRIBUTES;
    if (withAttrs) {
      const idAttr = a.id;
      if (idAttr !== undefined) {
        const t = trimWs(idAttr);
        if (t !== "") rec.html_id = t;
      }
      rec.label = resolveLabel(el, a, tag, text, scope);
      rec.hints = classHints(a);
    } else if (tag === "fieldset" || LABELABLE[tag] === 1) rec.label = resolveLabel(el, a, tag, text, scope); // legend, D8 need no attributes
    const attrs = { __proto__: null };
    tagAttrs(el, a, tag, attrs, fsDisabled && FS_DISABLE_TAGS[tag] === 1);
    if (withAttrs) globalAttrs(a, attrs, scope);
    if (inert) attrs.inert = "true";
    if (hasKeys(attrs)) rec.attrs = attrs;
    rec.href = href;
    elementId(role, rec.label !== null ? rec.label : text !== null ? text : "", path, el, rec);
    rec.shadow = shadowOf(el, path, inert);
    endEvent(ev, rec);
    return rec;
  }
  function textParagraph(node, path, out) {
    const text = normalizeText(node.data);
    if (text === "") return;
    const ev = beginEvent("paragraph", null, text, idLog.length);
    if (!admit(out, "paragraph", null, text)) { endEvent(ev, null); return; }
    const rec = newElement("", "paragraph", text);
    elementId("paragraph", text, path, node, rec);
    endEvent(ev, rec);
    keep(out, rec);
  }
  function openShadowRoot(el) {
    const root = el.shadowRoot;
    return root !== null && root !== undefined && typeof root === "object" ? root : null;
  }
  // D6: open shadow roots. Content goes through extract_elements with its own label index.
  function shadowOf(el, path, inert) {
    const root = openShadowRoot(el);
    if (root === null) return null;
    const scope = makeScope(root);
    const saved = mainMode;
    const savedFrame = frame;
    // The shadow content's events belong to the host's record, not to the walk around it.
    const inner = savedFrame === null ? null : newFrame();
    if (state !== null) observeRoot(root);
    mainMode = false;
    frame = inner;
    const out = [];
    try {
      let i = 0;
      for (let k = root.firstChild; k !== null; k = k.nextSibling, i++) guarded(extractElements, k, path + "#shadow/" + i, out, inert, false, scope);
    } finally {
      mainMode = saved;
      frame = savedFrame;
    }
    if (inner !== null && !inner.cacheable) savedFrame.cacheable = false;
    return out.length > 0 ? { mode: root.mode === "closed" ? "closed" : "open", elements: out } : null;
  }
  // D6: a host that is not a SOM element becomes a `group` carrying its shadow content.
  function shadowHostGroup(el, a, tag, path, out, inert, scope) {
    if (openShadowRoot(el) === null) return;
    const start = idLog.length;
    const shadow = shadowOf(el, path, inert);
    if (shadow === null) return;
    const ev = beginEvent("group", null, null, start);
    if (!admit(out, "group", null, null)) { endEvent(ev, null); return; }
    const rec = newElement("", "group", null);
    if (a !== NO_ATTRIBUTES) {
      const idAttr = a.id;
      if (idAttr !== undefined && trimWs(idAttr) !== "") rec.html_id = trimWs(idAttr);
      rec.label = resolveLabel(el, a, tag, null, scope);
      rec.hints = classHints(a);
      const attrs = { __proto__: null };
      globalAttrs(a, attrs, scope);
      if (inert) attrs.inert = "true";
      if (hasKeys(attrs)) rec.attrs = attrs;
    } else if (inert) rec.attrs = { __proto__: null, inert: "true" };
    elementId("group", rec.label !== null ? rec.label : "", path, el, rec);
    rec.shadow = shadow;
    endEvent(ev, rec);
    keep(out, rec);
  }

  // ---- walks (docs/contract.md#traversal). Each child is visited through `guarded`, so a node
  // whose getters throw is skipped (partial SOM) while the budget still stops the walk.
  function guarded(fn, node, path, out, a, b, c, d) {
    if (state !== null && fn !== layoutTable && node.nodeType === 1) { memoVisit(fn, node, path, out, a, b, c, d); return; }
    try {
      fn(node, path, out, a, b, c, d);
    } catch (e) {
      if (e === BUDGET || e === MISMATCH || e === TOO_DEEP) throw e;
    }
  }
  function ownInert(a, inert) {
    return inert || a.inert !== undefined;
  }
  function emitElement(el, a, tag, role, path, out, inert, fsDisabled, scope, fromRegions, scoped) {
    const rec = buildElement(el, a, tag, role, path, inert, fsDisabled, scope, out);
    if (rec !== null) keep(out, rec);
    if (INTERACTIVE[role] === 1) return;
    const childDisabled = fsDisabled || (tag === "fieldset" && a.disabled !== undefined);
    let i = 0;
    if (tag === "article" && role === "section") { // D5: keep the article's content
      for (let k = el.firstChild; k !== null; k = k.nextSibling, i++) {
        if (fromRegions) guarded(collectRegions, k, path + "/" + i, out, inert, scope, true);
        else guarded(extractElements, k, path + "/" + i, out, inert, childDisabled, scope);
      }
      return;
    }
    for (let k = el.firstChild; k !== null; k = k.nextSibling, i++) {
      if (k.nodeType === 1) guarded(extractInteractive, k, path + "/" + i, out, inert, childDisabled, scope);
    }
  }
  function extractInteractive(el, path, out, inert, fsDisabled, scope) {
    tick();
    const a = shown(el);
    if (a === null) return;
    const tag = el.localName;
    const nodeInert = ownInert(a, inert);
    const role = roleOf(a, tag);
    if (role !== null && INTERACTIVE[role] === 1) {
      const rec = buildElement(el, a, tag, role, path, nodeInert, fsDisabled, scope, out);
      if (rec !== null) keep(out, rec);
      return;
    }
    if (role === null) shadowHostGroup(el, a, tag, path, out, nodeInert, scope);
    const childDisabled = fsDisabled || (tag === "fieldset" && a.disabled !== undefined);
    let i = 0;
    for (let k = el.firstChild; k !== null; k = k.nextSibling, i++) {
      if (k.nodeType === 1) guarded(extractInteractive, k, path + "/" + i, out, nodeInert, childDisabled, scope);
    }
  }
  function extractElements(node, path, out, inert, fsDisabled, scope) {
    tick();
    const type = node.nodeType;
    if (type === 3) { textParagraph(node, path, out); return; }
    if (type !== 1) return;
    const a = shown(node);
    if (a === null) return;
    const tag = node.localName;
    const nodeInert = ownInert(a, inert);
    if (tag === "table" && isLayoutTable(node)) { layoutTable(node, path, out, nodeInert, fsDisabled, scope, false, false); return; }
    const role = roleOf(a, tag);
    if (role !== null) { emitElement(node, a, tag, role, path, out, nodeInert, fsDisabled, scope, false, false); return; }
    shadowHostGroup(node, a, tag, path, out, nodeInert, scope);
    const childDisabled = fsDisabled || (tag === "fieldset" && a.disabled !== undefined);
    let i = 0;
    for (let k = node.firstChild; k !== null; k = k.nextSibling, i++) guarded(extractElements, k, path + "/" + i, out, nodeInert, childDisabled, scope);
  }
  function layoutTable(el, path, out, inert, fsDisabled, scope, fromRegions, scoped) {
    let i = 0;
    for (let k = el.firstChild; k !== null; k = k.nextSibling, i++) {
      const childPath = path + "/" + i;
      if (k.nodeType === 1 && TABLE_PASS[k.localName] === 1) {
        const a = shown(k);
        if (a !== null) guarded(layoutTable, k, childPath, out, ownInert(a, inert), fsDisabled, scope, fromRegions, scoped);
      } else if (fromRegions) guarded(collectRegions, k, childPath, out, inert, scope, scoped);
      else if (k.nodeType !== 3 || TABLE_TEXT_PARENTS[el.localName] !== 1) guarded(extractElements, k, childPath, out, inert, fsDisabled, scope);
    }
  }
  function isCollapsible(el, a) {
    if (a.role !== undefined || a.contenteditable !== undefined || a.tabindex !== undefined) return false;
    return el.childElementCount <= 1;
  }
  function collectRegions(node, path, out, inert, scope, scoped) {
    tick();
    const type = node.nodeType;
    if (type === 3) { textParagraph(node, path, out); return; }
    if (type !== 1) return;
    const a = shown(node);
    if (a === null) return;
    const tag = node.localName;
    const nodeInert = ownInert(a, inert);
    const landmark = landmarkOf(a, tag, scoped);
    if (landmark !== null) { landmarkRegion(node, a, path, landmark[0], landmark[1], nodeInert, scope, scoped); return; }
    if (HINT_REGION_TAGS[tag] === 1) {
      const hint = classIdHint(a);
      if (hint !== null) { landmarkRegion(node, a, path, hint[0], hint[1], nodeInert, scope, scoped); return; }
    }
    if (tag === "form") { formRegion(node, a, path, nodeInert, scope); return; }
    if (tag === "table" && isLayoutTable(node)) { layoutTable(node, path, out, nodeInert, false, scope, true, scoped); return; }
    let i = 0;
    if ((tag === "div" || tag === "span") && isCollapsible(node, a)) {
      shadowHostGroup(node, a, tag, path, out, nodeInert, scope);
      for (let k = node.firstChild; k !== null; k = k.nextSibling, i++) guarded(collectRegions, k, path + "/" + i, out, nodeInert, scope, scoped);
      return;
    }
    if ((tag === "div" || tag === "ul" || tag === "ol") && looksLikeNavigation(node) && !hasMainWithin6(node)) {
      heuristicRegion(node, path, "navigation", nodeInert, scope); return;
    }
    if ((tag === "div" || tag === "section") && looksLikeFooter(node, scope) && !hasMainWithin6(node)) {
      heuristicRegion(node, path, "footer", nodeInert, scope); return;
    }
    const role = roleOf(a, tag);
    if (role !== null) { emitElement(node, a, tag, role, path, out, nodeInert, false, scope, true, scoped); return; }
    shadowHostGroup(node, a, tag, path, out, nodeInert, scope);
    for (let k = node.firstChild; k !== null; k = k.nextSibling, i++) guarded(collectRegions, k, path + "/" + i, out, nodeInert, scope, scoped);
  }

  // ---- regions (docs/contract.md#regions)
  function regionId(stem) {
    const n = regionCounters[stem] === undefined ? 0 : regionCounters[stem];
    regionCounters[stem] = n + 1;
    return n === 0 ? "r_" + stem : "r_" + stem + "_" + n;
  }
  function newRegion(id, role, label) {
    return { id, role, label, form: null, elements: budgetedList(role === "navigation") };
  }
  function regionLabel(a, scope) {
    const labelledBy = a["aria-labelledby"];
    if (labelledBy !== undefined) {
      const t = idRefsText(scope, labelledBy);
      if (t !== "") return t;
    }
    for (let i = 0; i < REGION_LABEL_ATTRS.length; i++) {
      const v = a[REGION_LABEL_ATTRS[i]];
      if (v !== undefined && v !== "") return normalizeText(v);
    }
    return null;
  }
  function finishRegion(region) {
    closeBudget(region.elements);
    add(regions, region);
  }
  function landmarkRegion(el, a, path, role, stem, inert, scope, scoped) {
    if (frame !== null) frame.cacheable = false; // region ids and order are counted document-wide
    const region = newRegion(regionId(stem), role, regionLabel(a, scope));
    const savedMain = mainMode;
    const savedPara = paraCounter;
    if (role === "main") { mainMode = true; paraCounter = 0; }
    try {
      let i = 0;
      for (let k = el.firstChild; k !== null; k = k.nextSibling, i++) guarded(collectRegions, k, path + "/" + i, region.elements, inert, scope, scoped);
    } finally {
      mainMode = savedMain;
      paraCounter = savedPara;
    }
    finishRegion(region);
  }
  function formRegion(el, a, path, inert, scope) {
    if (frame !== null) frame.cacheable = false; // region ids and order are counted document-wide
    const id = regionId("form");
    let label = regionLabel(a, scope);
    if (label === null || label === "") {
      label = null;
      for (const name in a) { // the first of name and id, in attribute order (neither is an index)
        if (name === "name" || name === "id") { label = a[name]; break; }
      }
    }
    const region = newRegion(id, "form", label);
    let form = "";
    if (a.action !== undefined) form += ',"action":' + q(a.action);
    if (a.method !== undefined) form += ',"method":' + q(a.method.toUpperCase());
    if (a.target !== undefined) form += ',"target":' + q(a.target);
    if (a.enctype !== undefined) form += ',"enctype":' + q(a.enctype);
    if (a.novalidate !== undefined) form += ',"novalidate":true';
    const charset = a["accept-charset"];
    if (charset !== undefined) form += ',"accept_charset":' + q(charset);
    if (a.autocomplete !== undefined) form += ',"autocomplete":' + q(a.autocomplete);
    region.form = form;
    let i = 0;
    for (let k = el.firstChild; k !== null; k = k.nextSibling, i++) guarded(extractElements, k, path + "/" + i, region.elements, inert, false, scope);
    finishRegion(region);
  }
  function heuristicRegion(el, path, stem, inert, scope) {
    if (frame !== null) frame.cacheable = false; // region ids and order are counted document-wide
    const region = newRegion(regionId(stem), stem, null);
    let i = 0;
    for (let k = el.firstChild; k !== null; k = k.nextSibling, i++) guarded(extractElements, k, path + "/" + i, region.elements, inert, false, scope);
    finishRegion(region);
  }

  // ---- budgets (docs/contract.md#budgets)
  function normalizeHref(h) {
    let out = null;
    if (h.indexOf(":") >= 0) {
      try {
        const u = new URLCtor(h);
        u.hash = "";
        out = u.href;
      } catch (e) {
        out = null;
      }
    }
    if (out === null) {
      const cut = h.indexOf("#");
      out = cut >= 0 ? h.slice(0, cut) : h;
    }
    return out.length > 1 && out.charCodeAt(out.length - 1) === 47 ? out.slice(0, out.length - 1) : out;
  }
  // A key depends on the href alone: a recording compile keeps each one, so a replay does not
  // parse every link's URL again (a full compile starts a new table).
  function hrefKey(h) {
    if (state === null) return normalizeHref(h);
    let k = state.hrefKeys[h];
    if (k === undefined) {
      // Bounded: a page whose links keep changing starts a new table now and then.
      if (++state.hrefCount > MAX_HREF_KEYS) { state.hrefKeys = { __proto__: null }; state.hrefCount = 1; }
      state.hrefKeys[h] = k = normalizeHref(h);
    }
    return k;
  }
  // Budgets are decided while elements are added, in document order, exactly as a pass over
  // the finished list would (docs/contract.md#budgets), so a dropped element costs only its
  // text: no label, attrs, id or shadow. Its id is never hashed, so it never takes part in
  // collision suffixes; ids hash distinct node paths, so a suffix only ever follows an
  // actual SHA-256 prefix collision between kept elements.
  function budgetedList(navigation) {
    const list = [];
    list.budget = {
      linkLimit: navigation ? MAX_NAV_LINKS : MAX_LINKS, seen: { __proto__: null }, key: null, kept: 0,
      links: 0, paragraphs: 0, dupLinks: 0, moreLinks: 0, moreParagraphs: 0, moreElements: 0, chars: 0,
    };
    return list;
  }
  // false (and the drop counted) when the budget of `out` drops this element.
  function admit(out, role, href, text) {
    const b = out.budget;
    if (b === undefined) return true; // shadow content has no budget
    let drop = false;
    b.key = null;
    if (FORM_CONTROLS[role] !== 1 && role !== "heading" && b.kept >= MAX_ELEMENTS) { b.moreElements++; drop = true; }
    else if (role === "link") {
      if (href !== null) {
        const key = hrefKey(href);
        if (b.seen[key] === 1) { b.dupLinks++; drop = true; }
        else b.key = key;
      }
      if (!drop && b.links + 1 > b.linkLimit) {
        if (b.key !== null) b.seen[b.key] = 1; // an over-limit link still marks its href seen
        b.links++;
        b.moreLinks++;
        drop = true;
      }
    } else if (role === "paragraph" && b.paragraphs + 1 > MAX_PARAGRAPHS) {
      b.paragraphs++;
      b.moreParagraphs++;
      drop = true;
    }
    if (drop && text !== null) b.chars += utf8Length(text);
    return !drop;
  }
  // Adds an admitted element to `out` and counts it against the budget.
  function keep(out, rec) {
    add(out, rec);
    const b = out.budget;
    if (b === undefined) return;
    b.kept++;
    if (rec.role === "link") {
      if (b.key !== null) b.seen[b.key] = 1;
      b.links++;
    } else if (rec.role === "paragraph") b.paragraphs++;
    b.key = null;
  }
  function closeBudget(list) {
    const b = list.budget;
    const total = b.dupLinks + b.moreLinks + b.moreParagraphs + b.moreElements;
    if (total > 0) {
      const parts = [];
      if (b.dupLinks > 0) add(parts, b.dupLinks + " duplicate links");
      if (b.moreLinks > 0) add(parts, b.moreLinks + " more links");
      if (b.moreParagraphs > 0) add(parts, b.moreParagraphs + " more paragraphs");
      if (b.moreElements > 0) add(parts, b.moreElements + " more elements");
      add(list, newElement("e_summary_" + total, "paragraph", "[" + joinList(parts, ", ") + " dropped, ~" + b.chars + " chars]"));
    }
  }

  // ---- structured data (docs/contract.md#shape-and-serialisation), whole document; maps get sorted keys (determinism)
  const META_NAMES = { __proto__: null, description: 1, author: 1, keywords: 1, robots: 1, viewport: 1, generator: 1, "theme-color": 1 };
  const LINK_RELS = { __proto__: null, canonical: 1, icon: 1, "shortcut icon": 1, "apple-touch-icon": 1, manifest: 1, alternate: 1, amphtml: 1, preconnect: 1, "dns-prefetch": 1, author: 1, license: 1, search: 1 };
  function jsonLdText(script) {
    let out = "";
    for (let k = script.firstChild; k !== null; k = k.nextSibling) if (k.nodeType === 3) out += k.data;
    return trimWs(out);
  }
  function structuredData() {
    const jsonLd = [];
    const og = { __proto__: null };
    const twitter = { __proto__: null };
    const meta = { __proto__: null };
    const links = [];
    const list = document.querySelectorAll("script,meta,link");
    for (let i = 0; i < list.length; i++) {
      tick();
      const el = list[i];
      try {
        const tag = el.localName;
        if (tag === "script") {
          const type = el.getAttribute("type");
          if (type === null || lower(type) !== "application/ld+json") continue;
          let value;
          try { value = parseJson(jsonLdText(el)); } catch (e) { continue; }
          if (isArray(value)) {
            for (let j = 0; j < value.length; j++) add(jsonLd, valueJson(value[j], 0));
          } else add(jsonLd, valueJson(value, 0));
        } else if (tag === "meta") {
          const content = el.getAttribute("content");
          const property = el.getAttribute("property");
          const name = el.getAttribute("name");
          if (content !== null && property !== null && property.slice(0, 3) === "og:") og[property] = q(content);
          if (content !== null && name !== null && name.slice(0, 8) === "twitter:") twitter[name] = q(content);
          if (content !== null && name !== null && META_NAMES[lower(name)] === 1) meta[lower(name)] = q(content);
          const charset = el.getAttribute("charset");
          if (charset !== null) meta.charset = q(charset);
        } else if (tag === "link") {
          const rel = el.getAttribute("rel");
          const href = el.getAttribute("href");
          if (rel === null || href === null || LINK_RELS[lower(rel)] !== 1) continue;
          let s = '{"rel":' + q(lower(rel)) + ',"href":' + q(href);
          const type = el.getAttribute("type");
          if (type !== null) s += ',"type":' + q(type);
          const hreflang = el.getAttribute("hreflang");
          if (hreflang !== null) s += ',"hreflang":' + q(hreflang);
          add(links, s + "}");
        }
      } catch (e) {
        if (e === BUDGET) throw e;
      }
    }
    const parts = [];
    if (jsonLd.length > 0) add(parts, '"json_ld":' + arrayJson(jsonLd));
    if (hasKeys(og)) add(parts, '"open_graph":' + objectJson(og));
    if (hasKeys(twitter)) add(parts, '"twitter_card":' + objectJson(twitter));
    if (hasKeys(meta)) add(parts, '"meta":' + objectJson(meta));
    if (links.length > 0) add(parts, '"links":' + arrayJson(links));
    return parts.length > 0 ? "{" + joinList(parts, ",") + "}" : null;
  }

  // ---- serialization (docs/contract.md#shape-and-serialisation: struct fields in fixed order, maps sorted)
  const counts = { elements: 0, interactive: 0 };
  function elementJson(e) {
    if (e.json !== null && e.json !== undefined) {
      counts.elements += e.jc;
      counts.interactive += e.ji;
      return e.json;
    }
    const startElements = counts.elements;
    const startInteractive = counts.interactive;
    const json = elementJsonFresh(e);
    if (e.json === null) { e.json = json; e.jb = -1; e.jc = counts.elements - startElements; e.ji = counts.interactive - startInteractive; }
    return json;
  }
  function elementJsonFresh(e) {
    counts.elements++;
    if (INTERACTIVE[e.role] === 1) counts.interactive++;
    let s = '{"id":' + q(e.id) + ',"role":"' + e.role + '"';
    if (e.html_id !== null) s += ',"html_id":' + q(e.html_id);
    if (e.text !== null) s += ',"text":' + q(e.text);
    if (e.label !== null) s += ',"label":' + q(e.label);
    const actions = ACTIONS_JSON[e.role];
    if (actions !== undefined) s += ',"actions":' + actions;
    if (e.attrs !== null) s += ',"attrs":' + objectJson(e.attrs);
    if (e.hints !== null) s += ',"hints":' + e.hints;
    if (e.shadow !== null) s += ',"shadow":{"mode":' + q(e.shadow.mode) + ',"elements":' + elementsJson(e.shadow.elements) + "}";
    return s + "}";
  }
  function elementsJson(list) {
    let s = "[";
    for (let i = 0; i < list.length; i++) s += (i ? "," : "") + elementJson(list[i]);
    return s + "]";
  }
  // A region as parts of the SOM text: its header, its elements' (cached) JSON, separators. When
  // recording, returns their UTF-8 byte count (each element's kept with its cached JSON), so an
  // incremental compile never builds, nor scans, the whole text.
  function regionParts(r, parts) {
    let s = '{"id":' + q(r.id) + ',"role":"' + r.role + '"';
    if (r.label !== null) s += ',"label":' + q(r.label);
    if (r.form !== null) s += r.form;
    s += ',"elements":[';
    add(parts, s);
    let bytes = recording ? byteLength(s) + 2 : 0;
    const list = r.elements;
    for (let i = 0; i < list.length; i++) {
      if (i > 0) add(parts, ",");
      const e = list[i];
      add(parts, elementJson(e));
      if (recording) bytes += (e.jb >= 0 ? e.jb : (e.jb = byteLength(e.json))) + (i > 0 ? 1 : 0);
    }
    add(parts, "]}");
    return bytes;
  }
  function pageTitle() {
    const titles = document.querySelectorAll("title");
    for (let i = 0; i < titles.length; i++) {
      const t = titles[i].textContent;
      if (typeof t === "string" && t !== "") return t;
    }
    return "";
  }
  function pageOrigin() {
    const protocol = location.protocol;
    return TUPLE_SCHEMES[protocol] === 1 ? protocol + "//" + location.host : "null";
  }

  // ---- incremental compile (docs/contract.md#incremental-compile)
  // A walk of an element records what it did: the candidates it offered to a budgeted list, in
  // order (each with the record built for it and the ids it allocated) and the walks of its
  // children. A later compile replays the recording of an element whose subtree no mutation
  // touched and that is walked in the same context: admit() runs again on every candidate so
  // budgets stay exact, and ids are allocated again in order so collision suffixes do too.
  // Anything the recording cannot reproduce (a region, a thrown getter, a candidate dropped
  // last time and admitted now) makes that subtree, or the whole compile, a fresh walk.
  const OBSERVE = { __proto__: null, subtree: true, childList: true, attributes: true, characterData: true };
  const MAX_PENDING = 20000;
  // Measured: comparing style text costs about 40 ns a character, walking about 10 us a node.
  const STYLE_CHARS_PER_VISIT = 200;
  const COSTLY_STYLE_CHARS = 100000;
  const MAX_HREF_KEYS = 50000;
  const LIVE_SELECTOR = "input,textarea,select,[popover]";
  // With a hiding rule on state pseudo-classes, also buttons (:default), options (one outside a
  // select's list, as in a datalist or a foreign element named select, is no select's state),
  // and forms and fieldsets, whose validity changes when a control is added, removed, moved to
  // another form or made invalid by script. Form-associated custom elements are found by their
  // validity.
  const STATE_LIVE_SELECTOR = LIVE_SELECTOR + ",button,option,form,fieldset,:valid,:invalid";
  // :placeholder-shown: a number field with unparsable input shows no placeholder, value "".
  const LIVE_PSEUDO = [":valid", ":invalid", ":indeterminate", ":user-invalid", ":user-valid", ":open", ":default", ":placeholder-shown", ":autofill"];
  function newState(c) {
    if (c.s !== null) return c.s;
    const s = {
      doc: null, observer: null, pending: [], overflow: false, valid: false, epoch: 0,
      memos: new WeakMap(), dirtyAt: new WeakMap(), deepAt: new WeakMap(), insertedAt: new WeakMap(), labels: new WeakMap(),
      refs: new WeakSet(), refPath: new WeakSet(), refIds: { __proto__: null },
      roots: [], observed: new WeakSet(), liveEls: [], liveStates: [], liveRoots: 0, liveKept: false, undefinedRoots: 0, undefinedKept: false, data: null, dataKept: false,
      style: null, sheetFlags: null, flags: null, conditional: false, media: "", moving: [], html: new WeakMap(), hrefKeys: { __proto__: null }, hrefCount: 0, spare: null, view: "", undefinedElements: [], readers: [], readerSet: new WeakSet(), readerValues: [], origin: "", url: "", focusKey: null,
      full: 0, incremental: 0, fallbacks: 0,
    };
    c.s = s;
    return s;
  }
  function newFrame() {
    return { items: [], cacheable: true, usesPara: false };
  }
  function beginEvent(role, href, text, start) {
    if (frame === null) return null;
    const ev = { role, href, text, rec: null, ids: null, pre: idLog.length - start, start };
    add(frame.items, ev);
    return ev;
  }
  function endEvent(ev, rec) {
    if (ev === null) return;
    ev.rec = rec;
    const ids = [];
    for (let i = ev.start; i < idLog.length; i++) add(ids, idLog[i]);
    ev.ids = ids;
  }
  function up(x) {
    const p = x.parentNode;
    if (p !== null) return p;
    return x.nodeType === 11 && x.host ? x.host : null;
  }
  function addRef(el) {
    state.refs.add(el);
    for (let x = el; x !== null && x !== undefined && !state.refPath.has(x); x = up(x)) state.refPath.add(x);
  }
  function insideRef(node) {
    for (let x = node; x !== null && x !== undefined; x = up(x)) if (state.refs.has(x)) return true;
    return false;
  }
  function observeRoot(root) {
    observeRoots([root]);
  }
  // The open roots in `node` and its subtree (nodes a mutation inserted), and those nested in them.
  function observeRootsIn(node) {
    const todo = [];
    rootsIn(node, todo);
    observeRoots(todo);
  }
  // Each root in `todo` and every open root nested in it: a host the walk never enters (a link's
  // text is read from its light DOM) still shows what its nested roots let through. A work list,
  // not recursion: roots can nest deeper than the stack.
  function observeRoots(todo) {
    if (state.observer === null) return;
    while (todo.length > 0) {
      const root = todo.pop();
      if (state.observed.has(root)) continue;
      state.observed.add(root);
      add(state.roots, root);
      state.observer.observe(root, OBSERVE);
      rootsIn(root, todo);
    }
  }
  // Adds to `todo` the open roots of `node` (an element, or a root) and of every element under it.
  function rootsIn(node, todo) {
    const own = node.nodeType === 1 ? openShadowRoot(node) : null;
    if (own !== null) add(todo, own);
    const list = node.querySelectorAll("*");
    for (let i = 0; i < list.length; i++) {
      const inner = openShadowRoot(list[i]);
      if (inner !== null) add(todo, inner);
    }
  }
  // The memo of `node` is valid when neither the node (its subtree) nor any ancestor's whole
  // subtree was marked after the compile that recorded it.
  function memoFresh(node, epoch) {
    const d = state.dirtyAt.get(node);
    if (d !== undefined && d > epoch) return false;
    for (let x = node; x !== null && x !== undefined; x = up(x)) {
      const g = state.deepAt.get(x);
      if (g !== undefined && g > epoch) return false;
    }
    return true;
  }
  // A memo of at most FLAT_EVENTS events (a section of a page, a card) replays them from one list,
  // made at its first replay: most of a recompile is replaying such memos, and walking their
  // nested lists cost more than the events themselves. The bound keeps the lists linear in the page.
  const FLAT_EVENTS = 64;
  function replayMemo(m, out) {
    if (m.flat === undefined) m.flat = flatEvents(m.items, []);
    const flat = m.flat;
    if (flat !== null) {
      for (let i = 0; i < flat.length; i++) replayEvent(flat[i], out);
      return;
    }
    const items = m.items;
    for (let i = 0; i < items.length; i++) {
      const it = items[i];
      if (it.items !== undefined) replayMemo(it, out);
      else replayEvent(it, out);
    }
  }
  // The events of `items` in order, nested memos' included; null past FLAT_EVENTS.
  function flatEvents(items, out) {
    for (let i = 0; i < items.length; i++) {
      const it = items[i];
      if (it.items === undefined) add(out, it);
      else if (flatEvents(it.items, out) === null) return null;
      if (out.length > FLAT_EVENTS) return null;
    }
    return out;
  }
  function replayEvent(ev, out) {
    const ids = ev.ids;
    let changed = false;
    let i = 0;
    for (; i < ev.pre; i++) changed = replayId(ids[i]) || changed;
    if (!admit(out, ev.role, ev.href, ev.text)) return;
    if (ev.rec === null) throw MISMATCH; // dropped when recorded: nothing to replay
    for (; i < ids.length; i++) changed = replayId(ids[i]) || changed;
    if (changed) for (let j = 0; j < ids.length; j++) ids[j][0].json = null;
    keep(out, ev.rec);
  }
  function memoVisit(fn, node, path, out, a, b, c, d) {
    const kind = fn === collectRegions ? 1 : fn === extractElements ? 2 : 3;
    const fs = kind === 1 ? false : b;
    const scope = kind === 1 ? b : c;
    const scoped = kind === 1 ? c : false;
    const budgeted = out.budget !== undefined;
    if (incremental) {
      const m = state.memos.get(node);
      if (m !== undefined && m.kind === kind && m.path === path && m.inert === a && m.fs === fs &&
        m.root === scope.root && m.scoped === scoped && m.budgeted === budgeted && m.mainMode === mainMode &&
        (!m.usesPara || m.paraZero === (paraCounter === 0)) && memoFresh(node, m.epoch)) {
        replayMemo(m, out);
        paraCounter += m.paraDelta;
        if (frame !== null) {
          add(frame.items, m);
          if (m.usesPara) frame.usesPara = true;
        }
        return;
      }
    }
    const parent = frame;
    const f = newFrame();
    const paraStart = paraCounter;
    const mainStart = mainMode;
    frame = f;
    recordedDepth++;
    try {
      if (recordedDepth > MAX_RECORDED_DEPTH) throw TOO_DEEP;
      fn(node, path, out, a, b, c, d);
    } catch (e) {
      if (e === BUDGET || e === MISMATCH || e === TOO_DEEP) throw e;
      f.cacheable = false; // a node whose getters throw is not replayed
    } finally {
      frame = parent;
      recordedDepth--;
    }
    if (f.cacheable) {
      const m = {
        kind, path, inert: a, fs, root: scope.root, scoped, budgeted, mainMode: mainStart, usesPara: f.usesPara,
        paraZero: paraStart === 0, paraDelta: paraCounter - paraStart, items: f.items, flat: undefined, epoch: state.epoch,
      };
      state.memos.set(node, m);
      if (parent !== null) {
        add(parent.items, m);
        if (f.usesPara) parent.usesPara = true;
      }
    } else {
      state.memos.delete(node);
      if (parent !== null) parent.cacheable = false;
    }
  }

  // What a MutationObserver cannot see is compared at every compile: live control state,
  // stylesheets (their rules' text), the viewport, custom-element upgrades, focus, the URL.
  function liveState(el) {
    let s = "";
    const tag = el.localName;
    if (tag === "input") s = (el.checked === true ? "1" : "0") + el.value;
    else if (tag === "textarea") s = "" + el.value;
    else if (tag === "select") {
      const options = el.options;
      for (let i = 0; i < options.length; i++) s += options[i].selected === true ? "1" : "0";
    }
    if (el.hasAttribute("popover")) s += matchState(el, ":popover-open");
    // What state pseudo-classes read and no attribute shows (only when a hiding rule uses one),
    // as the browser matches them: validity (setCustomValidity, a form's or fieldset's controls,
    // a form-associated element's setValidity), indeterminate (a radio group with none checked),
    // :user-invalid after a blur, an open picker, the default button of a form.
    if (state.flags !== null && state.flags.state) {
      if (tag === "option") s += el.selected === true ? "S" : "s";
      for (let i = 0; i < LIVE_PSEUDO.length; i++) s += matchState(el, LIVE_PSEUDO[i]);
    }
    return s;
  }
  function matchState(el, selector) {
    try { return el.matches(selector) ? "1" : "0"; } catch (e) { return "?"; } // not supported here
  }
  // Appends to `els` the live controls under the document and the roots from index `from - 1`
  // (-1: the document), and to `states` (unless null) what each shows now.
  function liveScan(from, els, states) {
    const selector = state.flags !== null && state.flags.state ? STATE_LIVE_SELECTOR : LIVE_SELECTOR;
    for (let r = from - 1; r < state.roots.length; r++) {
      const list = (r < 0 ? document : state.roots[r]).querySelectorAll(selector);
      for (let i = 0; i < list.length; i++) add(els, list[i]);
    }
    state.liveRoots = state.roots.length;
    if (states !== null) for (let i = states.length; i < els.length; i++) add(states, liveStateOf(els[i]));
  }
  function liveStateOf(el) {
    try { return liveState(el); } catch (e) { return "?"; }
  }
  // What a record changes beyond the walks it marks, in what the last compile looked up in the
  // whole document and this one reuses unless told otherwise:
  // - all three, by an element added or removed anywhere (a move into a tree no observer sees
  //   shows only its removal);
  // - the live controls, by a `popover` attribute, or, while state pseudo-classes count, any
  //   attribute (the standard bars a form-associated custom element in a disabled fieldset from
  //   validity, which Chromium does not do yet: no test can show this one);
  // - the structured data, by a change to a script, meta or link element or to a script's text.
  const STRUCTURED_TAGS = { __proto__: null, script: 1, meta: 1, link: 1 };
  function noteReach(r, flags) {
    const s = state;
    if (r.type === "attributes") {
      if (r.attributeName === "popover" || flags.state) s.liveKept = false;
      if (STRUCTURED_TAGS[r.target.localName] === 1) s.dataKept = false;
      return;
    }
    const owner = r.type === "characterData" ? r.target.parentNode : r.target;
    if (owner !== null && STRUCTURED_TAGS[owner.localName] === 1) s.dataKept = false;
    if (r.type !== "childList") return;
    if (hasElement(r.addedNodes) || hasElement(r.removedNodes)) s.liveKept = s.undefinedKept = s.dataKept = false;
  }
  function hasElement(nodes) {
    for (let j = 0; j < nodes.length; j++) if (nodes[j].nodeType === 1) return true;
    return false;
  }
  // Each live control whose state differs from the last compile's; false when one's walk cannot
  // be redone (then a full compile). The controls are the last compile's unless looked up again.
  function liveChanged(flags) {
    const s = state;
    const oldEls = s.liveEls, oldStates = s.liveStates;
    const els = s.liveKept ? oldEls : [];
    const states = [];
    if (!s.liveKept) liveScan(0, els, null);
    let byElement = null; // the last compile's states, once the order differs
    for (let i = 0; i < els.length; i++) {
      const el = els[i];
      const now = liveStateOf(el);
      add(states, now);
      let before;
      if (i < oldEls.length && oldEls[i] === el) before = oldStates[i];
      else {
        if (byElement === null) {
          byElement = new Map();
          for (let k = 0; k < oldEls.length; k++) byElement.set(oldEls[k], oldStates[k]);
        }
        before = byElement.get(el);
      }
      if (before !== now && !elementChanged(el, flags, true)) return false;
    }
    s.liveEls = els;
    s.liveStates = states;
    return true;
  }
  function sheetText(sheet, depth) {
    let rules;
    try { rules = sheet.cssRules; } catch (e) { return null; }
    let t = "\u0002" + (sheet.disabled ? "d" : "") + (sheet.media ? sheet.media.mediaText : "") + "\u0002";
    for (let i = 0; i < rules.length; i++) {
      const r = rules[i];
      t += "\u0003" + r.cssText;
      if (r.styleSheet && depth < 8) {
        const inner = sheetText(r.styleSheet, depth + 1);
        if (inner === null) return null;
        t += inner;
      }
    }
    return t;
  }
  // The document's and every compiled shadow root's style sheets, adopted ones included.
  function sheetLists() {
    const lists = [document.styleSheets, document.adoptedStyleSheets];
    for (let r = 0; r < state.roots.length; r++) { add(lists, state.roots[r].styleSheets); add(lists, state.roots[r].adoptedStyleSheets); }
    return lists;
  }
  function styleText() {
    const lists = sheetLists();
    let t = "";
    for (let l = 0; l < lists.length; l++) {
      const list = lists[l];
      if (!list) continue;
      t += "\u0001";
      for (let i = 0; i < list.length; i++) {
        const one = sheetText(list[i], 0);
        if (one === null) return null; // a sheet whose rules cannot be read: no incremental compiles
        t += one;
      }
    }
    return t;
  }
  // Which selector features the rules that can hide something (display, visibility, `all`) use:
  // they decide how far a mutation's effect on visibility can reach. A rule that declares a custom
  // property counts too, but only while an inline style hides by reading one (a rule's hiding
  // value that reads one means full compiles anyway): the many rules that merely read custom
  // properties for colours (Bootstrap's and Tailwind's hover rules) never count.
  const HIDING_STYLE = /display|visibility|(^|[\s;{])all\s*:/;
  const DECLARES_CUSTOM = /(^|[\s;{])--/; // a declaration whose name starts with `--`
  const HIDES = 1, DECLARES = 2; // what a rule (or one nested in it) does, as scanRules answers
  // Keyframes that can show or hide: any custom property counts (animations are not compared).
  const KEYFRAMES_STYLE = /display|visibility|--|(^|[\s;{])all\s*:/;
  // Hiding rules whose match can change with no mutation and no live state this compiler compares
  // (designMode, fullscreen, custom states, text direction, content language, upgrades, interest,
  // scroll targets, `of` selectors over siblings' attributes), and values computed from what it
  // cannot watch (a registered property's initial value, if(), custom functions): every compile
  // is a full one.
  // Keywords are all a hiding property takes, so any function or escape in its value counts.
  const UNSEEN_PSEUDO = /:(read-|fullscreen|-webkit-full-screen|state\(|dir\(|lang\(|defined|picture-in-picture|playing|paused|muted|seeking|buffering|stalled|volume-locked|interest-|target-(current|before|after))|\bof\s/;
  const COMPUTED_HIDING = /(display|visibility|all)\s*:[^;]*[(\\]/;
  const STATE_PSEUDO = /:(checked|valid|invalid|user-|placeholder|default|indeterminate|in-range|out-of-range|required|optional|read-|blank|(-webkit-)?autofill|enabled|disabled|open|closed|popover|modal)/;
  const SELECTOR_FLAGS = ["sibling", "has", "hover", "focus", "state", "empty", "emptySibling", "layout", "unseen"];
  function selectorFlags() {
    return { sibling: false, has: false, hover: false, focus: false, state: false, empty: false, emptySibling: false, layout: false, unseen: false };
  }
  // `{narrow, wide}`: the flags of the rules that hide, and of those together with the rules that
  // declare custom properties (the same object when those add nothing). Media queries, keyframes
  // and anything unreadable go into both.
  function styleFlags() {
    const flags = selectorFlags();
    flags.custom = selectorFlags();
    flags.media = { __proto__: null };
    flags.queries = [];
    flags.keyframes = { __proto__: null };
    const lists = sheetLists();
    for (let l = 0; l < lists.length; l++) {
      const list = lists[l];
      if (!list) continue;
      for (let i = 0; i < list.length; i++) {
        noteMedia(list[i], flags);
        scanRules(list[i].cssRules, flags, false, 0, "");
      }
    }
    for (const text in flags.media) {
      try { add(flags.queries, matchMedia(text)); } catch (e) { flags.hover = true; } // cannot watch it: always full
    }
    const custom = flags.custom;
    flags.custom = null;
    let widens = false;
    for (let i = 0; i < SELECTOR_FLAGS.length; i++) if (custom[SELECTOR_FLAGS[i]] && !flags[SELECTOR_FLAGS[i]]) widens = true;
    if (!widens) return { narrow: flags, wide: flags };
    const wide = { media: flags.media, queries: flags.queries, keyframes: flags.keyframes, custom: null };
    for (let i = 0; i < SELECTOR_FLAGS.length; i++) wide[SELECTOR_FLAGS[i]] = flags[SELECTOR_FLAGS[i]] || custom[SELECTOR_FLAGS[i]];
    return { narrow: flags, wide };
  }
  // Whether an inline style in the document or an open shadow root compiled so far computes
  // display or visibility with a function (var(), if(), a custom function), read as the browser
  // parsed it (no comments, no escaped names), or an SVG display or visibility attribute does.
  const INLINE_COMPUTED = '[style*="("],[style*="\\\\"]';
  const PRESENTATION_COMPUTED = '[display*="("],[display*="\\\\"],[visibility*="("],[visibility*="\\\\"]';
  // Inline values that can change with no mutation: if() (a media query inside a value), escaped
  // or not, and any function in an SVG display or visibility attribute. While one is in the
  // document every compile is a full one. Looked for in the whole document by a full compile and
  // in new shadow roots; an incremental one looks only at what the mutations brought.
  const INLINE_CONDITIONAL = '[style*="if(" i],[style*="\\\\"],' + PRESENTATION_COMPUTED;
  const CONDITIONAL_HIDING = /(display|visibility|all)\s*:[^;]*(if\(|\\)/;
  // Whether `el`'s inline style, as the browser parsed it, matches `pattern` (unreadable: yes).
  function inlineMatches(el, pattern) {
    const style = el.style;
    return !style || typeof style.cssText !== "string" || pattern.test(lower(style.cssText));
  }
  function isConditional(el) {
    return el.matches(PRESENTATION_COMPUTED) || inlineMatches(el, CONDITIONAL_HIDING);
  }
  function conditionalElement(el) {
    return el.matches(INLINE_CONDITIONAL) && isConditional(el);
  }
  // `node`: the document, a shadow root or an element (itself included).
  function conditionalIn(node) {
    if (node.nodeType === 1 && conditionalElement(node)) return true;
    const list = node.querySelectorAll(INLINE_CONDITIONAL);
    for (let i = 0; i < list.length; i++) if (isConditional(list[i])) return true;
    return false;
  }
  // Elements whose inline style computes display, visibility or all from a function (`var()`): a
  // property registered since (CSS.registerProperty) can change what they compute with no mutation
  // and no rule text, so their computed values are compared at every compile.
  function addReader(el) {
    const s = state;
    if (!s.readerSet.has(el) && el.matches(INLINE_COMPUTED) && inlineMatches(el, COMPUTED_HIDING)) {
      s.readerSet.add(el);
      add(s.readers, el);
    }
  }
  // `node`: the document, a shadow root or an element (itself included).
  function addReaders(node) {
    if (node.nodeType === 1) addReader(node);
    const list = node.querySelectorAll(INLINE_COMPUTED);
    for (let i = 0; i < list.length; i++) addReader(list[i]);
  }
  function readerValue(el) {
    const cs = computedStyle(el);
    return cs.display + "|" + cs.visibility;
  }
  // After a walk: the readers still connected, or in a shadow tree (its host, once put back, brings
  // them back with no mutation inside the tree to find them by), and what each computes now.
  function rememberReaders(full, rootsBefore) {
    const s = state;
    if (full) {
      s.readers = [];
      s.readerSet = new WeakSet();
      addReaders(document);
    }
    for (let r = full ? 0 : rootsBefore; r < s.roots.length; r++) addReaders(s.roots[r]);
    const kept = [];
    const values = [];
    for (let i = 0; i < s.readers.length; i++) {
      const el = s.readers[i];
      if (el.isConnected || el.getRootNode().nodeType === 11) { add(kept, el); add(values, readerValue(el)); }
    }
    s.readers = kept;
    s.readerSet = new WeakSet(kept);
    s.readerValues = values;
  }
  function inlineReadsCustom() {
    for (let r = -1; r < state.roots.length; r++) {
      const root = r < 0 ? document : state.roots[r];
      if (root.querySelector(PRESENTATION_COMPUTED) !== null) return true;
      const list = root.querySelectorAll(INLINE_COMPUTED);
      for (let i = 0; i < list.length; i++) if (inlineMatches(list[i], COMPUTED_HIDING)) return true;
    }
    return false;
  }
  // A media query of a sheet or rule: its answer can change with no mutation and no new rule text
  // (an emulated colour scheme or media type, a user preference).
  function noteMedia(owner, flags) {
    const m = owner.media;
    if (m && typeof m.mediaText === "string" && m.mediaText !== "") flags.media[m.mediaText] = 1;
  }
  function mediaKey() {
    const queries = state.flags === null ? [] : state.flags.queries;
    let k = "";
    for (let i = 0; i < queries.length; i++) k += queries[i].matches ? "1" : "0";
    return k;
  }
  // `outer`: the selectors of the style rules this list is nested in (their flags count too).
  function scanRules(rules, flags, inContainer, depth, outer) {
    if (depth > 16) { flags.has = true; flags.hover = true; return HIDES; }
    let does = 0;
    for (let i = 0; i < rules.length; i++) {
      const r = rules[i];
      noteMedia(r, flags);
      if (typeof r.name === "string" && r.constructor.name === "CSSKeyframesRule") {
        // 1: an animation of that name can show or hide (getKeyframes() leaves custom properties out)
        if (flags.keyframes[r.name] !== 1) flags.keyframes[r.name] = KEYFRAMES_STYLE.test(lower(r.cssText)) ? 1 : 0;
        continue;
      }
      if (r.styleSheet) scanRules(r.styleSheet.cssRules, flags, inContainer, depth + 1, outer);
      if (r.constructor.name === "CSSScopeRule") flags.unseen = true; // its prelude is a selector too
      const container = inContainer || (typeof r.containerName === "string" || r.constructor.name === "CSSContainerRule");
      const nested = r.cssRules !== undefined && r.cssRules !== null && r.cssRules.length > 0;
      // A style rule, or declarations nested in one (CSSNestedDeclarations: its parent's selector).
      const css = r.style ? lower(r.style.cssText) : "";
      let own = (HIDING_STYLE.test(css) ? HIDES : 0) | (DECLARES_CUSTOM.test(css) ? DECLARES : 0);
      if (COMPUTED_HIDING.test(css)) flags.unseen = true;
      // A custom property set by if() (or an escape, which may spell one) changes with no mutation.
      if ((own & DECLARES) && (has(css, "if(") || has(css, "\\"))) flags.custom.unseen = true;
      const sel = r.selectorText;
      const ls = typeof sel === "string" ? outer + " " + lower(sel) : outer;
      if (nested) own |= scanRules(r.cssRules, flags, container, depth + 1, ls);
      if (typeof sel === "string") {
        if (own & HIDES) selectorFlag(flags, ls, container);
        if (own & DECLARES) selectorFlag(flags.custom, ls, container);
      }
      does |= own;
    }
    return does;
  }
  function selectorFlag(flags, ls, container) {
    const sibling = ls.indexOf("+") >= 0 || ls.indexOf("~") >= 0;
    if (UNSEEN_PSEUDO.test(ls)) flags.unseen = true;
    if (sibling) flags.sibling = true;
    if (has(ls, ":has(")) flags.has = true;
    if (has(ls, ":hover") || has(ls, ":active")) flags.hover = true;
    if (has(ls, ":focus") || has(ls, ":target")) flags.focus = true;
    if (has(ls, ":empty")) {
      flags.empty = true;
      if (sibling) flags.emptySibling = true; // what follows an empty element
    }
    if (STATE_PSEUDO.test(ls)) flags.state = true;
    if (container) flags.layout = true;
  }
  function activeElement() {
    let a = document.activeElement;
    for (let i = 0; i < 32 && a && a.shadowRoot && a.shadowRoot.activeElement; i++) a = a.shadowRoot.activeElement;
    return a === undefined ? null : a;
  }
  // What hiding rules on :focus, :focus-within, :focus-visible and :target select: the :target
  // element (a replaceState can put the URL back after the fragment moved it), whether the window
  // has focus (one the user leaves keeps its focused element, which stops matching :focus), the
  // focused element and its ancestors, across shadow roots (moveBefore keeps focus while
  // :focus-within moves), and whether each matches :focus-visible (a key pressed after a click
  // turns it on).
  function focusKey() {
    const key = [document.querySelector(":target"), document.hasFocus()];
    for (let x = activeElement(); x !== null && x !== undefined; x = up(x)) {
      add(key, x);
      if (x.nodeType === 1) add(key, x.matches(":focus-visible"));
    }
    return key;
  }
  function upgraded(elements) {
    for (let i = 0; i < elements.length; i++) if (elements[i].matches(":defined")) return true;
    return false;
  }
  function sameKey(a, b) {
    if (a === null || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
    return true;
  }
  // The viewport. While an element is fullscreen the key equals no other, so every compile is
  // full, and so is the first after: that element matches :modal, which hiding rules on dialogs
  // use, and no mutation reports which element it is, or that there is one.
  function viewKey() {
    if (document.fullscreenElement) return {};
    return innerWidth + "x" + innerHeight + "@" + devicePixelRatio;
  }
  // The elements not defined yet, in the document and every open root compiled so far: an upgrade
  // makes no mutation (its constructor may attach a shadow root; :defined changes), so one of them
  // defined since means a full compile. (A count would miss one defined while another undefined
  // element arrives; those that arrive or leave come with mutations.)
  function undefinedElements() {
    const key = [];
    for (let r = -1; r < state.roots.length; r++) {
      const list = (r < 0 ? document : state.roots[r]).querySelectorAll(":not(:defined)");
      for (let i = 0; i < list.length; i++) add(key, list[i]);
    }
    return key;
  }
  // The elements whose display or visibility an animation or transition may be changing, which
  // no mutation reports (null: cannot tell). Custom properties count: a rule may read them.
  function movingTargets() {
    if (typeof document.getAnimations !== "function") return [];
    const out = [];
    try {
      // The document's list leaves out shadow trees: each open root compiled so far is asked too.
      for (let r = -1; r < state.roots.length; r++) {
        const list = (r < 0 ? document : state.roots[r]).getAnimations();
        for (let i = 0; i < list.length; i++) {
          const a = list[i], effect = a.effect;
          if (!effect || !effect.target || effect.pseudoElement) continue; // a pseudo-element is never in the SOM
          if (movesVisibility(a, effect)) add(out, effect.target);
        }
      }
    } catch (e) {
      return null;
    }
    return out;
  }
  function movesVisibility(a, effect) {
    const p = a.transitionProperty; // a CSS transition: one property
    if (typeof p === "string" && visibilityProperty(p)) return true;
    const name = a.animationName; // a CSS animation: what its @keyframes rule sets (unknown: may)
    if (typeof name === "string" && (state.flags === null || state.flags.keyframes[name] !== 0)) return true;
    // Its keyframes as they are now (a script may have set them, on any kind of animation).
    const frames = effect.getKeyframes();
    for (let i = 0; i < frames.length; i++) for (const k in frames[i]) if (visibilityProperty(k)) return true;
    return false;
  }
  function visibilityProperty(name) {
    return name === "display" || name === "visibility" || name === "all" || name.startsWith("--");
  }
  function markPath(node) {
    const e = state.epoch;
    for (let x = node; x !== null && x !== undefined && state.dirtyAt.get(x) !== e; x = up(x)) state.dirtyAt.set(x, e);
  }
  function markDeep(node) {
    state.deepAt.set(node, state.epoch);
    markPath(node);
  }
  function styleOwner(node) {
    for (let x = node; x !== null && x !== undefined; x = up(x)) {
      if (x.nodeType === 1 && (x.localName === "style" || x.localName === "link")) return true;
    }
    return false;
  }
  function touchesRefs(n) {
    if (n.nodeType !== 1) return false;
    if (n.localName === "label" || n.localName === "style" || n.localName === "link" || n.querySelector("label,style,link") !== null) return true;
    const id = n.getAttribute("id");
    if (id !== null && state.refIds[id] === 1) return true;
    const inner = n.querySelectorAll("[id]");
    for (let i = 0; i < inner.length; i++) if (state.refIds[inner[i].getAttribute("id")] === 1) return true;
    return false;
  }
  // A changed element: its whole subtree is walked again (its style may reach every
  // descendant), with its later siblings when sibling combinators can carry the change
  // (`siblings`: the change is to the element itself, not only to its children).
  function elementChanged(el, flags, siblings) {
    if (flags.has || state.refPath.has(el) || insideRef(el)) return false;
    if (flags.sibling && siblings) {
      // `+` and `~` reach later siblings only (a shadow root or the document has none).
      for (let k = el.nodeType === 1 ? el.nextElementSibling : null; k !== null; k = k.nextElementSibling) {
        if (state.refPath.has(k)) return false;
        markDeep(k);
      }
    }
    markDeep(el);
    // Slotted light-DOM children inherit from their slot (the flat tree): walk the host again. A slot
    // among that host's light children forwards the children of the host of the tree it is in, so
    // that host is walked again too, and so on up.
    for (let root = el.getRootNode(); root.nodeType === 11 && root.host; ) {
      const host = root.host;
      if (state.refPath.has(host)) return false;
      markDeep(host);
      if (host.querySelector("slot") === null) break;
      root = host.getRootNode();
    }
    return true;
  }
  // Marks what the recorded mutations touched; false when only a full compile is safe.
  function applyRecords(records, flags) {
    for (let i = 0; i < records.length; i++) {
      const r = records[i];
      const t = r.target;
      noteReach(r, flags);
      if (styleOwner(t)) return false;
      if (r.type === "characterData") {
        if (insideRef(t)) return false;
        // Text can make its element :empty or not: that element changes, and with it what follows it.
        const p = t.parentNode;
        if (flags.empty && p !== null && p.nodeType === 1 && !elementChanged(p, flags, flags.emptySibling)) return false;
        markPath(t);
      } else if (r.type === "attributes") {
        const name = r.attributeName;
        if (name === "id" || name === "for" || name === "slot") return false;
        if (name === "style" || name === "display" || name === "visibility") { // the element's own
          if (conditionalElement(t)) state.conditional = true;
          addReader(t);
        }
        if (!elementChanged(t, flags, true)) return false;
      } else { // a child list: like a changed element, unless it adds or removes what labels read
        for (let j = 0; j < r.addedNodes.length; j++) {
          if (touchesRefs(r.addedNodes[j])) return false;
          if (r.addedNodes[j].nodeType === 1) {
            if (conditionalIn(r.addedNodes[j])) state.conditional = true;
            addReaders(r.addedNodes[j]);
            observeRootsIn(r.addedNodes[j]);
          }
          state.insertedAt.set(r.addedNodes[j], state.epoch);
        }
        for (let j = 0; j < r.removedNodes.length; j++) if (touchesRefs(r.removedNodes[j])) return false;
        // Siblings of the target match as before, unless it became empty or stopped being so.
        if (!elementChanged(t, flags, flags.emptySibling)) return false;
      }
    }
    return true;
  }
  function animatedChanged(targets, flags) {
    for (let i = 0; i < targets.length; i++) {
      const el = targets[i];
      if (el.isConnected && el.ownerDocument === document && !elementChanged(el, flags, true)) return false;
    }
    return true;
  }
  // Decides this compile's mode; true: incremental (records applied, live state compared).
  function prepare(view, style, url, moving) {
    const s = state;
    if (forceFull || !s.valid || s.doc !== document || s.observer === null || s.overflow) return false;
    let records = s.pending;
    s.pending = [];
    const taken = s.observer.takeRecords();
    for (let i = 0; i < taken.length; i++) add(records, taken[i]);
    if (s.origin !== origin || s.url !== url || s.view !== view || upgraded(s.undefinedElements)) return false;
    if (style === null || s.style !== style || s.media !== mediaKey()) return false;
    if (moving === null || s.moving === null) return false; // which elements animate: unknown
    // Manually assigned slots (slot.assign()) change what a slot shows with no mutation.
    for (let r = 0; r < s.roots.length; r++) if (s.roots[r].slotAssignment === "manual") return false;
    const flags = s.flags;
    if (flags.hover || flags.layout || flags.unseen || s.conditional || (flags.focus && !sameKey(s.focusKey, (focusNow = focusKey())))) return false;
    s.epoch++;
    for (let i = 0; i < s.readerValues.length; i++) {
      const el = s.readers[i];
      if (el.isConnected && readerValue(el) !== s.readerValues[i] && !elementChanged(el, flags, true)) return false;
    }
    if (!applyRecords(records, flags)) return false;
    records = null;
    // Animated now, or at the last compile (it may have ended since): walked again, as if changed.
    if (!animatedChanged(moving, flags) || !animatedChanged(s.moving, flags)) return false;
    return liveChanged(flags);
  }
  function resetForFull() {
    const s = state;
    if (s.observer === null) {
      s.observer = new MutationObserver((records) => {
        if (s.overflow) return;
        if (s.pending.length + records.length > MAX_PENDING) { s.overflow = true; s.pending = []; return; }
        for (let i = 0; i < records.length; i++) add(s.pending, records[i]);
      });
    }
    s.observer.disconnect();
    s.pending = [];
    s.overflow = false;
    s.doc = document;
    s.observer.observe(document, OBSERVE);
    s.epoch++;
    s.memos = new WeakMap();
    s.dirtyAt = new WeakMap();
    s.deepAt = new WeakMap();
    s.insertedAt = new WeakMap();
    s.labels = new WeakMap();
    s.refs = new WeakSet();
    s.refPath = new WeakSet();
    s.refIds = { __proto__: null };
    s.roots = [];
    s.observed = new WeakSet();
    s.liveEls = [];
    s.liveStates = [];
    s.liveRoots = 0;
    s.liveKept = s.undefinedKept = s.dataKept = false;
    s.html = new WeakMap();
    s.hrefKeys = { __proto__: null };
    s.hrefCount = 0;
  }
  // This document's later compiles walk it whole, recording nothing (`reason` goes into their
  // stats): stop observing and let the record go.
  function dropRecord(reason) {
    cache.costly = reason;
    cache.s = null;
    if (state.observer !== null) state.observer.disconnect();
  }
  // Drops the roots whose host left the document (a component replaced by another), so that a
  // long session's compiles stop comparing their style sheets and the observer stops keeping their
  // trees alive. A host put back comes with a mutation that observes its roots again
  // (observeRootsIn) and walks it whole. Returns how many of the first `rootsBefore` roots remain.
  function pruneRoots(rootsBefore) {
    const s = state;
    let kept = 0, keptBefore = 0;
    for (let r = 0; r < s.roots.length; r++) {
      const root = s.roots[r];
      if (!root.isConnected) { s.observed.delete(root); continue; }
      s.roots[kept++] = root;
      if (r < rootsBefore) keptBefore++;
    }
    if (kept === s.roots.length) return rootsBefore;
    s.roots.length = kept;
    const taken = s.observer.takeRecords();
    for (let i = 0; i < taken.length; i++) add(s.pending, taken[i]);
    s.observer.disconnect();
    s.observer.observe(document, OBSERVE);
    for (let r = 0; r < kept; r++) s.observer.observe(s.roots[r], OBSERVE);
    return keptBefore;
  }
  // After a successful walk: what the next compile compares against.
  function remember(full, rootsBefore, view, style, url, moving) {
    const s = state;
    const count = s.roots.length;
    const flagsBefore = s.flags;
    rootsBefore = pruneRoots(rootsBefore);
    if (full || s.roots.length < count || s.roots.length > rootsBefore || style === null) {
      const text = styleText();
      // Comparing every rule's text, as each recompile must, would cost more than walking the
      // page: recording cannot pay off for this document; its later compiles walk it whole.
      if (full && text !== null && text.length > COSTLY_STYLE_CHARS && text.length > STYLE_CHARS_PER_VISIT * visits) {
        dropRecord("costly_styles");
      } else if (text !== s.style || s.sheetFlags === null) s.sheetFlags = text === null ? null : styleFlags();
      s.style = text;
    }
    // The wide flags while an inline style hides by reading a custom property. Such a style that
    // appeared since the last compile came with a mutation, so its subtree was walked again.
    const sheet = s.sheetFlags;
    s.flags = sheet === null ? null : sheet.wide !== sheet.narrow && inlineReadsCustom() ? sheet.wide : sheet.narrow;
    if (full) s.conditional = conditionalIn(document);
    for (let r = full ? 0 : rootsBefore; r < s.roots.length && !s.conditional; r++) s.conditional = conditionalIn(s.roots[r]);
    // After the flags: what liveState compares depends on them.
    if (full || s.flags !== flagsBefore || s.roots.length < count) {
      s.liveEls = [];
      s.liveStates = [];
      liveScan(0, s.liveEls, s.liveStates);
    } else if (s.roots.length > s.liveRoots) liveScan(s.liveRoots + 1, s.liveEls, s.liveStates);
    s.liveKept = true;
    rememberReaders(full, rootsBefore);
    s.view = view;
    s.media = mediaKey();
    s.moving = moving;
    s.focusKey = s.flags !== null && s.flags.focus ? (focusNow !== null ? focusNow : focusKey()) : null;
    // Roots only grow between compiles; one pruned now may have made room for one added.
    if (full || !s.undefinedKept || s.roots.length < count || s.roots.length !== s.undefinedRoots) {
      s.undefinedElements = undefinedElements();
      s.undefinedRoots = s.roots.length;
      s.undefinedKept = true;
    }
    s.origin = origin;
    s.url = url;
    s.valid = s.style !== null;
    if (full) s.full++;
    else s.incremental++;
  }

  // html_bytes of an incremental compile of an HTML document, kept per element with the epoch it
  // was measured at: an element no mutation marked since counts what it counted then; one never
  // marked since the last full compile is serialised whole by native code (measured on demand: a
  // full compile keeps only the document's total); a marked one adds its own tags (serialised from
  // a shallow copy in an inert document, so no custom-element code runs) to its children's counts.
  // Text is counted as the HTML serialiser escapes it. Serialised whole: raw-text elements (their
  // text is not escaped), templates (whose content no observer sees) and void elements (their tags
  // are all of them).
  const WHOLE = {
    __proto__: null, style: 1, script: 1, xmp: 1, iframe: 1, noembed: 1, noframes: 1, plaintext: 1, noscript: 1, template: 1,
    area: 1, base: 1, br: 1, col: 1, embed: 1, hr: 1, img: 1, input: 1, link: 1, meta: 1, source: 1, track: 1, wbr: 1,
    basefont: 1, bgsound: 1, frame: 1, keygen: 1, param: 1,
  };
  const HTML_NS = "http://www.w3.org/1999/xhtml";
  function textBytes(data) {
    let extra = 0;
    for (let i = 0; i < data.length; i++) {
      const c = data.charCodeAt(i);
      if (c === 38) extra += 4; // &amp;
      else if (c === 60 || c === 62) extra += 3; // &lt; &gt;
      else if (c === 0xa0) extra += 4; // &nbsp; (6 bytes for 2)
    }
    return utf8Length(data) + extra;
  }
  function ownTags(el) {
    if (state.spare === null) state.spare = document.implementation.createHTMLDocument("");
    return byteLength(state.spare.importNode(el, false).outerHTML);
  }
  // `since`: the latest epoch the element or an ancestor was inserted at. A subtree may change
  // while detached, where no observer sees it, so no size measured before it is trusted.
  function htmlBytesOf(el, since) {
    const inserted = state.insertedAt.get(el);
    if (inserted !== undefined && inserted > since) since = inserted;
    const cached = state.html.get(el);
    const marked = state.dirtyAt.get(el);
    if (cached !== undefined && cached[0] >= since && (marked === undefined || marked <= cached[0])) return cached[1];
    let n = -1;
    if (marked !== undefined && !(el.namespaceURI === HTML_NS && WHOLE[el.localName] === 1)) {
      n = ownTags(el);
      // Adjacent text nodes serialise as one string: a pair split between them is one character.
      let text = "";
      for (let k = el.firstChild; k !== null && n >= 0; k = k.nextSibling) {
        const t = k.nodeType;
        if (t === 3) { text += k.data; continue; }
        n += textBytes(text);
        text = "";
        if (t === 1) n += htmlBytesOf(k, since);
        else if (t === 8) n += 7 + utf8Length(k.data); // <!--data-->
        else if (t === 7) n += 5 + utf8Length(k.target) + utf8Length(k.data); // <?target data?>
        else n = -1; // anything else (a CDATA section adopted from XML): measured whole below
      }
      if (n >= 0) n += textBytes(text);
    }
    if (n < 0) n = byteLength(el.outerHTML);
    state.html.set(el, [state.epoch, n]);
    return n;
  }

  // ---- main
  let stats = null;
  // focusKey() as prepare read it, for remember: the walk between them moves no focus.
  let focusNow = null;
  try {
    origin = pageOrigin();
    const url = location.href;
    if (state !== null) {
      const view = viewKey();
      const moving = movingTargets();
      const rootsBefore = state.roots.length;
      const styleNow = state.valid && !forceFull ? styleText() : null;
      incremental = prepare(view, styleNow, url, moving);
      if (!incremental) resetForFull();
      stats = { view, style: incremental ? styleNow : null, rootsBefore, moving };
    }
    const title = pageTitle();
    const langAttr = document.documentElement ? document.documentElement.lang : ""; // D4
    const lang = typeof langAttr === "string" && langAttr !== "" ? langAttr : "en";
    const body = document.body;
    if (body !== null && body !== undefined) {
      const region = newRegion("r_content", "content", null);
      collectRegions(body, "0", region.elements, false, makeScope(body), false);
      if (region.elements.length > 0) finishRegion(region);
    }
    const parts = [];
    add(parts, '{"som_version":"0.1","url":' + q(url) + ',"title":' + q(title) + ',"lang":' + q(lang) + ',"regions":[');
    let partBytes = recording ? byteLength(parts[0]) + 1 : 0; // with the closing "]"
    let written = 0;
    for (let i = 0; i < regions.length; i++) {
      if (regions[i].elements.length === 0) continue;
      if (written++ > 0) { add(parts, ","); partBytes++; }
      partBytes += regionParts(regions[i], parts);
    }
    add(parts, "]");
    let htmlBytes = 0;
    try {
      const root = document.documentElement;
      if (incremental && document instanceof HTMLDocument) htmlBytes = htmlBytesOf(root, 0); // XML serialises otherwise
      else {
        htmlBytes = byteLength(root.outerHTML);
        if (state !== null) state.html.set(root, [state.epoch, htmlBytes]);
      }
    } catch (e) {
      htmlBytes = 0;
    }
    const data = incremental && state.dataKept ? state.data : structuredData();
    if (recording) {
      state.data = data;
      state.dataKept = true;
    }
    const metaHead = ',"meta":{"html_bytes":' + htmlBytes + ',"som_bytes":';
    const tail = ',"element_count":' + counts.elements + ',"interactive_count":' + counts.interactive + "}" +
      (data === null ? "" : ',"structured_data":' + data) + "}";
    if (!recording) {
      const head = joinList(parts, "") + metaHead;
      return { json: head + (byteLength(head) + 1 + byteLength(tail)) + tail, nodes, stats: null };
    }
    remember(!incremental, stats.rootsBefore, stats.view, stats.style, url, stats.moving);
    const counted = { mode: incremental ? "incremental" : "full", full: state.full, incremental: state.incremental, fallbacks: state.fallbacks, roots: state.roots.length };
    // The text is parts, then meta (whose byte counts change with any length change).
    const meta = metaHead + (partBytes + byteLength(metaHead) + 1 + byteLength(tail)) + tail;
    return { parts, meta, nodes, stats: counted };
  } catch (e) {
    if (state !== null) {
      state.valid = false;
      if (e === TOO_DEEP) {
        dropRecord("too_deep");
        return compileSom(budgetMs, null, false);
      }
      // A replay that does not line up (or any surprise in it) is answered by a full compile.
      if (incremental && e !== BUDGET) {
        state.fallbacks++;
        return compileSom(budgetMs, cache, true);
      }
    }
    return { json: null, error: e === BUDGET ? BUDGET.code : "internal error", nodes };
  }
})
